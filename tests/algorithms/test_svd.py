from __future__ import annotations

import math

import numpy as np
import pytest

from embeddings.algorithms.svd import SVD_VARIANTS, ppmi, subsample, svd_embed, svd_vectors

# T = 8, row sums = column sums = (3, 3, 2)
C = np.array([[0, 2, 1], [2, 0, 1], [1, 1, 0]], dtype=float)


def test_ppmi_by_hand() -> None:
    m = ppmi(C)
    assert m[0, 1] == pytest.approx(math.log(2 * 8 / (3 * 3)))  # log 16/9
    assert m[0, 2] == pytest.approx(math.log(1 * 8 / (3 * 2)))  # log 4/3
    assert m[2, 1] == pytest.approx(math.log(1 * 8 / (2 * 3)))
    assert np.all(np.diag(m) == 0)  # C_ii = 0 -> 0, not -inf
    np.testing.assert_allclose(m, m.T)


def test_shifted_ppmi_by_hand() -> None:
    m = ppmi(C, shift=1.5)
    assert m[0, 1] == pytest.approx(math.log(16 / 9) - math.log(1.5))
    assert m[0, 2] == 0.0  # log 4/3 < log 1.5: clipped


def test_context_distribution_smoothing_by_hand() -> None:
    m = ppmi(C, cds=0.5)
    norm = 2 * math.sqrt(3) + math.sqrt(2)
    p_a = [math.sqrt(3) / norm, math.sqrt(3) / norm, math.sqrt(2) / norm]
    assert m[0, 1] == pytest.approx(math.log(2 / (3 * p_a[1])))
    assert m[0, 2] == pytest.approx(max(0.0, math.log(1 / (3 * p_a[2]))))
    assert m[2, 0] == pytest.approx(math.log(1 / (2 * p_a[0])))


def test_ppmi_of_an_empty_matrix_is_zero() -> None:
    assert not ppmi(np.zeros((3, 3))).any()


def test_subsample_formula() -> None:
    # p = row sums / T = (3, 3, 2) / 8; t_abs = 0.5 * 3/8; keep = min(1, sqrt(t_abs / p)).
    keep = np.minimum(1, np.sqrt(0.5 * (3 / 8) / (np.array([3, 3, 2]) / 8)))
    np.testing.assert_allclose(subsample(C, 0.5), C * keep[:, None] * keep[None, :])
    np.testing.assert_allclose(subsample(C, 1.0), C)


def _random_ppmi(n: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.poisson(3, (n, n)).astype(float)
    c = c + c.T
    np.fill_diagonal(c, 0)
    return ppmi(c)


def test_eigenvalue_weighting_exponent() -> None:
    m = _random_ppmi()
    s = np.linalg.svd(m, compute_uv=False)[:4]
    for eig in (0.0, 0.5, 1.0):
        w = svd_vectors(m, 4, eig=eig)
        assert w.shape == (12, 4)
        # U is orthonormal, so W^T W = diag(S^(2 eig)).
        np.testing.assert_allclose(w.T @ w, np.diag(s ** (2 * eig)), atol=1e-9)
    np.testing.assert_allclose(svd_vectors(m, 4, eig=1.0), svd_vectors(m, 4, eig=0.5) * np.sqrt(s), atol=1e-12)


def test_wandc_is_w_plus_c() -> None:
    m = _random_ppmi()
    w = svd_vectors(m, 12, eig=0.5)
    c = svd_vectors(m, 12, eig=0.5, add_context=True) - w
    # With every component, W C^T = U S^0.5 S^0.5 V^T = M.
    np.testing.assert_allclose(w @ c.T, m, atol=1e-9)
    u, s, vt = np.linalg.svd(m)
    np.testing.assert_allclose(np.abs(c), np.abs(vt.T * np.sqrt(s)), atol=1e-9)


def test_svd_signs_are_deterministic_and_dim_checked() -> None:
    m = _random_ppmi()
    w = svd_vectors(m, 3)
    assert np.all(w[np.argmax(np.abs(w), axis=0), np.arange(3)] > 0)
    with pytest.raises(ValueError):
        svd_vectors(m, 13)


def test_every_variant_embeds_with_its_formula() -> None:
    rng = np.random.default_rng(1)
    counts = rng.poisson(4, (15, 15)).astype(float)
    counts = counts + counts.T
    np.fill_diagonal(counts, 0)
    assert set(SVD_VARIANTS) == {"svd", "eig", "wandc", "sub", "shifted", "cds"}
    for name in SVD_VARIANTS:
        assert svd_embed(counts, 5, name).shape == (15, 5)
    np.testing.assert_allclose(svd_embed(counts, 5, "svd"), svd_vectors(ppmi(counts), 5, eig=1.0))
    np.testing.assert_allclose(svd_embed(counts, 5, "eig"), svd_vectors(ppmi(counts), 5, eig=0.5))
    np.testing.assert_allclose(svd_embed(counts, 5, "wandc"), svd_vectors(ppmi(counts), 5, 0.5, add_context=True))
    np.testing.assert_allclose(svd_embed(counts, 5, "sub"), svd_vectors(ppmi(subsample(counts, 0.1)), 5, eig=1.0))
    np.testing.assert_allclose(svd_embed(counts, 5, "shifted"), svd_vectors(ppmi(counts, shift=5), 5, eig=1.0))
    np.testing.assert_allclose(svd_embed(counts, 5, "cds"), svd_vectors(ppmi(counts, cds=0.75), 5, eig=1.0))
