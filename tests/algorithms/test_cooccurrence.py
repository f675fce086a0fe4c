from __future__ import annotations

import numpy as np
import pytest

from embeddings.algorithms.cooccurrence import as_concept_sets, concept_frequencies, cooccurrence_counts, expand_pairs

# Three problems over 4 concepts; the third lists concept 3 twice (a set: counts once).
SETS = [[0, 1, 2], [2, 1], [3, 2, 3]]


def test_frequencies_count_problems_not_mentions() -> None:
    assert concept_frequencies(SETS, 4).tolist() == [1, 2, 3, 1]
    assert concept_frequencies(SETS, 6).tolist() == [1, 2, 3, 1, 0, 0]


def test_cooccurrence_counts_on_a_hand_example() -> None:
    c = cooccurrence_counts(SETS, 4)
    # problem 0: {0,1},{0,2},{1,2}; problem 1: {1,2}; problem 2: {2,3}; each in both orders.
    expected = np.array(
        [
            [0, 1, 1, 0],
            [1, 0, 2, 0],
            [1, 2, 0, 1],
            [0, 0, 1, 0],
        ],
        dtype=float,
    )
    assert c.dtype == np.float64
    np.testing.assert_array_equal(c, expected)
    assert c.sum() == 2 * (3 + 1 + 1)  # ordered training pairs


def test_empty_and_singleton_sets_add_no_pairs() -> None:
    c = cooccurrence_counts([[], [1], [0, 1], []], 3)
    assert c.sum() == 2 and c[0, 1] == c[1, 0] == 1
    assert concept_frequencies([[], []], 2).tolist() == [0, 0]
    assert cooccurrence_counts([], 2).shape == (2, 2)


def test_matches_a_plain_loop_on_random_sets() -> None:
    rng = np.random.default_rng(3)
    sets = [[int(x) for x in rng.integers(0, 12, rng.integers(0, 8))] for _ in range(400)]
    f = np.zeros(12, dtype=int)
    c = np.zeros((12, 12))
    for s in sets:
        u = set(s)
        for a in u:
            f[a] += 1
            for b in u:
                if a != b:
                    c[a, b] += 1
    cs = as_concept_sets(sets, 12)
    assert cs.has_duplicates
    np.testing.assert_array_equal(concept_frequencies(cs, 12), f)
    np.testing.assert_array_equal(cooccurrence_counts(cs, 12), c)
    np.testing.assert_array_equal(cooccurrence_counts(sets, 12), c)


def test_rejects_ids_out_of_range() -> None:
    with pytest.raises(ValueError):
        cooccurrence_counts([[0, 4]], 4)
    with pytest.raises(ValueError):
        concept_frequencies([[-1]], 4)
    with pytest.raises(ValueError):
        concept_frequencies(as_concept_sets([[0]], 3), 4)


def test_expand_pairs_lists_each_pair_count_times() -> None:
    pairs = expand_pairs(cooccurrence_counts(SETS, 4))
    assert pairs.shape == (10, 2)
    assert sorted(map(tuple, pairs.tolist())) == sorted(
        [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (1, 2), (2, 1), (2, 3), (3, 2)]
    )
