from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from embeddings.algorithms.cooccurrence import cooccurrence_counts, expand_pairs
from embeddings.algorithms.metrics import nearest_concepts
from embeddings.algorithms.skipgram import SkipGram, _objective_and_grad, count_loss, pair_loss, pair_sgd_fit


def _random_counts(n: int = 7, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.integers(0, 4, (n, n)).astype(float)
    np.fill_diagonal(c, 0)
    return c


def test_count_loss_is_log_n_for_zero_weights() -> None:
    c = _random_counts()
    assert count_loss(np.zeros((7, 3)), np.zeros((7, 3)), c) == pytest.approx(math.log(7))
    assert count_loss(np.zeros((7, 3)), np.zeros((7, 3)), np.zeros((7, 7))) == 0.0


def test_count_loss_equals_pair_loss_values_and_gradients() -> None:
    c = _random_counts()
    pairs = expand_pairs(c)
    assert pairs.shape[0] == c.sum()
    gen = torch.Generator().manual_seed(0)
    w_in = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    w_out = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    a = count_loss(w_in, w_out, c)
    ga = torch.autograd.grad(a, (w_in, w_out))
    b = pair_loss(w_in, w_out, pairs)
    gb = torch.autograd.grad(b, (w_in, w_out))
    assert a.item() == pytest.approx(b.item(), rel=1e-12)
    for x, y in zip(ga, gb):
        torch.testing.assert_close(x, y, rtol=1e-10, atol=1e-12)
    # numpy in, float out
    assert count_loss(w_in.detach().numpy(), w_out.detach().numpy(), c) == pytest.approx(a.item())
    assert pair_loss(w_in.detach().numpy(), w_out.detach().numpy(), pairs) == pytest.approx(a.item())


def test_hand_written_gradients_match_autograd() -> None:
    c = _random_counts(9, seed=2)
    p = torch.as_tensor(c / c.sum())
    r = p.sum(dim=1, keepdim=True)
    gen = torch.Generator().manual_seed(1)
    w_in = torch.randn(9, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    w_out = torch.randn(9, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    l2 = 0.03
    obj = count_loss(w_in, w_out, c) + l2 * (w_in.square().sum() + w_out.square().sum())
    auto = torch.autograd.grad(obj, (w_in, w_out))
    g_in, g_out = torch.zeros(9, 4, dtype=torch.float64), torch.zeros(9, 4, dtype=torch.float64)
    with torch.no_grad():
        data = _objective_and_grad(w_in, w_out, p, r, l2, g_in, g_out)
    assert data == pytest.approx(count_loss(w_in, w_out, c).item())
    torch.testing.assert_close(g_in, auto[0])
    torch.testing.assert_close(g_out, auto[1])


def test_fit_is_deterministic_and_decreases_the_loss() -> None:
    c = _random_counts(12, seed=4) * 5
    losses: list[tuple[int, float]] = []
    a = SkipGram(dim=4, epochs=200, seed=3).fit(c, on_epoch_end=lambda e, l: losses.append((e, l)))
    b = SkipGram(dim=4, epochs=200, seed=3).fit(c)
    other = SkipGram(dim=4, epochs=200, seed=4).fit(c)
    np.testing.assert_array_equal(a.vectors_, b.vectors_)
    np.testing.assert_array_equal(a.output_vectors_, b.output_vectors_)
    assert not np.array_equal(a.vectors_, other.vectors_)
    assert a.vectors_.shape == a.output_vectors_.shape == (12, 4) and a.vectors_.dtype == np.float32
    assert [e for e, _ in losses] == list(range(1, a.n_epochs_ + 1))
    assert a.loss_ < losses[0][1] - 0.1
    assert a.loss_ == pytest.approx(count_loss(a.vectors_, a.output_vectors_, c), abs=1e-5)

def test_fit_restores_the_callers_thread_setting() -> None:
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        a = SkipGram(dim=3, epochs=50).fit(_random_counts())
        assert torch.get_num_threads() == 2
        torch.set_num_threads(1)
        b = SkipGram(dim=3, epochs=50).fit(_random_counts())
        np.testing.assert_array_equal(a.vectors_, b.vectors_)
    finally:
        torch.set_num_threads(before)


def test_tol_stops_early_and_unused_concepts_get_zero_vectors() -> None:
    c = _random_counts(6)
    c[5, :] = c[:, 5] = 0  # concept 5 never occurs
    m = SkipGram(dim=3, epochs=5000, tol=1e-4).fit(c)
    assert m.n_epochs_ < 5000
    assert not m.vectors_[5].any() and m.vectors_[:5].any()
    assert SkipGram(dim=3, epochs=10).fit(np.zeros((4, 4))).loss_ == 0.0


def test_the_prior_shrinks_the_weights() -> None:
    c = _random_counts(8, seed=6)
    norm = [np.linalg.norm(SkipGram(dim=3, epochs=300, l2=l2).fit(c).vectors_) for l2 in (0.0, 3.0, 30.0)]
    assert norm[0] > norm[1] > norm[2]


def test_pair_sgd_matches_torch_sgd_on_the_same_pair_order() -> None:
    sets = [[0, 1, 2], [1, 3], [2, 3, 4]]
    n, dim, epochs, lr, seed = 5, 3, 2, 0.1, 7
    w_in, w_out = pair_sgd_fit(sets, n, dim=dim, epochs=epochs, lr=lr, seed=seed)
    # replay: same generator calls, torch autograd for the per-pair gradient
    rng = np.random.default_rng(seed)
    pairs = expand_pairs(cooccurrence_counts(sets, n))
    a = torch.tensor((rng.random((n, dim)) - 0.5) / dim, requires_grad=True)
    b = torch.zeros(n, dim, dtype=torch.float64, requires_grad=True)
    total, step = epochs * len(pairs), 0
    for _ in range(epochs):
        for center, context in pairs[rng.permutation(len(pairs))].tolist():
            alpha = lr * max(1e-4, 1 - step / total)
            step += 1
            loss = pair_loss(a, b, [[center, context]])
            ga, gb = torch.autograd.grad(loss, (a, b))
            with torch.no_grad():
                a -= alpha * ga
                b -= alpha * gb
    np.testing.assert_allclose(w_in, a.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_out, b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_pair_sgd_lowers_the_loss() -> None:
    sets = [[0, 1], [2, 3], [0, 1], [2, 3], [4, 5]] * 4
    w_in, w_out = pair_sgd_fit(sets, 6, dim=3, epochs=30, lr=0.2, seed=0)
    c = cooccurrence_counts(sets, 6)
    assert count_loss(w_in, w_out, c) < math.log(6) - 0.5


def synthetic_groups(n_problems: int = 600, n_groups: int = 5, per_group: int = 8, seed: int = 0):
    """Problems draw 2-4 concepts, each from their group with probability 0.85, else anywhere."""
    rng = np.random.default_rng(seed)
    n = n_groups * per_group
    sets = []
    for _ in range(n_problems):
        g = rng.integers(n_groups)
        k = rng.integers(2, 5)
        own = g * per_group + rng.integers(0, per_group, k)
        anywhere = rng.integers(0, n, k)
        sets.append(sorted(set(np.where(rng.random(k) < 0.85, own, anywhere).tolist())))
    return sets, n, np.repeat(np.arange(n_groups), per_group)


def test_same_group_concepts_are_nearest_neighbours() -> None:
    sets, n, group = synthetic_groups()
    m = SkipGram(seed=0).fit(cooccurrence_counts(sets, n))
    k = 5
    precision = np.mean([np.mean(group[nearest_concepts(m.vectors_, c, k)[0]] == group[c]) for c in range(n)])
    chance = 7 / 39
    assert precision > 0.8 > 4 * chance, precision
