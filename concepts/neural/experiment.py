"""The paper's Table 3 experiment and the extractor that suggests labels. Pure: numpy, torch.

For every concept and scheme, R rounds of random stratified train/test splits of the labelled
problems: each round trains a fresh network on its phases (:mod:`.schemes`) and counts, on its
test split, the FN ratio (positives predicted absent / positives) and the FP ratio (negatives
predicted present / negatives). Rounds are paired across schemes: round r of every scheme uses
the same split, the same N̄_i and the same initial weights, so differences between rows come
from the schemes alone.
"""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import torch

from concepts.neural.features import bag_of_words, initial_embedding, vocabulary
from concepts.neural.network import Batch, RoundNets, predict, train
from concepts.neural.schemes import BASELINE, SCHEMES, Phase, Scheme, Split, no_split, scheme_phases, split_round


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 100  # full-batch Adam steps on the balanced phase
    pretrain_epochs: int = 50  # steps on each negative or transfer phase
    lr: float = 0.01
    hidden: int = 60
    test_fraction: float = 0.2
    transfer_sources: int = 3  # other concepts (most positives first) a one-shot scheme learns from
    min_count: int = 2  # a word must appear in this many problems to be an input
    threshold: float = 0.5


@dataclass(frozen=True)
class ExtractorInputs:
    """Everything the experiment reads; indices are rows of ``token_lists`` (the whole bank)."""

    token_lists: Sequence[Sequence[str]]
    labels: Sequence[frozenset[str] | None]  # None: the problem has no expert labels
    word_vectors: Mapping[str, np.ndarray]  # word -> vector of length ``dim``
    dim: int
    selected_words: frozenset[str] = frozenset()
    word_vectors_source: str = ""


class Features:
    """Bag-of-words matrices over all words and over the selected words, built once per experiment."""

    def __init__(self, inputs: ExtractorInputs, min_count: int) -> None:
        self.inputs = inputs
        self._cache: dict[bool, tuple[list[str], torch.Tensor]] = {}
        self.min_count = min_count

    def get(self, word_selection: bool) -> tuple[list[str], torch.Tensor]:
        if word_selection not in self._cache:
            words = self.inputs.selected_words if word_selection else None
            if word_selection and not words:
                raise ValueError("word selection schemes need selected words: tick some on the word selection page")
            # Selected words are kept however rare: a TA chose them.
            vocab = vocabulary(self.inputs.token_lists, min_count=1 if word_selection else self.min_count, words=words)
            if not vocab:
                raise ValueError("no input words: the bank's problems share no words" + (" with the selection" if words else ""))
            self._cache[word_selection] = (vocab, torch.from_numpy(bag_of_words(self.inputs.token_lists, vocab)))
        return self._cache[word_selection]


def _key(*parts: int | str) -> list[int]:
    return [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts]


def _torch_generator(*parts: int | str) -> torch.Generator:
    seed = int(np.random.default_rng(_key(*parts)).integers(2**62))
    return torch.Generator().manual_seed(seed)


def _nets(vocab: list[str], inputs: ExtractorInputs, seeds: list[tuple[int | str, ...]], hidden: int) -> RoundNets:
    generators = [_torch_generator(*s) for s in seeds]
    embeddings = torch.stack([initial_embedding(vocab, inputs.word_vectors, inputs.dim, g) for g in generators])
    return RoundNets(embeddings, generators, hidden=hidden)


def train_phases(nets: RoundNets, bags: torch.Tensor, phases: list[list[Phase]], config: TrainConfig) -> None:
    """Train each round's phases in order; rounds missing a phase (a transfer concept with no
    training problems left) sit that phase out."""
    order: list[str] = []
    for round_phases in phases:
        for phase in round_phases:
            if phase.name not in order:
                order.append(phase.name)
    order.sort(key=lambda name: (name == "balanced", name == "negatives"))  # transfer, negatives, balanced
    for name in order:
        chosen = [next((p for p in rp if p.name == name), None) for rp in phases]
        batch = Batch.pad(
            [p.problems.tolist() if p else [] for p in chosen],
            [p.targets.tolist() if p else [] for p in chosen],
        )
        epochs = config.epochs if name == "balanced" else config.pretrain_epochs
        train(nets, bags, batch, epochs=epochs, lr=config.lr)


@dataclass
class ConceptData:
    slug: str
    positives: np.ndarray
    negatives: np.ndarray
    sources: list[tuple[str, np.ndarray, np.ndarray]] = field(default_factory=list)


def concept_data(inputs: ExtractorInputs, slugs: Iterable[str], transfer_sources: int) -> list[ConceptData]:
    """Positives and negatives among the labelled problems, and each concept's transfer sources."""
    labelled = np.array([i for i, labels in enumerate(inputs.labels) if labels is not None], dtype=np.int64)
    if len(labelled) == 0:
        raise ValueError("no problem has expert labels: the extractor learns from and is judged against them")
    counts: dict[str, int] = {}
    for i in labelled:
        for slug in inputs.labels[i]:  # type: ignore[union-attr]
            counts[slug] = counts.get(slug, 0) + 1

    def split_of(slug: str) -> tuple[np.ndarray, np.ndarray]:
        has = np.array([slug in inputs.labels[i] for i in labelled], dtype=bool)  # type: ignore[operator]
        return labelled[has], labelled[~has]

    out = []
    for slug in slugs:
        pos, neg = split_of(slug)
        if len(pos) < 2 or len(neg) < 2:
            raise ValueError(
                f"concept {slug!r} has {len(pos)} labelled positive and {len(neg)} negative problems; it needs at least 2 of each"
            )
        others = sorted((s for s in counts if s != slug and counts[s] >= 2), key=lambda s: (-counts[s], s))[:transfer_sources]
        out.append(ConceptData(slug, pos, neg, [(s, *split_of(s)) for s in others]))
    return out


def _ratios(probabilities: torch.Tensor, split: Split, threshold: float) -> tuple[float, float]:
    present = (probabilities >= threshold).numpy()
    n_pos = len(split.test_pos)
    fn = float((~present[:n_pos]).sum()) / n_pos
    fp = float(present[n_pos:].sum()) / len(split.test_neg)
    return fn, fp


def scheme_rounds(
    inputs: ExtractorInputs,
    features: Features,
    data: ConceptData,
    scheme: Scheme,
    rounds: int,
    seed: int,
    config: TrainConfig,
    batched: bool = True,
) -> tuple[list[float], list[float]]:
    """FN and FP ratios of every round of one scheme on one concept."""
    vocab, bags = features.get(scheme.word_selection)
    splits = [split_round(data.positives, data.negatives, np.random.default_rng(_key(seed, data.slug, r, "split")), config.test_fraction) for r in range(rounds)]
    phases = [scheme_phases(scheme, splits[r], np.random.default_rng(_key(seed, data.slug, r, "phases")), data.sources) for r in range(rounds)]
    seeds = [(seed, data.slug, r, "init") for r in range(rounds)]
    groups = [list(range(rounds))] if batched else [[r] for r in range(rounds)]
    fns, fps = [], []
    for group in groups:
        nets = _nets(vocab, inputs, [seeds[r] for r in group], config.hidden)
        train_phases(nets, bags, [phases[r] for r in group], config)
        tests = Batch.pad([splits[r].test.tolist() for r in group], [[] for _ in group])
        probabilities = predict(nets, bags, tests.problems)
        for row, r in enumerate(group):
            fn, fp = _ratios(probabilities[row, : len(splits[r].test)], splits[r], config.threshold)
            fns.append(fn)
            fps.append(fp)
    return fns, fps


def _mean_sd(values: list[float]) -> tuple[float, float]:
    array = np.asarray(values, dtype=np.float64)
    return float(array.mean()), float(array.std(ddof=1)) if len(array) > 1 else 0.0


def _reduction(baseline: float, value: float) -> float | None:
    return None if baseline == 0 else (baseline - value) / baseline


def run_experiment(
    inputs: ExtractorInputs,
    concepts: Sequence[str],
    schemes: Sequence[str] = tuple(SCHEMES),
    rounds: int = 100,
    seed: int = 0,
    config: TrainConfig = TrainConfig(),
    batched: bool = True,
    on_progress: Callable[[float], None] | None = None,
    features: Features | None = None,
) -> dict:
    """The Table 3 results as a JSON-ready dict (see the README for its shape).

    ``on_progress(fraction)`` is called after each (concept, scheme); it may raise to cancel.
    """
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    unknown = [s for s in schemes if s not in SCHEMES]
    if unknown:
        raise ValueError(f"unknown schemes {unknown}; known: {', '.join(SCHEMES)}")
    if not concepts:
        raise ValueError("choose at least one concept")
    data = concept_data(inputs, concepts, config.transfer_sources)
    features = features or Features(inputs, config.min_count)
    for key in schemes:
        features.get(SCHEMES[key].word_selection)  # fail early, before any training
    table: dict[str, dict] = {}
    done, total = 0, len(data) * len(schemes)
    for key in schemes:
        table[key] = {"label": SCHEMES[key].label, "concepts": {}}
    for concept in data:
        for key in schemes:
            fns, fps = scheme_rounds(inputs, features, concept, SCHEMES[key], rounds, seed, config, batched)
            fn, fn_sd = _mean_sd(fns)
            fp, fp_sd = _mean_sd(fps)
            table[key]["concepts"][concept.slug] = {"fn": fn, "fn_sd": fn_sd, "fp": fp, "fp_sd": fp_sd}
            done += 1
            if on_progress:
                on_progress(done / total)
    for key, row in table.items():
        cells = row["concepts"].values()
        row["fn"] = float(np.mean([c["fn"] for c in cells]))
        row["fp"] = float(np.mean([c["fp"] for c in cells]))
    if BASELINE in table:
        for row in table.values():
            row["fn_reduction"] = _reduction(table[BASELINE]["fn"], row["fn"])
            row["fp_reduction"] = _reduction(table[BASELINE]["fp"], row["fp"])
    best = {
        c.slug: min(schemes, key=lambda k: (table[k]["concepts"][c.slug]["fn"] + table[k]["concepts"][c.slug]["fp"], list(schemes).index(k)))
        for c in data
    }
    return {
        "rounds": rounds,
        "seed": seed,
        "config": asdict(config),
        "word_vectors": inputs.word_vectors_source,
        "vocabulary": {"all": len(features.get(False)[0]), "selected": len(features.get(True)[0]) if inputs.selected_words else 0},
        "concepts": {c.slug: {"positives": len(c.positives), "negatives": len(c.negatives)} for c in data},
        "schemes": table,
        "best": best,
    }


def fit_extractor(
    inputs: ExtractorInputs,
    slug: str,
    scheme: str,
    seed: int = 0,
    config: TrainConfig = TrainConfig(),
    members: int = 5,
    features: Features | None = None,
) -> np.ndarray:
    """Probabilities (n_problems,) that each bank problem shows ``slug``: the mean of ``members``
    networks trained by ``scheme`` on every labelled problem (no held-out split). Pass the
    experiment's ``features`` to reuse its bags of words."""
    (data,) = concept_data(inputs, [slug], config.transfer_sources)
    vocab, bags = (features or Features(inputs, config.min_count)).get(SCHEMES[scheme].word_selection)
    split = no_split(data.positives, data.negatives)
    phases = [scheme_phases(SCHEMES[scheme], split, np.random.default_rng(_key(seed, slug, m, "fit")), data.sources) for m in range(members)]
    nets = _nets(vocab, inputs, [(seed, slug, m, "fit-init") for m in range(members)], config.hidden)
    train_phases(nets, bags, phases, config)
    everything = torch.arange(len(inputs.token_lists))
    return predict(nets, bags, everything).mean(0).numpy()


def word_vector_table(
    token_lists: Sequence[Sequence[str]], glove_path: str | None, dim: int = 300, seed: int = 0
) -> tuple[dict[str, np.ndarray], int, str]:
    """(word -> vector, dimension, source) for the bank's words: GloVe from ``glove_path`` if
    given (its own dimension), else GloVe of ``dim`` trained on the bank."""
    from embeddings.algorithms.text import word_vectors  # pure code shared with the text baselines

    params = {} if glove_path else {"dim": dim}
    vectors = word_vectors(token_lists, glove_path, seed=seed, **params)
    table = {w: vectors.vectors[i] for i, w in enumerate(vectors.vocab)}
    width = vectors.vectors.shape[1] if len(vectors.vocab) else dim
    return table, int(width), vectors.source
