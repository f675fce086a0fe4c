from __future__ import annotations

import numpy as np
import pytest

from embeddings.algorithms.metrics import nearest_concepts, similarity_gaps, triplet_accuracy, undefined_triplets

E = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.0, 0.0], [2.0, 0.2]])


def test_triplet_accuracy_by_hand() -> None:
    triplets = np.array(
        [
            [0, 1, 2],  # right: cos 0.995 > 0
            [0, 2, 1],  # wrong
            [0, 1, 4],  # tie (1 and 4 have the same direction): wrong
            [0, 1, 3],  # touches a zero row: wrong
        ]
    )
    assert triplet_accuracy(E, triplets) == pytest.approx(1 / 4)
    assert undefined_triplets(E, triplets).tolist() == [False, False, False, True]
    gaps = similarity_gaps(E, triplets)
    c = 1 / np.sqrt(1.01)
    np.testing.assert_allclose(gaps, [c, -c, 0.0, c], atol=1e-12)
    assert triplet_accuracy(E, [[1, 0, 2]]) == 1.0
    with pytest.raises(ValueError):
        triplet_accuracy(E, np.zeros((0, 3), dtype=int))


def test_nearest_concepts_by_cosine() -> None:
    idx, scores = nearest_concepts(E, 0, 2)
    assert idx.tolist() == [1, 4]
    np.testing.assert_allclose(scores, [1 / np.sqrt(1.01)] * 2)
