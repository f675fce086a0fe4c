"""Train/test splits and the training schemes of the paper's Table 3. Pure: numpy.

For concept i, P_i are the positives and N_i the negatives among the labelled problems of the
training split, and N̄_i is a random subset of N_i with |N̄_i| = |P_i|:

- down-sampling: train on P_i ∪ N̄_i;
- negative pre-training: phase 1 on N_i \\ N̄_i alone (all targets 0), phase 2 on P_i ∪ N̄_i;
- one-shot (transfer): phase 1 on balanced sets P_j ∪ N̄_j of other concepts j, one after
  another (targets for concept j), phase 2 on P_i ∪ N̄_i;
- word selection: any of the above with inputs restricted to the TA-selected words.

The seven rows combine them as the paper's Table 3 does. A problem held out for testing concept
i is never in any phase, including the transfer phases of other concepts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scheme:
    key: str
    label: str
    transfer: bool = False
    negative_pretraining: bool = False
    word_selection: bool = False


SCHEMES: dict[str, Scheme] = {
    s.key: s
    for s in [
        Scheme("down-sampling", "Down-sampling"),
        Scheme("negative-pretraining", "Negative pre-training", negative_pretraining=True),
        Scheme("one-shot", "One-shot learning", transfer=True),
        Scheme("down-sampling+words", "Down-sampling + word selection", word_selection=True),
        Scheme("negative-pretraining+words", "Negative pre-training + word selection", negative_pretraining=True, word_selection=True),
        Scheme("one-shot+words", "One-shot learning + word selection", transfer=True, word_selection=True),
        Scheme(
            "one-shot+negative-pretraining+words",
            "One-shot + negative pre-training + word selection",
            transfer=True,
            negative_pretraining=True,
            word_selection=True,
        ),
    ]
}
BASELINE = "down-sampling"


@dataclass(frozen=True)
class Split:
    """Indices of labelled problems: the training and test positives and negatives of one round."""

    train_pos: np.ndarray
    train_neg: np.ndarray
    test_pos: np.ndarray
    test_neg: np.ndarray

    @property
    def test(self) -> np.ndarray:
        return np.concatenate([self.test_pos, self.test_neg])


@dataclass(frozen=True)
class Phase:
    name: str  # "transfer:<slug>", "negatives" or "balanced"
    problems: np.ndarray
    targets: np.ndarray  # 1.0 = shows the phase's concept


def split_round(positives: np.ndarray, negatives: np.ndarray, rng: np.random.Generator, test_fraction: float) -> Split:
    """A stratified random split: ``test_fraction`` of the positives and of the negatives (at least one each) are held out."""
    if len(positives) < 2 or len(negatives) < 2:
        raise ValueError(f"a split needs at least 2 positives and 2 negatives, got {len(positives)} and {len(negatives)}")
    pos, neg = rng.permutation(positives), rng.permutation(negatives)
    k_pos = min(len(pos) - 1, max(1, round(len(pos) * test_fraction)))
    k_neg = min(len(neg) - 1, max(1, round(len(neg) * test_fraction)))
    return Split(train_pos=pos[k_pos:], train_neg=neg[k_neg:], test_pos=pos[:k_pos], test_neg=neg[:k_neg])


def no_split(positives: np.ndarray, negatives: np.ndarray) -> Split:
    """Every labelled problem in training (the extractor that suggests labels has no test set)."""
    empty = np.zeros(0, dtype=np.int64)
    return Split(train_pos=np.asarray(positives), train_neg=np.asarray(negatives), test_pos=empty, test_neg=empty)


def _balanced(pos: np.ndarray, neg: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(P ∪ N̄ with |N̄| = |P|, the rest of N)."""
    chosen = rng.choice(len(neg), size=min(len(pos), len(neg)), replace=False)
    keep = np.zeros(len(neg), dtype=bool)
    keep[chosen] = True
    return np.concatenate([pos, neg[keep]]), neg[~keep]


def _phase(name: str, problems: np.ndarray, n_pos: int) -> Phase:
    targets = np.zeros(len(problems), dtype=np.float32)
    targets[:n_pos] = 1.0
    return Phase(name, problems.astype(np.int64), targets)


def scheme_phases(
    scheme: Scheme,
    split: Split,
    rng: np.random.Generator,
    sources: list[tuple[str, np.ndarray, np.ndarray]] = (),  # type: ignore[assignment]
) -> list[Phase]:
    """The phases one round trains, in order; ``sources`` are (slug, positives, negatives) of the transfer concepts.

    N̄_i is drawn first and from ``rng`` alone, so every scheme of a round (same seed) uses the same N̄_i.
    """
    balanced, rest = _balanced(split.train_pos, split.train_neg, rng)
    phases = []
    if scheme.transfer:
        held_out = split.test
        for slug, pos_j, neg_j in sources:
            pos_j = np.setdiff1d(pos_j, held_out)
            neg_j = np.setdiff1d(neg_j, held_out)
            if len(pos_j) and len(neg_j):
                problems, _ = _balanced(pos_j, neg_j, rng)
                phases.append(_phase(f"transfer:{slug}", problems, len(pos_j)))
    if scheme.negative_pretraining:
        phases.append(_phase("negatives", rest, 0))
    phases.append(_phase("balanced", balanced, len(split.train_pos)))
    return phases
