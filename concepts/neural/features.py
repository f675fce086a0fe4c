"""Problems as bags of words, and the embedding rows the network starts from. Pure: numpy, torch."""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Sequence

import numpy as np
import torch


def vocabulary(token_lists: Iterable[Sequence[str]], *, min_count: int = 2, words: Iterable[str] | None = None) -> list[str]:
    """Tokens seen in at least ``min_count`` problems, sorted; only those in ``words`` if given.

    Counting problems rather than occurrences drops one-off words (names, typos) that no
    train/test split could learn anything from; ``words`` is the TA's word selection.
    """
    document_frequency: Counter[str] = Counter()
    for tokens in token_lists:
        document_frequency.update(set(tokens))
    keep = set(words) if words is not None else None
    return sorted(w for w, n in document_frequency.items() if n >= min_count and (keep is None or w in keep))


def bag_of_words(token_lists: Sequence[Sequence[str]], vocab: Sequence[str]) -> np.ndarray:
    """float32 array, shape (n_problems, V): each problem's share of tokens per vocabulary word.

    A row times the embedding matrix is the mean of the problem's word embeddings (the network's
    input). Tokens outside the vocabulary are ignored; a problem with none of them is a zero row.
    """
    index = {w: i for i, w in enumerate(vocab)}
    bags = np.zeros((len(token_lists), len(vocab)), dtype=np.float32)
    for row, tokens in enumerate(token_lists):
        hits = [index[t] for t in tokens if t in index]
        if hits:
            np.add.at(bags[row], hits, 1.0 / len(hits))
    return bags


def initial_embedding(
    vocab: Sequence[str],
    known: Mapping[str, np.ndarray],
    dim: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """float32 tensor, shape (V, dim): a word's vector where ``known`` has one, else uniform on [-1, 1]."""
    rows = torch.rand(len(vocab), dim, generator=generator) * 2 - 1
    for i, word in enumerate(vocab):
        vector = known.get(word)
        if vector is not None:
            if len(vector) != dim:
                raise ValueError(f"word vector for {word!r} has {len(vector)} numbers, expected {dim}")
            rows[i] = torch.from_numpy(np.asarray(vector, dtype=np.float32))
    return rows
