"""The learned half of the hybrid concept source. Pure: numpy and torch, no Django.

A problem is represented by the latent semantic analysis (LSA) of the bank's TF-IDF (words, word
pairs and LaTeX commands such as ``\\binom``; ``embeddings.algorithms.text.lsa_vectors``); one
L2-regularised logistic regression per concept on those features, all concepts trained together as
one linear layer with a sigmoid per concept, full batch with L-BFGS (the problem is convex, so it
ends in the same place every time). Positives are up-weighted to balance each concept's classes, and
each concept gets its own threshold, chosen by cross-validation so that the *union* with the rule's
matches has the best F1 on the labelled problems: the learned model only has to find what the rule
misses, and a concept where it cannot beat the rule alone gets no threshold at all. A threshold must
also keep what it adds right at least half the time out of fold (``min_added_precision``): where the
rule finds none of a concept's few positives, F1 would otherwise take a cut that adds the concept to
every problem (its F1 of 0.01 beats the rule's 0).

The cost of that choice, and why it stays (stop 33). A course writes its rules from its labelled
problems, so on exactly those problems the rules look nearly perfect, and most concepts get no
threshold. On problems of the same books drawn later and never written from (the second samples,
``benchmarks/devsets/``) the rules find 42-68% of the labelled concepts, and the union adds almost
nothing there. Thresholds chosen for the model alone (``thresholds_against_rules=False``) find more
of them: FN falls by 5.0 / 7.0 / 4.4 points on the three books' second samples at FP 0.65 / 1.18 /
0.94%, and by 4.3 / 15.7 on the TheoremQA / MATH test splits (``rule_quality.py --learned
--thresholds-alone``). But what they add is right only 30-45% of the time on the test splits, and
on the triplets those wrong concepts cost more than the right ones give (``devset_table1.py
--thresholds-alone``): the hybrid source adds 1,840 concepts to the dev bank instead of 94, and
Prob2Vec on hybrid concepts falls from 89.6 / 93.8% to 77.1 / 85.4% on OpenStax and OpenIntro and
from 87.2 to 79.5% on the demo; on G&S it rises from 72.9 to 77.1% while concept overlap falls from
72.9 to 66.7%; on the test splits it is 70.8 / 58.3% against 70.8 / 62.5%. A higher precision floor
(0.66, 0.75 or 0.9; a one-off run before the second samples' resolution) did not close the gap on
OpenStax, OpenIntro or the demo. The hybrid source exists for similar problems, so its thresholds
stay chosen against the rules.

Why this model and not the paper's network (``benchmarks/hybrid_extractor.py``, the dev bank's 63
concepts with at least 10 labelled positives, 5 paired Table 3 rounds each, threshold 0.5): the
network with its best scheme (down-sampling) reaches FN 17.9% at FP 30.3%, the logistic regression
FN 46.6% at FP 1.7% (the same FN + FP, 48%), in 9 s of training against 263 s. An extractor that
marks a concept on 30% of the problems without it is of no use beside rules at FP 0.2-0.5%; this
model works in the low-FP regime a hybrid needs, trains every concept at once, and ranks well
enough for a per-concept threshold chosen on held-out labels.

Honest figures (:func:`cross_fit`): every labelled problem's concepts come from a model that never
saw its labels, with thresholds chosen without them either (nested cross-validation); only unlabelled
problems are scored by the model fitted on every label.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np
import torch

Progress = Callable[[float], None]

MODEL_NAME = "logistic regression on an LSA of TF-IDF words and word pairs, per-concept CV thresholds"
# Part of a hybrid run's fingerprint: bump it when the model changes, so identical inputs stop reusing old runs.
MODEL_VERSION = 2  # 2: thresholds keep the additions' precision at min_added_precision or more


@dataclass(frozen=True)
class LearnedConfig:
    """Hyperparameters of the learned extractor (chosen on the dev sets, see the module doc)."""

    dim: int = 256  # LSA dimensions
    l2: float = 1e-3  # L2 penalty on the weights (the loss is a mean over problems)
    max_positive_weight: float = 20.0  # cap on the class-balancing weight of positives
    iterations: int = 100  # L-BFGS steps per fit
    folds: int = 5
    min_positives: int = 3  # concepts with fewer labelled positives are left to the rule alone
    # Of the problems a threshold adds a concept to (out of fold), the share that must be right: the
    # additions must do more good than harm. Not tuned: the break-even point.
    min_added_precision: float = 0.5
    # Thresholds for the best union with the rules' matches on the labelled problems; False: for the model
    # alone, which finds more concepts on new text but makes similar problems worse (module docstring).
    thresholds_against_rules: bool = True
    seed: int = 0


@dataclass
class LogisticConcepts:
    """One L2-regularised logistic regression per concept, fitted together as one linear layer."""

    l2: float = 1e-3
    max_positive_weight: float = 20.0
    iterations: int = 100
    weights_: torch.Tensor | None = None  # (n_features, n_concepts)
    bias_: torch.Tensor | None = None  # (n_concepts,)

    def fit(self, x: np.ndarray, y: np.ndarray) -> "LogisticConcepts":
        """x : float array, shape (n, F); y : {0, 1} array, shape (n, C)."""
        features = torch.from_numpy(np.asarray(x, dtype=np.float32))
        target = torch.from_numpy(np.asarray(y, dtype=np.float32))
        n, c = target.shape
        positives = target.sum(0)
        balance = ((n - positives) / positives.clamp(min=1)).clamp(min=1.0, max=self.max_positive_weight)
        sample_weight = torch.where(target > 0, balance, torch.ones_like(target))
        prior = ((positives + 0.5) / (n + 1.0)).log() - ((n - positives + 0.5) / (n + 1.0)).log()
        w = torch.zeros(features.shape[1], c, requires_grad=True)
        b = prior.clone().requires_grad_(True)
        optimizer = torch.optim.LBFGS([w, b], lr=1.0, max_iter=self.iterations, history_size=10, line_search_fn="strong_wolfe")

        def closure() -> torch.Tensor:
            optimizer.zero_grad()
            logits = features @ w + b
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, weight=sample_weight, reduction="sum") / n
            loss = loss + 0.5 * self.l2 * (w * w).sum()
            loss.backward()
            return loss

        optimizer.step(closure)
        self.weights_, self.bias_ = w.detach(), b.detach()
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """float32 array, shape (n, C)."""
        if self.weights_ is None or self.bias_ is None:
            raise RuntimeError("fit the model first")
        with torch.no_grad():
            return torch.sigmoid(torch.from_numpy(np.asarray(x, dtype=np.float32)) @ self.weights_ + self.bias_).numpy()


def best_thresholds(
    probabilities: np.ndarray, truth: np.ndarray, rule_hits: np.ndarray, min_positives: int, min_added_precision: float = 0.5
) -> np.ndarray:
    """Per concept, the threshold whose union with the rule's hits has the best F1 on these problems,
    among those where at least ``min_added_precision`` of the problems it adds the concept to have it.

    Parameters
    ----------
    probabilities, truth, rule_hits : arrays, shape (n, C)

    Returns
    -------
    thresholds : np.ndarray, shape (C,); ``inf`` where the learned model should add nothing (too few
        positives, or no threshold beats the rule alone). Ties go to the higher threshold (fewer FPs).
    """
    n, c = probabilities.shape
    out = np.full(c, np.inf)
    truth = truth.astype(bool)
    rule_hits = rule_hits.astype(bool)
    for j in range(c):
        positives = int(truth[:, j].sum())
        if positives < min_positives:
            continue
        rule_tp = int((rule_hits[:, j] & truth[:, j]).sum())
        rule_fp = int((rule_hits[:, j] & ~truth[:, j]).sum())
        best_f1 = 2 * rule_tp / (2 * rule_tp + rule_fp + (positives - rule_tp)) if positives else 0.0
        # Only problems the rule misses can change the union: sweep their probabilities high to low.
        free = ~rule_hits[:, j]
        p, t = probabilities[free, j], truth[free, j]
        order = np.argsort(-p, kind="stable")
        p, t = p[order], t[order]
        added_tp = np.cumsum(t)
        tp = rule_tp + added_tp
        fp = rule_fp + np.cumsum(~t)
        f1 = 2 * tp / (2 * tp + fp + (positives - tp))
        # A cut is only possible between different probabilities, and must keep at least
        # min_added_precision of what it adds right (0.5: at least as many right as wrong).
        valid = np.append(p[1:] < p[:-1], True) if len(p) else np.zeros(0, bool)
        valid &= added_tp >= min_added_precision * np.arange(1, len(p) + 1)
        f1 = np.where(valid, f1, -1.0)
        if len(f1) and f1.max() > best_f1 + 1e-12:
            k = int(np.argmax(f1))
            out[j] = float(p[k])
    return out


@contextmanager
def _one_thread() -> Iterator[None]:
    """The fits are small (hundreds of problems x 256 features x 130 concepts): torch's thread pool
    costs more than it saves, 7x more on the demo course on a busy 2-core machine (40.5 s vs 5.5 s)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(min(k, n))]


def _fit(x: np.ndarray, y: np.ndarray, config: LearnedConfig) -> LogisticConcepts:
    return LogisticConcepts(l2=config.l2, max_positive_weight=config.max_positive_weight, iterations=config.iterations).fit(x, y)


def _oof(x: np.ndarray, y: np.ndarray, config: LearnedConfig, seed: int) -> np.ndarray:
    """Out-of-fold probabilities, shape (n, C), for the rows of ``x``."""
    out = np.zeros(y.shape, dtype=np.float32)
    for test in _folds(len(y), config.folds, seed):
        train = np.setdiff1d(np.arange(len(y)), test)
        out[test] = _fit(x[train], y[train], config).predict_proba(x[test])
    return out


@dataclass
class CrossFit:
    """What the hybrid source stores: the learned model's concepts for every problem."""

    predicted: list[set[int]]  # per problem, concept indices the learned model adds (rule hits excluded)
    probabilities: np.ndarray  # (n, C) float32: out-of-fold for labelled problems, full model for the rest
    thresholds: np.ndarray  # (C,) chosen on all labels; inf = not learned
    learned_concepts: list[int]  # concepts with enough positives to learn
    features: int  # LSA dimensions used


@_one_thread()  # a contextmanager is also a decorator
def cross_fit(
    texts: Sequence[str],
    labelled: Sequence[int],
    truth: np.ndarray,
    rule_hits: np.ndarray,
    config: LearnedConfig = LearnedConfig(),
    on_progress: Progress | None = None,
    features: np.ndarray | None = None,
) -> CrossFit:
    """The learned extractor over a bank, fitted on its labelled problems.

    Parameters
    ----------
    texts : every problem's text, length n
    labelled : row indices of the problems with ground-truth labels
    truth : {0, 1} array, shape (len(labelled), C): their labels
    rule_hits : {0, 1} array, shape (n, C): what the rules found in every problem
    features : optional (n, F) features of every problem; by default the LSA of the texts

    Returns
    -------
    CrossFit. A labelled problem's predictions come from nested cross-validation (a model and a
    threshold fitted without its fold); an unlabelled problem's from the model fitted on every label
    with thresholds chosen on all labels' out-of-fold probabilities.
    """
    n = len(texts)
    labelled = np.asarray(labelled, dtype=np.int64)
    rule_hits = np.asarray(rule_hits, dtype=bool)
    if rule_hits.ndim != 2:  # a flat array of n x C hits; a 2-D one keeps its C even with no problems (an empty bank)
        rule_hits = rule_hits.reshape(n, -1)
    if rule_hits.shape[0] != n:
        raise ValueError(f"rule hits for {rule_hits.shape[0]} problems, {n} texts")
    c = rule_hits.shape[1]
    truth = np.asarray(truth, dtype=np.float32).reshape(len(labelled), -1 if len(labelled) else c)
    if truth.shape[1] != c:
        raise ValueError(f"labels have {truth.shape[1]} concepts, rule hits {c}")
    probabilities = np.zeros((n, c), dtype=np.float32)
    thresholds = np.full(c, np.inf)
    learnable = np.flatnonzero(truth.sum(0) >= config.min_positives)
    report = on_progress or (lambda fraction: None)
    if len(labelled) < max(2 * config.folds, 10) or not len(learnable):
        return CrossFit([set() for _ in range(n)], probabilities, thresholds, [], 0)
    if features is None:
        from embeddings.algorithms.text import lsa_vectors  # pure code shared with the embeddings

        features = lsa_vectors(texts, dim=config.dim, seed=config.seed)
    x = np.asarray(features, dtype=np.float32)
    xl = x[labelled]
    yl = truth[:, learnable]
    # The rules' hits on the labelled problems, where thresholds are chosen (none: the model alone).
    # Predictions never repeat a rule's match either way (below).
    hits_l = rule_hits[labelled][:, learnable] if config.thresholds_against_rules else np.zeros((len(labelled), len(learnable)), bool)
    # Nested: each outer fold's rows are scored by a model and thresholds fitted without them.
    outer = _folds(len(labelled), config.folds, config.seed)
    oof = np.zeros(yl.shape, dtype=np.float32)
    predicted_l = np.zeros(yl.shape, dtype=bool)
    for k, test in enumerate(outer):
        train = np.setdiff1d(np.arange(len(labelled)), test)
        inner = _oof(xl[train], yl[train], config, config.seed + 1 + k)
        t_k = best_thresholds(inner, yl[train], hits_l[train], config.min_positives, config.min_added_precision)
        oof[test] = _fit(xl[train], yl[train], config).predict_proba(xl[test])
        predicted_l[test] = oof[test] >= t_k
        report((k + 1) / (len(outer) + 1))
    t_all = best_thresholds(oof, yl, hits_l, config.min_positives, config.min_added_precision)
    unlabelled = np.setdiff1d(np.arange(n), labelled)
    full = np.zeros((n, len(learnable)), dtype=np.float32)
    full[labelled] = oof
    if len(unlabelled):
        full[unlabelled] = _fit(xl, yl, config).predict_proba(x[unlabelled])
    chosen = full >= t_all
    chosen[labelled] = predicted_l
    chosen &= ~rule_hits[:, learnable]
    report(1.0)
    probabilities[:, learnable] = full
    thresholds[learnable] = t_all
    predicted = [set(learnable[np.flatnonzero(row)].tolist()) for row in chosen]
    return CrossFit(predicted, probabilities, thresholds, learnable.tolist(), int(x.shape[1]))
