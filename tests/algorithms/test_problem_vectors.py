from __future__ import annotations

import numpy as np
import pytest

from embeddings.algorithms.cooccurrence import as_concept_sets, concept_frequencies
from embeddings.algorithms.problems import concept_weights, onehot_vectors, problem_vectors
from embeddings.algorithms.similarity import contributions, cosine, normalize, top_k

V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
SETS = [[0, 1], [1, 2], [2]]
F = np.array([1, 2, 2])  # = concept_frequencies(SETS, 3)


def test_one_over_f_weighting_by_hand() -> None:
    assert concept_frequencies(SETS, 3).tolist() == F.tolist()
    e, zero = problem_vectors(V, SETS, F)
    assert e.dtype == np.float32 and zero == []
    np.testing.assert_allclose(e[0], [(1 / 1 + 0 / 2) / 2, (0 / 1 + 1 / 2) / 2])  # (V0/1 + V1/2) / 2
    np.testing.assert_allclose(e[1], [(0 + 1 / 2) / 2, (1 / 2 + 1 / 2) / 2])  # (V1/2 + V2/2) / 2
    np.testing.assert_allclose(e[2], [1 / 2, 1 / 2])  # V2 / 2
    assert concept_weights([1, 2], F) == {1: 0.25, 2: 0.25}


def test_empty_sets_get_zero_rows_reported_never_nan() -> None:
    sets = [[], [0, 1], [3], [3, 3], [1, 1, 0]]
    f = np.array([1, 2, 0, 0])  # concept 3 has frequency 0 here: skipped
    v = np.arange(8, dtype=float).reshape(4, 2) + 1
    e, zero = problem_vectors(v, sets, f)
    assert not np.isnan(e).any()
    assert zero == [0, 2, 3]
    assert not e[[0, 2, 3]].any()
    # duplicates count once: [1, 1, 0] is the set {0, 1}
    np.testing.assert_allclose(e[4], e[1])
    # a zero-frequency concept is skipped and not counted in |C_i|
    e2, _ = problem_vectors(v, [[0, 3]], f)
    np.testing.assert_allclose(e2[0], v[0] / 1)
    # a concept whose vector is zero gives a zero row too, reported
    _, zero = problem_vectors(np.zeros((4, 2)), [[0, 1]], f)
    assert zero == [0]
    assert problem_vectors(v, [], f)[0].shape == (0, 2)


def test_matches_a_plain_loop_on_random_sets() -> None:
    rng = np.random.default_rng(0)
    sets = [[int(x) for x in rng.integers(0, 15, rng.integers(0, 7))] for _ in range(300)]
    f = concept_frequencies(sets, 15)
    f[3] = 0
    v = rng.standard_normal((15, 4))
    expected = np.zeros((300, 4))
    for i, s in enumerate(sets):
        usable = [c for c in set(s) if f[c] > 0]
        if usable:
            expected[i] = sum(v[c] / f[c] for c in usable) / len(usable)
    e, zero = problem_vectors(v, as_concept_sets(sets, 15), f)
    np.testing.assert_allclose(e, expected, rtol=1e-5, atol=1e-7)
    assert zero == [i for i in range(300) if not expected[i].any()]


@pytest.mark.parametrize("with_duplicates", [False, True])
def test_blocks_of_problems_give_the_same_vectors_bit_for_bit(monkeypatch: pytest.MonkeyPatch, with_duplicates: bool) -> None:
    """problem_vectors works through each set size's problems in blocks (so that its temporaries stay
    in cache on large banks): blocks of 7 problems, many per set size, give exactly what one block does,
    on both paths (duplicates and zero-frequency concepts take the masked one)."""
    from embeddings.algorithms import problems

    rng = np.random.default_rng(1)
    sets = [[int(x) for x in rng.integers(0, 15, rng.integers(0, 6))] for _ in range(400)]
    sets = [s + s[:1] if with_duplicates and i % 5 == 0 else s for i, s in enumerate(sets)]
    f = concept_frequencies(sets, 15)
    if with_duplicates:
        f[3] = 0
    v = rng.standard_normal((15, 6))
    monkeypatch.setattr(problems, "_BLOCK", 10**9)
    whole, whole_zero = problem_vectors(v, as_concept_sets(sets, 15), f)
    monkeypatch.setattr(problems, "_BLOCK", 7)
    blocked, blocked_zero = problem_vectors(v, as_concept_sets(sets, 15), f)
    assert max(len(rows) for rows, _, _ in as_concept_sets(sets, 15).groups) > 7 * 5  # many blocks per size
    assert np.array_equal(whole, blocked) and whole_zero == blocked_zero


def test_onehot_reference_is_the_same_average_with_identity_vectors() -> None:
    oh = onehot_vectors(SETS, 3, F)
    np.testing.assert_allclose(oh, [[0.5, 0.25, 0], [0, 0.25, 0.25], [0, 0, 0.5]])
    np.testing.assert_allclose(oh, problem_vectors(np.eye(3), SETS, F)[0])


def test_normalize_and_cosine() -> None:
    e = np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 2.0]])
    u = normalize(e)
    np.testing.assert_allclose(u, [[0.6, 0.8], [0, 0], [0, 1]])
    assert cosine(e, 0, 2) == pytest.approx(0.8)
    assert cosine(e, 0, 1) == 0.0  # zero row: defined as 0
    assert cosine(e, 2, 2) == pytest.approx(1.0)


def test_top_k_excludes_self_and_zero_rows_and_breaks_ties_by_index() -> None:
    e = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [2.0, 2.0], [1.0, 0.1], [-1.0, 0.0]])
    idx, scores = top_k(e, 0, 3)
    assert idx.tolist() == [5, 2, 4]  # 2 and 4 tie (same direction): lower index first
    np.testing.assert_allclose(scores, [1 / np.sqrt(1.01), 1 / np.sqrt(2), 1 / np.sqrt(2)])
    idx, _ = top_k(e, 0, 10)
    assert idx.tolist() == [5, 2, 4, 1, 6]  # 3 (zero) and 0 (self) never appear
    assert top_k(e, 3, 2)[0].size == 0  # a zero row has no neighbours
    assert top_k(e, 0, 0)[0].size == 0
    idx, _ = top_k(e, 2, 1)
    assert idx.tolist() == [4]


def test_contributions_sum_to_the_cosine() -> None:
    rng = np.random.default_rng(5)
    v = rng.standard_normal((10, 4))
    sets = [[0, 1, 2], [2, 3], [4, 5, 6, 7], [], [8, 8, 9]]
    f = concept_frequencies(sets, 10)
    e, _ = problem_vectors(v, sets, f)
    for i, j in [(0, 1), (0, 2), (1, 4), (0, 0)]:
        contrib = contributions(v, sets, f, i, j)
        assert set(contrib) == set(sets[i]) | set(sets[j])
        assert sum(contrib.values()) == pytest.approx(cosine(e, i, j), abs=1e-6)
        assert contrib == pytest.approx(contributions(v, sets, f, j, i))  # symmetric
    assert sum(contributions(v, sets, f, 0, 0).values()) == pytest.approx(1.0)
    assert contributions(v, sets, f, 0, 3) == {0: 0.0, 1: 0.0, 2: 0.0}  # zero problem: cosine 0
    # the same with the flattened sets
    assert contributions(v, as_concept_sets(sets, 10), f, 0, 1) == pytest.approx(contributions(v, sets, f, 0, 1))


def test_contributions_by_hand() -> None:
    # E_0 = (V0 + V1/2)/2 = (0.5, 0.25), E_2 = V2/2 = (0.5, 0.5); |E_0| |E_2| = sqrt(0.3125) sqrt(0.5)
    c = contributions(V, SETS, F, 0, 2)
    denom = np.sqrt(0.3125 * 0.5)
    # concept 0: half of a_0 v_0 . E_2 = 0.5 * 0.5 * 0.5; concept 1: 0.5 * 0.25 * 0.5;
    # concept 2: half of b_2 v_2 . E_0 = 0.5 * 0.5 * 0.75
    assert c[0] == pytest.approx(0.5 * 0.5 * 0.5 / denom)
    assert c[1] == pytest.approx(0.5 * 0.25 * 0.5 / denom)
    assert c[2] == pytest.approx(0.5 * 0.5 * 0.75 / denom)
