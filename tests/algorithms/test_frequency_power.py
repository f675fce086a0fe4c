"""How much a rare concept counts (stop 41): expert labels keep the paper's 1/f weight, concepts an
extractor found (rules, hybrid) are weighed by 1/sqrt(f). Pure: no database."""

from __future__ import annotations

import numpy as np
import pytest

from embeddings.algorithms.cooccurrence import concept_frequencies
from embeddings.algorithms.methods import FREQUENCY_POWER_EXTRACTED, FREQUENCY_POWER_LABELS, METHODS, BankData, embed
from embeddings.algorithms.problems import problem_vectors, weighting_frequencies
from embeddings.algorithms.similarity import contributions, cosine

# Concept 0 on four problems, concept 1 on one (rare: problem 0's), concept 2 on three.
SETS = [[0, 1], [0], [0, 2], [0, 2], [2]]
N = 3
PUBLISHED = {"text_weight": 0.0, "borrow_k": 0}  # no text: the concept part alone


def test_weighting_frequencies_are_f_to_the_power_and_keep_unused_concepts_at_zero() -> None:
    f = np.array([4.0, 1.0, 0.0, 9.0])
    assert np.array_equal(weighting_frequencies(f, 1.0), f)
    assert np.allclose(weighting_frequencies(f, 0.5), [2.0, 1.0, 0.0, 3.0])
    assert np.allclose(weighting_frequencies(f, 0.0), [1.0, 1.0, 0.0, 1.0])  # an unused concept stays unweighted


def test_the_defaults_weigh_labels_by_1_over_f_and_extracted_concepts_by_1_over_sqrt_f() -> None:
    assert (FREQUENCY_POWER_LABELS, FREQUENCY_POWER_EXTRACTED) == (1.0, 0.5)
    assert all(METHODS[m].defaults["frequency_power"] is None for m in METHODS if METHODS[m].kind == "concepts")
    labels = embed("onehot", BankData(SETS, N), PUBLISHED)
    extracted = embed("onehot", BankData(SETS, N, extracted=True), PUBLISHED)
    assert labels.notes["frequency_power"] == 1.0 and extracted.notes["frequency_power"] == 0.5
    # Problem 0 holds concept 0 (f = 4) and the rare concept 1 (f = 1): 1/(2 f) against 1/(2 sqrt f).
    assert np.allclose(labels.vectors[0], [1 / 8, 1 / 2, 0])
    assert np.allclose(extracted.vectors[0], [1 / 4, 1 / 2, 0])
    # With 1/f the rare concept weighs 4 times concept 0; with 1/sqrt(f) twice. So problem 0 comes nearer
    # the problems it shares concept 0 with once its rare concept counts less.
    for other in (1, 2):
        assert cosine(extracted.vectors, 0, other) > cosine(labels.vectors, 0, other)


def test_a_given_frequency_power_wins_and_a_bad_one_is_refused() -> None:
    forced = embed("onehot", BankData(SETS, N, extracted=True), {**PUBLISHED, "frequency_power": 1.0})
    assert forced.notes["frequency_power"] == 1.0 and np.allclose(forced.vectors[0], [1 / 8, 1 / 2, 0])
    for bad in (-0.5, 3.0):
        with pytest.raises(ValueError, match="frequency_power must be between 0 and 2"):
            embed("onehot", BankData(SETS, N), {**PUBLISHED, "frequency_power": bad})


@pytest.mark.parametrize("extracted", [False, True])
def test_prob2vec_vectors_are_the_weighted_means_the_explanation_assumes(extracted: bool) -> None:
    """The stored problem vectors are exactly problem_vectors with f ** power, so the per-concept "why"
    of a similarity (contributions, with the same weights) still sums to the cosine."""
    out = embed("prob2vec", BankData(SETS, N, extracted=extracted), {**PUBLISHED, "ensemble": 1, "epochs": 20})
    power = out.notes["frequency_power"]
    assert power == (0.5 if extracted else 1.0)
    weights = weighting_frequencies(concept_frequencies(SETS, N), power)
    expected, _ = problem_vectors(out.concept_vectors, SETS, weights)
    assert np.allclose(out.vectors, expected, atol=1e-6)
    parts = contributions(out.concept_vectors, SETS, weights, 0, 2)
    assert sum(parts.values()) == pytest.approx(cosine(out.vectors, 0, 2), abs=1e-5)


def test_the_blend_weighs_its_overlap_part_like_its_prob2vec_part() -> None:
    """The blend's two halves are built from the same weights: its overlap part is exactly the
    extracted-weighted one-hot."""
    data = BankData(SETS, N, extracted=True)
    blend = embed("blend", data, {**PUBLISHED, "weight": 1.0, "ensemble": 1, "epochs": 5})
    overlap = embed("onehot", data, PUBLISHED)
    unit = overlap.vectors / np.linalg.norm(overlap.vectors, axis=1, keepdims=True)
    assert blend.notes["frequency_power"] == 0.5
    assert np.allclose(blend.vectors[:, :N], unit, atol=1e-6)
