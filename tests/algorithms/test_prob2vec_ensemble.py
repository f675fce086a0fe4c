"""Prob2Vec as an ensemble of skip-gram draws (methods._prob2vec). Pure: numpy and torch."""

from __future__ import annotations

import numpy as np
import pytest

from embeddings.algorithms.cooccurrence import concept_frequencies, cooccurrence_counts
from embeddings.algorithms.fallback import unit_rows
from embeddings.algorithms.methods import METHODS, BankData, embed
from embeddings.algorithms.problems import problem_vectors
from embeddings.algorithms.similarity import contributions
from embeddings.algorithms.skipgram import SkipGram

N_CONCEPTS = 24
PLAIN = {"text_weight": 0.0, "borrow_k": 0, "epochs": 60, "dim": 10}  # no fallback: the concept part alone, the paper's 10 units


def module_bank(n_problems: int = 300, seed: int = 0) -> list[list[int]]:
    """Problems of 2-4 concepts, mostly from one of 6 modules of 4 concepts each."""
    rng = np.random.default_rng(seed)
    bank = []
    for _ in range(n_problems):
        module = rng.integers(6)
        own = list(range(4 * module, 4 * module + 4))
        size = int(rng.integers(2, 5))
        picked = {int(c) if rng.random() < 0.8 else int(rng.integers(N_CONCEPTS)) for c in rng.choice(own, size)}
        bank.append(sorted(picked))
    return bank


def scaled_network(sets: list[list[int]], seed: int) -> np.ndarray:
    v = SkipGram(dim=10, epochs=60, l2=1.0, seed=seed).fit(cooccurrence_counts(sets, N_CONCEPTS)).vectors_
    return v / np.mean(np.linalg.norm(v, axis=1))


def cosines(vectors: np.ndarray) -> np.ndarray:
    u = unit_rows(vectors)
    return u @ u.T


def test_prob2vec_ships_an_ensemble_of_five_and_the_blend_one_network() -> None:
    assert METHODS["prob2vec"].defaults["ensemble"] == 5
    assert METHODS["blend"].defaults["ensemble"] == 1


def test_one_member_is_the_papers_single_network() -> None:
    sets = module_bank()
    out = embed("prob2vec", BankData(sets, N_CONCEPTS), {**PLAIN, "ensemble": 1, "seed": 3})
    raw = SkipGram(dim=10, epochs=60, l2=1.0, seed=3).fit(cooccurrence_counts(sets, N_CONCEPTS)).vectors_
    paper, _ = problem_vectors(raw, sets, concept_frequencies(sets, N_CONCEPTS))
    # Scaled to unit mean norm, so the same directions: every cosine is the paper's.
    assert np.allclose(out.concept_vectors, raw / np.mean(np.linalg.norm(raw, axis=1)), atol=1e-5)
    assert np.allclose(cosines(out.vectors), cosines(paper), atol=1e-5)
    assert out.notes["ensemble"] == 1


def test_the_members_are_side_by_side_each_at_unit_mean_norm() -> None:
    sets = module_bank()
    out = embed("prob2vec", BankData(sets, N_CONCEPTS), {**PLAIN, "ensemble": 3, "seed": 7})
    assert out.concept_vectors.shape == (N_CONCEPTS, 30)
    for k in range(3):  # member k is the network of seed 7 + k
        block = out.concept_vectors[:, 10 * k : 10 * (k + 1)]
        assert np.allclose(block, scaled_network(sets, 7 + k), atol=1e-5)
        assert np.isclose(np.mean(np.linalg.norm(block, axis=1)), 1.0, atol=1e-5)
    again = embed("prob2vec", BankData(sets, N_CONCEPTS), {**PLAIN, "ensemble": 3, "seed": 7})
    assert np.array_equal(out.vectors, again.vectors)  # deterministic for a seed
    assert out.notes["ensemble"] == 3 and out.notes["seed"] == 7


def test_the_why_of_a_similarity_stays_exact() -> None:
    sets = module_bank()
    out = embed("prob2vec", BankData(sets, N_CONCEPTS), {**PLAIN, "ensemble": 5})
    freq = concept_frequencies(sets, N_CONCEPTS)
    sims = cosines(out.vectors)
    for i, j in [(0, 1), (2, 40), (7, 123)]:
        parts = contributions(out.concept_vectors, sets, freq, i, j)
        assert np.isclose(sum(parts.values()), sims[i, j], atol=1e-5)


def test_the_ensemble_damps_the_draw() -> None:
    """Two independent draws agree more on the problem similarities as ensembles than as single networks."""
    sets = module_bank(seed=1)
    data = BankData(sets, N_CONCEPTS)
    upper = np.triu_indices(len(sets), 1)

    def agreement(members: int) -> float:
        a = cosines(embed("prob2vec", data, {**PLAIN, "ensemble": members, "seed": 0}).vectors)[upper]
        b = cosines(embed("prob2vec", data, {**PLAIN, "ensemble": members, "seed": 100}).vectors)[upper]
        return float(np.mean(np.abs(a - b)))

    assert agreement(5) < 0.75 * agreement(1)


def test_progress_runs_through_every_member_with_the_first_ones_loss_curve() -> None:
    calls: list[tuple[float, float | None]] = []
    embed("prob2vec", BankData(module_bank(), N_CONCEPTS), {**PLAIN, "ensemble": 3}, on_progress=lambda f, loss: calls.append((f, loss)))
    fractions = [f for f, _ in calls]
    assert fractions == sorted(fractions) and fractions[-1] < 1.0 and fractions[-1] > 0.9
    with_loss = [f for f, loss in calls if loss is not None]
    assert with_loss and max(with_loss) <= 1 / 3 + 1e-9  # the curve is the first network's
    assert len(calls) > len(with_loss)  # later members report progress (the app checks for a cancel there)


@pytest.mark.parametrize("members", [0, -2])
def test_an_ensemble_of_no_network_is_refused(members: int) -> None:
    with pytest.raises(ValueError, match="ensemble must be at least 1"):
        embed("prob2vec", BankData(module_bank(40), N_CONCEPTS), {**PLAIN, "ensemble": members})
