"""The learned half of the hybrid concept source (concepts/learned.py). Pure: no database."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from concepts import learned

FAST = learned.LearnedConfig(dim=16, iterations=40, folds=3)


def _bank(n: int = 60, seed: int = 0) -> tuple[list[str], np.ndarray]:
    """Problems about coins (concept 0) or about waiting times (concept 1), worded many ways."""
    rng = np.random.default_rng(seed)
    coin = ["toss a coin {k} times and count heads", "flip {k} fair coins; probability of tails", "a coin lands heads {k} times in a row"]
    wait = ["the waiting time is exponential with mean {k}", "time until the next bus, mean {k} minutes", "lifetime of a bulb averages {k} hours"]
    texts, truth = [], np.zeros((n, 2), dtype=np.float32)
    for i in range(n):
        kind = i % 2
        texts.append(rng.choice(coin if kind == 0 else wait).format(k=int(rng.integers(2, 9))))
        truth[i, kind] = 1
    return texts, truth


def test_a_concept_the_rules_miss_is_learned_from_labels() -> None:
    texts, truth = _bank()
    hits = np.zeros_like(truth, dtype=bool)
    hits[:, 1] = truth[:, 1] > 0  # the rules find concept 1 already; concept 0 is missed entirely
    result = learned.cross_fit(texts, list(range(len(texts))), truth, hits, FAST)
    found = np.array([0 in s for s in result.predicted])
    assert found[truth[:, 0] > 0].mean() > 0.9 and not found[truth[:, 0] == 0].any()
    assert not any(1 in s for s in result.predicted)  # never repeats what a rule already found
    assert 0 in result.learned_concepts and np.isfinite(result.thresholds[0])


def test_thresholds_against_the_rules_or_for_the_model_alone() -> None:
    """Rules written from the labelled problems find all of them; new problems reworded escape the rules.
    Against the rules' hits (the default) the rules look perfect and nothing is learned; chosen for the
    model alone, the concepts are added to the new problems (concepts/learned.py, stop 33)."""
    texts, truth = _bank(60)
    extra = ["flip a coin 5 times and count heads", "the waiting time for a call is exponential with mean 3"]
    hits = np.zeros((62, 2), dtype=bool)
    hits[:60] = truth > 0  # the rules were written from the labelled problems: they find every label
    default = learned.cross_fit(texts + extra, list(range(60)), truth, hits, FAST)
    assert default.predicted == [set()] * 62 and np.isinf(default.thresholds).all()
    alone = learned.cross_fit(texts + extra, list(range(60)), truth, hits, replace(FAST, thresholds_against_rules=False))
    assert 0 in alone.predicted[60] and 1 in alone.predicted[61] and np.isfinite(alone.thresholds).all()
    assert all(not s for s in alone.predicted[:60])  # never repeats what a rule already found


def test_labelled_problems_are_scored_by_models_that_never_saw_their_labels() -> None:
    # Labels that no text can predict: out of fold, the model must not reproduce them.
    texts, _ = _bank(80)
    rng = np.random.default_rng(5)
    noise = (rng.random((80, 1)) < 0.5).astype(np.float32)
    result = learned.cross_fit(texts, list(range(80)), noise, np.zeros((80, 1), bool), FAST)
    predicted = np.array([0 in s for s in result.predicted])
    agreement = (predicted == (noise[:, 0] > 0)).mean()
    assert agreement < 0.75  # a model that had seen the labels would match them almost exactly


def test_unlabelled_problems_are_scored_by_the_model_fitted_on_every_label() -> None:
    texts, truth = _bank(60)
    extra = ["flip a coin 5 times and count heads", "the waiting time for a call is exponential with mean 3"]
    hits = np.zeros((62, 2), dtype=bool)
    result = learned.cross_fit(texts + extra, list(range(60)), truth, hits, FAST)
    assert 0 in result.predicted[60] and 1 in result.predicted[61]


@pytest.mark.parametrize(
    "probabilities, truth, rules, expected",
    [
        ([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0], [0, 0, 0, 0], 0.8),  # a clean cut between 0.8 and 0.2
        ([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0], [1, 1, 0, 0], np.inf),  # the rule finds everything: add nothing
        ([0.9, 0.8, 0.7, 0.1], [1, 0, 1, 0], [0, 0, 0, 0], 0.7),  # one FP is worth two TPs by F1
        ([0.5, 0.5, 0.5, 0.1], [1, 0, 0, 0], [0, 0, 0, 0], np.inf),  # tied probabilities cannot be cut apart
        ([0.9, 0.1, 0.1, 0.1], [1, 0, 0, 0], [0, 0, 0, 0], np.inf),  # too few positives (min 2 here)
        # The positives ranked last: adding the concept everywhere has F1 0.57 > 0, the rule's, but adds
        # three wrong for two right.
        ([0.9, 0.8, 0.7, 0.2, 0.1], [0, 0, 0, 1, 1], [0, 0, 0, 0, 0], np.inf),
        # Every cut adds more wrong than right (1 of 3 at 0.7, 2 of 5 at 0.1): F1 alone would take 0.7.
        ([0.9, 0.8, 0.7, 0.6, 0.1], [0, 0, 1, 0, 1], [0, 0, 0, 0, 0], np.inf),
        ([0.9, 0.8, 0.7, 0.6, 0.1], [1, 0, 1, 0, 0], [0, 0, 0, 0, 0], 0.7),  # 2 of 3 right: allowed
    ],
)
def test_best_thresholds(probabilities: list[float], truth: list[int], rules: list[int], expected: float) -> None:
    min_positives = 2
    got = learned.best_thresholds(
        np.array(probabilities)[:, None], np.array(truth)[:, None], np.array(rules, dtype=bool)[:, None], min_positives
    )
    assert got[0] == pytest.approx(expected) if np.isfinite(expected) else np.isinf(got[0])


def test_a_rare_concept_the_text_cannot_predict_is_not_added_to_every_problem() -> None:
    # Three labelled positives the rules never find, on problems like any other. Before the precision
    # floor, the best-F1 cut sat under every probability (any addition beats the rule's F1 of 0) and
    # the concept was added to every unlabelled problem.
    texts, truth = _bank(60)
    rare = np.zeros((60, 1), dtype=np.float32)
    rare[[7, 22, 41], 0] = 1
    truth = np.hstack([truth, rare])
    hits = np.zeros((90, 3), dtype=bool)
    hits[:60, :2] = truth[:, :2] > 0  # the rules find the two common concepts
    more, _ = _bank(30, seed=1)
    result = learned.cross_fit(texts + more, list(range(60)), truth, hits, FAST)
    added = [2 in s for s in result.predicted]
    assert sum(added[:60]) <= 3 and sum(added[60:]) <= 3, f"added to {sum(added)} of 90 problems"


def test_without_enough_labels_the_learned_extractor_adds_nothing() -> None:
    texts, truth = _bank(8)
    result = learned.cross_fit(texts, list(range(8)), truth, np.zeros((8, 2), bool), FAST)
    assert result.predicted == [set()] * 8 and result.learned_concepts == []
    with pytest.raises(ValueError, match="labels have 3 concepts, rule hits 2"):
        learned.cross_fit(texts, list(range(8)), np.zeros((8, 3)), np.zeros((8, 2), bool), FAST)


def test_an_empty_bank_learns_and_adds_nothing() -> None:
    # No problems, two concepts: the hits are (0, 2), as the hybrid run builds them for an empty bank.
    result = learned.cross_fit([], [], np.zeros((0, 2), np.float32), np.zeros((0, 2), bool), FAST)
    assert result.predicted == [] and result.learned_concepts == [] and result.probabilities.shape == (0, 2)
    assert np.isinf(result.thresholds).all() and result.thresholds.shape == (2,)


def test_it_is_deterministic() -> None:
    texts, truth = _bank(40)
    hits = np.zeros_like(truth, dtype=bool)
    a = learned.cross_fit(texts, list(range(40)), truth, hits, FAST)
    b = learned.cross_fit(texts, list(range(40)), truth, hits, FAST)
    assert a.predicted == b.predicted and np.array_equal(a.probabilities, b.probabilities)
