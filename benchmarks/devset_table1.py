"""Benchmark: the paper's Table 1 on real text, per dev book, with 95% bootstrap intervals.

What it measures
    The bank is what a course would have after importing the three dev books (every problem of
    OpenStax, OpenIntro and Grinstead & Snell from ../shared/data, module = chapter) beside the demo
    course: 2,670 problems, 715 of them labelled (benchmarks/devsets/ and the demo labels).
    Concept sets come from the three sources of the app, which read each problem's statement and then its
    solution where it has one, as the app does by default (README "Rules read the solution"; --no-solutions:
    the statements alone, as before stop 39); the text methods and the fallback read the statement:
      - labels: the expert labels (unlabelled problems have none);
      - rules:  problems/demo_course/rules.json over every text (concepts.extraction);
      - hybrid: rules plus the learned extractor (concepts.learned.cross_fit: labelled problems are
                scored out of fold, so no problem's own labels leak into its concepts);
      - unseen: each book's problems through the rules WITHOUT that book's own branches (the demo's
                through every rule): what the starter rules give on a textbook they were not
                written from, the closest figure here to a new course's bank.
    Every concept method (embeddings.algorithms.methods, the app's own code and defaults, fallback
    included) is trained on the whole bank and judged on each book's expert triplets (all three
    problems from one chapter) and on the demo's; text methods need no concepts. Each accuracy comes
    with a 95% percentile bootstrap interval over the book's triplets. Then, for Prob2Vec on labels
    and rules, why its triplets fail: each triplet's kind by what its concept sets alone say (a tie
    that only the text can order; plain overlap agreeing, even or disagreeing with the expert), and
    how many of each kind it gets right (``anatomy``).

    --cv runs the protocol that chose the defaults (README, "Choosing the defaults"): for each
    held-out book, a grid over Prob2Vec's dim, l2 and epochs, the blend weight and the text weight is
    scored on the OTHER two books' triplets (labels source), the best setting is then measured on the
    held-out book; finally the grid is scored on all three books' triplets, which is how the shipped
    defaults were picked. A book's triplets are its first sample's and, since stop 36, its third
    sample's (tuning data); each choice is also scored on the book's second-sample triplets (fresh
    problems), which nothing is chosen on. A setting replaces the shipped one only when the folds'
    choices beat the shipped settings on the held-out books (stop 23's rule). Demo triplets are never
    used for choosing.

    --cv also chooses the fallback's ``borrowed_text_weight`` (the text's share of the cosines of a
    problem whose concept vector was borrowed, and the cap of the share that follows a source's measured
    recall) on the same folds, leaving one book out: scored on the mean over the rules, hybrid and
    unseen sources, where it acts, and on the fresh triplets too (since stop 37; before, on the
    ``unseen`` source and the first samples' triplets alone).

    The second samples' triplets (``<book>-2/triplets.jsonl``, stop 34: all three problems from a
    book's second sample, which no rule was written from) are measured as ``openstax-2``,
    ``openintro-2`` and ``gs-2``: their "rules" column is what the tuned rules give on fresh problems
    of their own book. Nothing is chosen on them (--cv and the fallback choices use the first samples'
    triplets). The third samples' triplets (``openstax-3`` ...) are on problems that only stop 34's 21
    branches were written from: tuning data for choosing what fresh problems need.

    --test-splits adds the TheoremQA and MATH test splits (benchmarks/devsets/TEST_SETS.md) to the
    bank and measures their triplets too: the rules were never written from them, so their "rules"
    column is the unseen-text figure. Never choose anything on them.

    --genre-dev adds the same two collections with only their genre dev samples' labels and triplets
    (tuning data, README "Genre dev samples"); their "unseen" column is the rules without the
    sample's own branches. One or the other, never both.

    --fallback-text chooses the text vectors of the concept methods' fallback (default: the shipped
    default, MiniLM); --compare-fallback-text runs every concept method and source with both and
    makes the choice between them leaving one triplet set out (README, "No problem without a
    vector"); --seeds N adds Prob2Vec and the blend over N draws (non-overlapping seeds), mean and SD,
    since one draw's figure moves by a triplet or two with any change to the bank; --thresholds-alone
    chooses the hybrid source's learned thresholds for the model alone instead of against the rules
    (not the product's choice: concepts/learned.py).

    --oracles (stop 43) asks what each kind of rule error costs the similar lists: Prob2Vec and concept
    overlap on the rules with, on labelled problems, every concept the labels lack dropped ("no wrong
    concept": perfect precision) or every labelled concept the rules missed added ("no missed concept":
    perfect recall), beside the rules and the labels; and the share of each set's triplets that the
    labels' (and the rules') plain overlap orders right, a ceiling for any method that reads concepts
    alone. With --seeds N, Prob2Vec's rows are means over N draws.

How to run (from the project folder; pure code, no database)
    .venv/bin/python benchmarks/devset_table1.py [--methods prob2vec,onehot,blend,minilm] [--cv] [--test-splits | --genre-dev]
        [--fallback-text lsa|minilm] [--compare-fallback-text] [--oracles] [--seeds N] [--thresholds-alone] [--no-solutions] [--json]

MiniLM vectors are cached in benchmarks/out/ (it takes minutes on a laptop CPU); the books are read
from ../shared/data (or $PROB2VEC_SHARED_DATA), and the script stops with a message without them.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from concepts import extraction, learned  # noqa: E402  (pure)
from embeddings.algorithms.methods import METHODS, BankData, embed  # noqa: E402  (pure)
from embeddings.algorithms.fallback import TRIPLET_SHARE_MIN, fill, join_text, recall_by_collection, text_weights_from_recall, unit_rows  # noqa: E402
from embeddings.algorithms.metrics import bootstrap_interval, triplet_correct  # noqa: E402
from embeddings.algorithms.text import lsa_vectors  # noqa: E402
from problems.demo_course import DEMO_DIR, bank_files, demo_rules, read_jsonl, read_tsv  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
SOURCES = ("labels", "rules", "hybrid", "unseen")
BOOK_ORDER = ("openstax", "openintro", "gs", "demo")


@dataclass
class Bank:
    texts: list[str] = field(default_factory=list)
    books: list[str] = field(default_factory=list)
    labels: list[list[str] | None] = field(default_factory=list)
    triplets: dict[str, np.ndarray] = field(default_factory=dict)  # book -> (m, 3) row indices
    slugs: list[str] = field(default_factory=list)
    held_out: set[int] = field(default_factory=set)  # rows held out from rule writing: the books' second samples
    share_triplets: bool = False  # collections choose their text share on their accepted triplets (README step 5; off by default)
    solutions: list[str | None] = field(default_factory=list)  # per problem, its solution (None: it has none)
    reads_solutions: bool = True  # the rules and the learned half read each solution, as the app does by default (RULES_READ_SOLUTIONS)

    def rule_texts(self) -> list[str]:
        """What the rules and the hybrid source's learned half read of each problem: the statement, then the
        solution where there is one (``extraction.rule_text``), or the statement alone without ``reads_solutions``.
        The text methods and the fallback read the statement (``texts``), as in the app."""
        if not self.reads_solutions:
            return list(self.texts)
        # A bank built by hand (tests) may list fewer solutions than texts: the rest have none.
        solutions = self.solutions + [None] * (len(self.texts) - len(self.solutions))
        return [extraction.rule_text(text, solution) for text, solution in zip(self.texts, solutions)]

    def sets(self, found: list[set[str]] | list[list[str] | None]) -> list[list[int]]:
        col = {s: j for j, s in enumerate(self.slugs)}
        return [sorted(col[s] for s in (f or [])) for f in found]


def load_bank(test_splits: bool = False, genre_dev: bool = False) -> Bank:
    """The demo course and the three dev books (every problem); ``test_splits`` adds the TheoremQA and
    MATH collections, whose labels and triplets are only ever measured (TEST_SETS.md), with the labels
    of their genre dev samples (devsets.GENRE_DEV) on the problems those took. ``genre_dev`` adds the
    same two collections with only their genre dev samples' labels and triplets (tuning data; the
    rows are named after the sample, e.g. ``math-dev``), never the test splits'."""
    if test_splits and genre_dev:
        raise ValueError("test splits and genre dev samples share their collections: measure one or the other")
    bank = Bank(slugs=sorted(row["slug"] for row in read_tsv("concepts.tsv")))
    keys: dict[tuple[str, str], int] = {}
    for path in bank_files():
        for r in read_jsonl(str(path.relative_to(DEMO_DIR))):
            keys[("demo", str(r["id"]))] = len(bank.texts)
            bank.texts.append(str(r["text"]))
            bank.solutions.append(r.get("solution"))  # type: ignore[arg-type]
            bank.books.append("demo")
            bank.labels.append(list(r["labels"]))  # type: ignore[arg-type]
    collections = {**devsets.BOOKS, **(devsets.TEST_SETS if test_splits else {}), **(devsets.GENRE_DEV if genre_dev else {})}
    dev_of = {collection: dev for dev, collection in devsets.GENRE_DEV_OF.items()}
    for book, name in collections.items():
        # A test split's collection also carries the labels of its genre dev sample (other problems of
        # the same collection, tuned on): the bank's labels, which the labels and hybrid sources use.
        # A genre dev sample's collection carries its own labels only. A book carries its second samples'.
        truth = {**(devsets.labels(dev_of[book]) if book in dev_of else {}), **devsets.book_labels(book)}
        # As a course would mark them (import_labels --held-out): the second sample was never written from.
        second = devsets.second_sample(book)
        held_out = set(devsets.labels(second)) if second else set()
        for r in devsets.book_problems(book):
            if r["id"] in held_out:
                bank.held_out.add(len(bank.texts))
            keys[(name, r["id"])] = len(bank.texts)
            bank.texts.append(r["text"])
            bank.solutions.append(r.get("solution"))
            bank.books.append(name)
            bank.labels.append(truth.get(r["id"]))
        bank.triplets[name] = np.array(
            [[keys[(name, t["anchor"])], keys[(name, t["positive"])], keys[(name, t["negative"])]] for t in devsets.triplets(book)]
        ).reshape(-1, 3)
    # Triplets on a book's later samples (stop 34). The second samples': problems no rule was written
    # from, so their "rules" column is the figure for fresh problems of a book the rules were tuned on;
    # measured, never chosen on. The third samples': tuning data for what fresh problems need.
    for folder, name in {**devsets.SECOND_SAMPLES, **devsets.THIRD_SAMPLES}.items():
        book = devsets.BOOKS[devsets.SAMPLE_OF[folder]]
        sample_triplets = devsets.triplets(folder)
        if sample_triplets and book in collections.values():
            bank.triplets[name] = np.array(
                [[keys[(book, t[k])] for k in ("anchor", "positive", "negative")] for t in sample_triplets]
            ).reshape(-1, 3)
    demo = [t for t in read_jsonl("triplets.jsonl") if t.get("decision") == "accepted"]
    bank.triplets["demo"] = np.array([[keys[("demo", str(t[r]))] for r in ("anchor", "positive", "negative")] for t in demo]).reshape(-1, 3)
    return bank


def source_sets(
    bank: Bank, rules_without: Callable[[str], dict] = lambda name: demo_rules(without=name), learned_config: learned.LearnedConfig | None = None
) -> tuple[dict[str, list[list[int]]], dict[str, object]]:
    """Each source's concept sets over the bank. ``rules_without(name)`` gives the rules without the
    set ``name``'s own branches ("" for every rule): the starter rules unless a benchmark tries others.
    ``learned_config`` is the hybrid source's learned half (the product's by default)."""
    rules = [extraction.Rule.of(s, v) for s, v in sorted(rules_without("").items())]
    texts = bank.rule_texts()
    found = extraction.extract_many(texts, extraction.compile_rules(rules))
    rule_sets = bank.sets(found)
    labelled = [i for i, lab in enumerate(bank.labels) if lab]
    truth = np.zeros((len(labelled), len(bank.slugs)), dtype=np.float32)
    for k, i in enumerate(labelled):
        truth[k, bank.sets([bank.labels[i]])[0]] = 1.0
    hits = np.zeros((len(bank.texts), len(bank.slugs)), dtype=bool)
    for i, s in enumerate(rule_sets):
        hits[i, s] = True
    started = time.monotonic()
    fit = learned.cross_fit(texts, labelled, truth, hits, learned_config or learned.LearnedConfig())
    info = {"hybrid_seconds": round(time.monotonic() - started, 1), "learned_concepts": len(fit.learned_concepts),
            "added": sum(len(p) for p in fit.predicted)}
    hybrid = [sorted(set(r) | p) for r, p in zip(rule_sets, fit.predicted)]
    unseen = list(rule_sets)
    for name in [*devsets.BOOKS.values(), *devsets.GENRE_DEV.values()]:
        rows = [i for i, b in enumerate(bank.books) if b == name]
        if not rows:
            continue
        without = [extraction.Rule.of(s, v) for s, v in sorted(rules_without(name).items())]
        for i, found_i in zip(rows, bank.sets(extraction.extract_many([texts[i] for i in rows], extraction.compile_rules(without)))):
            unseen[i] = found_i
    return {"labels": bank.sets(bank.labels), "rules": rule_sets, "hybrid": hybrid, "unseen": unseen}, info


def concept_recall(bank: Bank, concept_sets: list[list[int]]) -> np.ndarray:
    """Per problem, the source's recall on the labelled problems of its book (on its held-out ones, the
    second sample, where the book has one), as the app measures it per collection for a rules or
    hybrid run (embeddings.services.concept_recall_by_collection)."""
    labels = bank.sets(bank.labels)
    truth = {i: set(labels[i]) for i, lab in enumerate(bank.labels) if lab}
    return recall_by_collection(bank.books, concept_sets, truth, held_out=bank.held_out)[0]


def recall_per_book(bank: Bank, concept_sets: list[list[int]]) -> dict[str, dict[str, float | None]]:
    """Per book with labels, the source's recall as the app uses it (on the held-out problems where
    enough), the recall on every label, and the text share that follows (Prob2Vec's weights)."""
    labels = bank.sets(bank.labels)
    truth = {i: set(labels[i]) for i, lab in enumerate(bank.labels) if lab}
    used = recall_by_collection(bank.books, concept_sets, truth, held_out=bank.held_out)[1]
    every = recall_by_collection(bank.books, concept_sets, truth)[1]
    d = METHODS["prob2vec"].defaults
    out = {}
    for book, entry in used.items():
        share = None
        if entry["recall"] is not None:
            share = float(text_weights_from_recall(np.array([entry["recall"]]), d["text_weight"], d["borrowed_text_weight"])[0])
        out[book] = {"recall": entry["recall"], "measured_on": entry["measured_on"], "every_label": every[book]["recall"], "text_share": share}
    return out


def accepted_triplets(bank: Bank) -> dict[str, list[str]]:
    """Per collection of the bank, the triplet sets a course would have accepted: every set but the
    second samples' and the test splits' (the yardsticks nothing is chosen on). A book's third sample's
    triplets belong to the book's collection."""
    measured = {*devsets.SECOND_SAMPLES.values(), *devsets.TEST_SETS.values()}
    out: dict[str, list[str]] = {}
    for name in bank.triplets:
        if name not in measured:
            out.setdefault(devsets.origin(name) if name in devsets.THIRD_SAMPLES.values() else name, []).append(name)
    return out


def triplet_share_params(bank: Bank) -> dict[str, int]:
    """The parameter that turns on the text share from accepted triplets (README step 5), where the bank asks for it (``--triplet-share``)."""
    return {"triplet_share_min": TRIPLET_SHARE_MIN} if bank.share_triplets else {}


def bank_data(bank: Bank, sets: dict[str, list[list[int]]], source: str, text: np.ndarray) -> BankData:
    """The pure BankData the app would build for one source: the labels source has no recall to measure.
    With ``bank.share_triplets`` the collections' accepted triplets go with it, so that a collection with
    enough of them chooses its text share on them (README step 5), as the app's rules and hybrid runs do."""
    recall = None if source == "labels" else concept_recall(bank, sets[source])
    accepted = ({g: np.vstack([bank.triplets[n] for n in names]).reshape(-1, 3) for g, names in accepted_triplets(bank).items()}
                if bank.share_triplets else None)
    return BankData(sets[source], len(bank.slugs), texts=bank.texts, text_vectors=text, concept_recall=recall,
                    groups=list(bank.books), share_triplets=accepted, extracted=source != "labels")


def set_correct(bank: Bank, vectors: np.ndarray, notes: dict, name: str) -> np.ndarray:
    """Per triplet of the set ``name``, right or wrong. Where the set's collection chose its text share on
    triplets that include this set's, each is scored with the share chosen on the other folds
    (``notes["triplet_share"]``), as the app's `evaluate_triplets` scores accepted triplets."""
    chosen = notes.get("triplet_share", {})
    for group, names in accepted_triplets(bank).items():
        if name in names and group in chosen:
            start = sum(len(bank.triplets[n]) for n in names[: names.index(name)])
            return np.asarray(chosen[group]["out_of_fold"][start : start + len(bank.triplets[name])], dtype=bool)
    return triplet_correct(vectors, bank.triplets[name])


def minilm_vectors(texts: list[str]) -> np.ndarray:
    from embeddings.algorithms.text import minilm_embeddings

    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = OUT / f"minilm-{digest}.npy"
    if path.exists():
        return np.load(path)
    OUT.mkdir(exist_ok=True)
    vectors = minilm_embeddings(texts)
    np.save(path, vectors)
    return vectors


def scores(vectors: np.ndarray, triplets: dict[str, np.ndarray], bank: Bank | None = None, notes: dict | None = None) -> dict[str, dict[str, float]]:
    out = {}
    for book, t in triplets.items():
        correct = set_correct(bank, vectors, notes, book) if bank is not None and notes else triplet_correct(vectors, t)
        low, high = bootstrap_interval(correct)
        out[book] = {"accuracy": float(correct.mean()), "low": low, "high": high}
    return out


def seed_spread(bank: Bank, sets: dict[str, list[list[int]]], methods: list[str], text: np.ndarray, seeds: int) -> dict:
    """Accuracy of each seeded concept method (Prob2Vec, blend) over draws 0..seeds-1: mean and SD per
    source and triplet set. Draw r trains on seeds r*K .. r*K+K-1 (K the method's ``ensemble``), so no
    two draws share a skip-gram. A single network's figure moves by a triplet or two with any change to
    the bank; that is what the ensemble damps."""
    out: dict[str, dict] = {}
    for method in [m for m in methods if "seed" in METHODS[m].defaults and METHODS[m].kind == "concepts"]:
        for source in SOURCES:
            acc = draw_accuracies(bank, method, bank_data(bank, sets, source, text), seeds)
            out.setdefault(method, {})[source] = {b: {"mean": float(np.mean(a)), "sd": float(np.std(a)), "runs": a} for b, a in acc.items()}
    return out


def draw_accuracies(bank: Bank, method: str, data: BankData, seeds: int) -> dict[str, list[float]]:
    """Per triplet set, the method's accuracy in each of draws 0..seeds-1 (one run for a method without
    a seed): draw r trains on seeds r*K .. r*K+K-1, K the method's ``ensemble``. Scored as ``table1``
    scores, with the triplet share where the bank asks for it."""
    defaults = METHODS[method].defaults
    seeded = "seed" in defaults
    acc: dict[str, list[float]] = {b: [] for b in bank.triplets}
    for draw in range(seeds if seeded else 1):
        params = {"seed": draw * int(defaults.get("ensemble", 1))} if seeded else {}
        run = embed(method, data, {**params, **triplet_share_params(bank)})
        for b in bank.triplets:
            acc[b].append(float(set_correct(bank, run.vectors, run.notes, b).mean()))
    return acc


ANATOMY = ("tie", "overlap_agrees", "overlap_even", "overlap_disagrees")


def anatomy(sets: list[list[int]], triplets: np.ndarray, correct: np.ndarray) -> dict[str, dict[str, int]]:
    """What the concept sets alone say about each triplet (A closer to B than to C), and how many of
    each kind a method got right: a ceiling that no concept method can pass without the text.

    - tie: B and C have the same concept set, so every concept method gives them the same cosine
      with A and only the text (the fallback's share) can order them;
    - overlap_agrees / overlap_disagrees: A shares more / less of its concepts with B than with C
      (Jaccard), so plain overlap gets the triplet right / wrong; an embedding can only disagree with
      overlap through its learned concept similarities;
    - overlap_even: equal Jaccard with different sets.
    """
    out = {kind: {"triplets": 0, "correct": 0} for kind in ANATOMY}
    for kind, right in zip(triplet_kinds(sets, triplets), np.asarray(correct)):
        out[kind]["triplets"] += 1
        out[kind]["correct"] += int(bool(right))
    return out


def triplet_kinds(sets: list[list[int]], triplets: np.ndarray) -> list[str]:
    """Each triplet's kind in ``ANATOMY`` by what its concept sets alone say (``anatomy``)."""

    def jaccard(x: set[int], y: set[int]) -> float:
        return len(x & y) / len(x | y) if x | y else 0.0

    kinds = []
    for a, b, c in np.asarray(triplets).reshape(-1, 3):
        concepts_a, concepts_b, concepts_c = set(sets[a]), set(sets[b]), set(sets[c])
        if concepts_b == concepts_c:
            kinds.append("tie")
            continue
        ab, ac = jaccard(concepts_a, concepts_b), jaccard(concepts_a, concepts_c)
        kinds.append("overlap_agrees" if ab > ac else "overlap_disagrees" if ab < ac else "overlap_even")
    return kinds


def overlap_ceiling(sets: list[list[int]], triplets: np.ndarray) -> float:
    """The share of the triplets that plain concept overlap orders right, a tie or an even overlap
    counting half (a coin flip): what the concept sets alone say, before any embedding or text."""
    kinds = triplet_kinds(sets, triplets)
    if not kinds:
        return float("nan")
    halves = kinds.count("tie") + kinds.count("overlap_even")
    return (kinds.count("overlap_agrees") + halves / 2) / len(kinds)


ORACLES = ("rules", "no wrong concept", "no missed concept", "labels")


def oracle_sets(bank: Bank, rule_sets: list[list[int]]) -> dict[str, list[list[int]]]:
    """The rules' concept sets mended with the expert labels, one way at a time, on labelled problems
    only (an unlabelled problem keeps what the rules found): "no wrong concept" drops every concept the
    labels lack (perfect precision), "no missed concept" adds every labelled one the rules missed
    (perfect recall). What each kind of rule error costs the similar lists."""
    labels = bank.sets(bank.labels)
    precise, complete = [], []
    for found, truth, labelled in zip(rule_sets, labels, bank.labels):
        precise.append(sorted(set(found) & set(truth)) if labelled else list(found))
        complete.append(sorted(set(found) | set(truth)) if labelled else list(found))
    return {"rules": list(rule_sets), "no wrong concept": precise, "no missed concept": complete}


def oracles(bank: Bank, sets: dict[str, list[list[int]]], text: np.ndarray, seeds: int = 1,
            methods: tuple[str, ...] = ("prob2vec", "onehot")) -> dict[str, dict[str, dict[str, float]]]:
    """Per concept method and ``ORACLES`` row, the mean accuracy on each triplet set over ``seeds``
    draws (the method's own seed where it has one). The mended rows stay the rules source, so their
    text share follows the recall they would have, as the app's would; "labels" is the labels source.
    Also ``"overlap"``: the labels' and the rules' ``overlap_ceiling`` per set."""
    mended = oracle_sets(bank, sets["rules"])
    out: dict[str, dict[str, dict[str, float]]] = {}
    for method in methods:
        for row in ORACLES:
            data = bank_data(bank, sets, "labels", text) if row == "labels" else bank_data(bank, {**sets, "rules": mended[row]}, "rules", text)
            acc = draw_accuracies(bank, method, data, seeds)
            out.setdefault(method, {})[row] = {b: float(np.mean(a)) for b, a in acc.items()}
    out["overlap"] = {source: {b: overlap_ceiling(sets[source], t) for b, t in bank.triplets.items()} for source in ("labels", "rules")}
    return out


def table1(bank: Bank, sets: dict[str, list[list[int]]], methods: list[str], text: np.ndarray, shares: dict | None = None) -> dict:
    """Every method on every source, each triplet set scored. ``shares``, when given, gets Prob2Vec's text
    share per collection and source as the accepted triplets chose it (README step 5; ``--triplet-share``),
    without the per-triplet out-of-fold judgements."""
    results: dict[str, dict[str, dict]] = {}
    for method in methods:
        if METHODS[method].kind == "text":
            # The demo TA's word selection stands in for a course's (benchmarks on the demo do the same).
            words = set((DEMO_DIR / "selected_words.txt").read_text(encoding="utf-8").split())
            data = BankData([], 0, texts=bank.texts, selected_words=words)
            vectors = minilm_vectors(bank.texts) if method == "minilm" else embed(method, data).vectors
            results[method] = {"text": scores(vectors, bank.triplets)}
            continue
        for source in SOURCES:
            out = embed(method, bank_data(bank, sets, source, text), triplet_share_params(bank))
            scored = scores(out.vectors, bank.triplets, bank, out.notes)
            for book, t in bank.triplets.items():
                scored[book]["anatomy"] = anatomy(sets[source], t, set_correct(bank, out.vectors, out.notes, book))
            if shares is not None and method == "prob2vec" and out.notes.get("triplet_share"):
                shares[source] = {g: {k: v for k, v in r.items() if k != "out_of_fold"} for g, r in out.notes["triplet_share"].items()}
            results.setdefault(method, {})[source] = scored
    return results


GRID = {
    "dim": [5, 10, 20, 30],
    "l2": [0.3, 1.0, 3.0],
    "epochs": [100, 250, 500],
    "text_weight": [0.0, 0.05, 0.1, 0.2, 0.3],
    "ensemble": [1, 5],
}
BLEND_WEIGHTS = [0.25, 0.5, 0.75]


def cv_triplets(bank: Bank) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per dev book, the triplets the defaults are chosen on and the triplets they are then tested on.

    Chosen on: the first sample's triplets and, since stop 36, the third sample's (tuning data), where
    loaded: twice the triplets, so a choice is less one book's luck. Tested on: the second sample's
    (fresh problems, never chosen on), where loaded."""
    tuning: dict[str, list[np.ndarray]] = {b: [bank.triplets[b]] for b in BOOK_ORDER[:3] if b in bank.triplets}
    for name in devsets.THIRD_SAMPLES.values():
        if name in bank.triplets and devsets.origin(name) in tuning:
            tuning[devsets.origin(name)].append(bank.triplets[name])
    fresh = {devsets.origin(name): bank.triplets[name] for name in devsets.SECOND_SAMPLES.values()
             if name in bank.triplets and devsets.origin(name) in tuning}
    return {b: np.vstack(t).reshape(-1, 3) for b, t in tuning.items()}, fresh


def cross_validate(bank: Bank, sets: list[list[int]], text: np.ndarray, seeds: int = 1) -> dict:
    """Leave one book out over the dev triplets (labels source): choose on two books, measure on the third.
    A book's triplets are its first and third samples' (``cv_triplets``); each choice is also scored on
    the held-out book's second-sample triplets (``fresh_accuracy``), which nothing is chosen on.
    With ``seeds`` > 1 every setting is scored over draws 0..seeds-1 (its mean accuracy; draw r of an
    ensemble of K trains seeds r*K .. r*K+K-1), so that the choice is not one lucky draw of the
    skip-gram's initial weights. A setting is (dim, l2, epochs, blend weight or None, text weight, ensemble)."""
    tuning, fresh = cv_triplets(bank)
    dev = list(tuning)
    correct: dict[tuple, dict[str, np.ndarray]] = {}
    tested: dict[tuple, dict[str, np.ndarray]] = {}

    def default(blend: bool) -> tuple:
        d = METHODS["blend" if blend else "prob2vec"].defaults
        return (d["dim"], d["l2"], d["epochs"], d["weight"] if blend else None, d["text_weight"], d["ensemble"])

    # The grid, and the shipped settings wherever the grid lacks them (Prob2Vec's also as one network):
    # the defaults are always scored, and always a candidate.
    shipped = [default(False), default(True)]
    trainings = sorted(set(itertools.product(GRID["dim"], GRID["l2"], GRID["epochs"], GRID["ensemble"]))
                       | {(k[0], k[1], k[2], k[5]) for k in shipped} | {(*shipped[0][:3], 1)})
    blend_weights = sorted(set(BLEND_WEIGHTS) | {shipped[1][3]})
    text_weights = sorted(set(GRID["text_weight"]) | {k[4] for k in shipped})
    overlap = embed("onehot", BankData(sets, len(bank.slugs)), {"text_weight": 0.0, "borrow_k": 0})
    for dim, l2, epochs, members in trainings:
        for seed in range(max(1, seeds)):
            params = {"dim": dim, "l2": l2, "epochs": epochs, "seed": seed * members, "ensemble": members, "text_weight": 0.0, "borrow_k": 0}
            base = embed("prob2vec", BankData(sets, len(bank.slugs)), params)
            for weight in [None, *blend_weights]:  # None: Prob2Vec itself; else the blend with concept overlap
                concept = base.vectors if weight is None else np.hstack([np.sqrt(weight) * unit_rows(overlap.vectors), np.sqrt(1 - weight) * unit_rows(base.vectors)])
                for tw in text_weights:
                    vectors = join_text(concept, text, tw)
                    key = (dim, l2, epochs, weight, tw, members)
                    cell = correct.setdefault(key, {b: np.zeros(0, dtype=bool) for b in dev})
                    for b in dev:  # every seed's judgements of the book's triplets, one after another
                        cell[b] = np.concatenate([cell[b], triplet_correct(vectors, tuning[b])])
                    test = tested.setdefault(key, {b: np.zeros(0, dtype=bool) for b in fresh})
                    for b in fresh:
                        test[b] = np.concatenate([test[b], triplet_correct(vectors, fresh[b])])

    def accuracy(key: tuple, books: list[str]) -> float:
        return float(np.mean(np.concatenate([correct[key][b] for b in books])))

    def fresh_accuracy(key: tuple, books: list[str]) -> float | None:
        books = [b for b in books if b in fresh]
        return float(np.mean(np.concatenate([tested[key][b] for b in books]))) if books else None

    def best(books: list[str], blend: bool) -> tuple:
        # Highest accuracy; among equals, the setting closest to the shipped defaults (a change must earn it).
        keys = [k for k in correct if (k[3] is not None) == blend]
        return max(keys, key=lambda k: (accuracy(k, books), -sum(a != b for a, b in zip(k, default(blend)))))

    report: dict[str, dict] = {}
    for blend in (False, True):
        name = "blend" if blend else "prob2vec"
        rows = {}
        for held in dev:
            chosen = best([b for b in dev if b != held], blend)
            rows[held] = {"chosen": chosen, "held_out_accuracy": accuracy(chosen, [held]), "default_accuracy": accuracy(default(blend), [held]),
                          "fresh_accuracy": fresh_accuracy(chosen, [held]), "default_fresh_accuracy": fresh_accuracy(default(blend), [held])}
        single = (*default(blend)[:5], 1)  # the shipped settings with the paper's single network
        chosen = best(dev, blend)
        rows["all"] = {"chosen": chosen, "accuracy": accuracy(chosen, dev),
                       "default": default(blend), "default_accuracy": accuracy(default(blend), dev),
                       "single_network_accuracy": accuracy(single, dev),
                       "fresh_accuracy": fresh_accuracy(chosen, dev), "default_fresh_accuracy": fresh_accuracy(default(blend), dev)}
        report[name] = rows
    return report


BORROWED_WEIGHTS = [0.1, 0.3, 0.5, 0.7, 1.0]  # 0.1: the plain text weight, i.e. no special weight
# Where the borrowed weight acts: a problem that borrowed its concept vector takes it as its text share,
# and it caps the share that follows a source's measured recall. The labels source has no recall, and
# its triplets' members are labelled, so none of them borrows.
BORROWED_SOURCES = ("rules", "hybrid", "unseen")


def cross_validate_borrowed(bank: Bank, sets: dict[str, list[list[int]]], text: np.ndarray, seeds: int = 1) -> dict:
    """Leave one book out, Prob2Vec with its defaults: choose ``borrowed_text_weight`` on the other books'
    tuning triplets, measure it on the held-out book's, and score it on that book's fresh triplets too
    (``cv_triplets``: a book's first and third samples' triplets, and its second sample's as fresh; a
    genre dev sample, when loaded, is a fold of its own with no fresh set).

    A weight is scored on the mean over ``BORROWED_SOURCES``, each book counting once: the weight is the
    text share of a row that borrowed and the cap of the share that follows the source's recall, so it
    acts wherever the concepts are known to be incomplete, not only where rules find nothing. Until stop
    37 it was chosen on the ``unseen`` source and the first samples' triplets alone. With ``seeds`` > 1
    each weight is scored over draws 0..seeds-1 of the ensemble. Ties go to the shipped weight, and by
    stop 23's rule a weight replaces it only when the folds' choices beat it held out."""
    tuning, fresh = cv_triplets(bank)
    for name in devsets.GENRE_DEV.values():
        if name in bank.triplets:
            tuning[name] = bank.triplets[name]
    folds = list(tuning)
    d = METHODS["prob2vec"].defaults
    shipped = float(d["borrowed_text_weight"])
    weights = sorted(set(BORROWED_WEIGHTS) | {shipped})
    parts = {"tuning": tuning, "fresh": fresh}
    # judged[part][weight][source][book]: every draw's judgements of the book's triplets, one after another
    judged = {part: {wb: {s: {b: [] for b in triplets} for s in BORROWED_SOURCES} for wb in weights} for part, triplets in parts.items()}
    for source in BORROWED_SOURCES:
        recall = concept_recall(bank, sets[source])
        for seed in range(max(1, seeds)):
            params = {"text_weight": 0.0, "borrow_k": 0, "seed": seed * int(d["ensemble"])}
            base = embed("prob2vec", BankData(sets[source], len(bank.slugs), extracted=True), params)  # trained once per draw
            for wb in weights:
                rows = text_weights_from_recall(recall, d["text_weight"], wb) if d["text_weight_from_recall"] else None
                vectors = fill(base.vectors, base.missing, text, d["borrow_k"], d["text_weight"], wb, rows).vectors
                for part, triplets in parts.items():
                    for b, t in triplets.items():
                        judged[part][wb][source][b].append(triplet_correct(vectors, t))

    def accuracy(wb: float, books: list[str], part: str = "tuning", sources: tuple[str, ...] = BORROWED_SOURCES) -> float | None:
        books = [b for b in books if b in parts[part]]
        if not books:
            return None
        return float(np.mean([np.concatenate(judged[part][wb][s][b]).mean() for s in sources for b in books]))

    def best(books: list[str]) -> float:
        return max(weights, key=lambda wb: (round(accuracy(wb, books) or 0.0, 9), wb == shipped))

    report: dict[str, dict] = {}
    for held in folds:
        chosen = best([b for b in folds if b != held])
        report[held] = {"chosen": chosen, "held_out_accuracy": accuracy(chosen, [held]), "default_accuracy": accuracy(shipped, [held]),
                        "plain": accuracy(d["text_weight"], [held]),
                        "fresh_accuracy": accuracy(chosen, [held], "fresh"), "default_fresh_accuracy": accuracy(shipped, [held], "fresh")}
    chosen = best(folds)
    report["all"] = {"chosen": chosen, "accuracy": accuracy(chosen, folds), "default": shipped, "default_accuracy": accuracy(shipped, folds),
                     "plain_accuracy": accuracy(d["text_weight"], folds),
                     "fresh_accuracy": accuracy(chosen, folds, "fresh"), "default_fresh_accuracy": accuracy(shipped, folds, "fresh"),
                     "folds_accuracy": float(np.mean([report[b]["held_out_accuracy"] for b in folds])),
                     "shipped_folds_accuracy": float(np.mean([report[b]["default_accuracy"] for b in folds])),
                     "by_source": {s: {wb: {part: accuracy(wb, folds, part, (s,)) for part in parts} for wb in weights}
                                   for s in BORROWED_SOURCES}}
    return report


def compare_fallback_texts(bank: Bank, sets: dict[str, list[list[int]]], methods: list[str], texts: dict[str, np.ndarray]) -> dict:
    """Each concept method, every source, with each fallback text; and, per method, the choice between
    the texts made leaving one triplet set out (chosen on the other sets' mean accuracy over the four
    sources, each set counting once; ties go to the first text named, the cheaper LSA). The demo's
    triplets never choose."""
    concept_methods = [m for m in methods if METHODS[m].kind == "concepts"]
    held_sets = [b for b in (*BOOK_ORDER[:3], *devsets.GENRE_DEV.values()) if b in bank.triplets]
    runs = {name: table1(bank, sets, concept_methods, vectors) for name, vectors in texts.items()}

    def accuracy(name: str, method: str, books: list[str]) -> float:
        return float(np.mean([runs[name][method][s][b]["accuracy"] for s in SOURCES for b in books]))

    def best(method: str, books: list[str]) -> str:
        return max(texts, key=lambda name: round(accuracy(name, method, books), 9))

    choice: dict[str, dict] = {}
    for method in concept_methods:
        rows: dict[str, dict] = {}
        for held in held_sets:
            chosen = best(method, [b for b in held_sets if b != held])
            rows[held] = {"chosen": chosen, "held_out_accuracy": accuracy(chosen, method, [held]),
                          **{name: accuracy(name, method, [held]) for name in texts}}
        rows["held_out_mean"] = float(np.mean([rows[h]["held_out_accuracy"] for h in held_sets]))
        rows["all"] = {"chosen": best(method, held_sets), **{name: accuracy(name, method, held_sets) for name in texts}}
        choice[method] = rows
    return {"results": runs, "choice": choice, "methods": concept_methods, "sets": held_sets}


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="prob2vec,onehot,blend,svd-cds,minilm", help="comma-separated, or all")
    parser.add_argument("--cv", action="store_true", help="also run the cross-validation that chose the defaults")
    parser.add_argument("--thresholds-alone", action="store_true",
                        help="the hybrid source's learned thresholds chosen for the model alone, not against the rules (not the product's choice)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-held-out", action="store_true",
                        help="measure each book's recall on every label, as before stop 35, not on its held-out second sample")
    parser.add_argument("--fallback-text", choices=("lsa", "minilm"), default=METHODS["prob2vec"].defaults["fallback_text"],
                        help="the text vectors of the concept methods' fallback (default: the shipped default)")
    parser.add_argument("--no-solutions", action="store_true",
                        help="the rules and the learned half read the statements alone, as before stop 39 (RULES_READ_SOLUTIONS=false)")
    parser.add_argument("--triplet-share", action="store_true",
                        help="the text share from accepted triplets on (README step 5; not the default): a collection with 30 "
                             "accepted triplets (the first and third samples', the demo's) chooses its share on them, judged out of fold")
    parser.add_argument("--seeds", type=int, default=0, metavar="N",
                        help="also: Prob2Vec and blend over N draws (mean and SD of the accuracy); with --cv, every setting is scored over N draws")
    parser.add_argument("--oracles", action="store_true",
                        help="also: Prob2Vec and concept overlap on the rules with every wrong concept dropped, or every missed one "
                             "added, on labelled problems (what each kind of rule error costs), and the triplets plain overlap orders right")
    parser.add_argument("--compare-fallback-text", action="store_true",
                        help="also: every concept method and source with the LSA and with the MiniLM fallback text, and which one to ship")
    extra = parser.add_mutually_exclusive_group()
    extra.add_argument("--test-splits", action="store_true",
                       help="also import and measure the test splits (TheoremQA, MATH; TEST_SETS.md): never tune on them")
    extra.add_argument("--genre-dev", action="store_true",
                       help="also import and measure the genre dev samples of those collections (tuning data, with triplets)")
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    methods = list(METHODS) if args.methods == "all" else args.methods.split(",")
    started = time.monotonic()
    if (args.test_splits or args.genre_dev) and devsets.missing_reason(collections=devsets.TEST_SETS):
        print(f"skipped: {devsets.missing_reason(collections=devsets.TEST_SETS)}")
        return 0
    bank = load_bank(test_splits=args.test_splits, genre_dev=args.genre_dev)
    if args.no_held_out:
        bank.held_out.clear()
    bank.share_triplets = args.triplet_share
    bank.reads_solutions = not args.no_solutions
    order = [*BOOK_ORDER, *(n for n in (*devsets.THIRD_SAMPLES.values(), *devsets.SECOND_SAMPLES.values()) if n in bank.triplets),
             *(devsets.TEST_SETS.values() if args.test_splits else ()), *(devsets.GENRE_DEV.values() if args.genre_dev else ())]
    sets, info = source_sets(bank, learned_config=learned.LearnedConfig(thresholds_against_rules=not args.thresholds_alone))
    if args.fallback_text == "minilm":
        text = minilm_vectors(bank.texts)
    else:
        text = lsa_vectors(bank.texts, dim=int(METHODS["prob2vec"].defaults["text_dim"]))
    shares: dict[str, dict] = {}
    results = table1(bank, sets, methods, text, shares)
    cv = {**cross_validate(bank, sets["labels"], text, seeds=max(1, args.seeds)), "borrowed": cross_validate_borrowed(bank, sets, text, seeds=max(1, args.seeds))} if args.cv else None
    spread = seed_spread(bank, sets, methods, text, args.seeds) if args.seeds > 1 else None
    mended = oracles(bank, sets, text, seeds=max(1, args.seeds)) if args.oracles else None
    compared = None
    if args.compare_fallback_text:
        both = {"lsa": lsa_vectors(bank.texts, dim=int(METHODS["prob2vec"].defaults["text_dim"])), "minilm": minilm_vectors(bank.texts)}
        compared = compare_fallback_texts(bank, sets, methods, both)
    if args.json:
        print(json.dumps({"bank": len(bank.texts), "triplets": {b: len(t) for b, t in bank.triplets.items()}, **info,
                          "rules_recall": recall_per_book(bank, sets["rules"]),
                          "results": results, "triplet_share": shares, "cv": cv, "fallback_text": compared, "seeds": spread,
                          "oracles": mended}, indent=1, default=str))
        return 0
    no_concepts = {s: sum(1 for b in BOOK_ORDER[:3] for row in bank.triplets[b] for i in row if not sets[s][i]) for s in SOURCES}
    print(("the rules read each problem's statement and solution" if bank.reads_solutions else "the rules read the statements alone") + "; "
          f"fallback text: {args.fallback_text}; recall measured on " + ("every label" if not bank.held_out else f"the {len(bank.held_out)} held-out problems (second samples)"))
    recall = recall_per_book(bank, sets["rules"])
    print("rules' recall per book, as the text share uses it: " + "; ".join(
        f"{book} {r['recall']:.3f} on {r['measured_on']} (every label {r['every_label']:.3f}), text share {r['text_share']:.2f}"
        for book in BOOK_ORDER[:3] if (r := recall.get(book)) and r["recall"] is not None
    ))
    print(f"bank: {len(bank.texts)} problems; triplets: " + ", ".join(f"{b} {len(bank.triplets[b])}" for b in order))
    print(f"hybrid: {info['learned_concepts']} concepts learned, {info['added']} concepts added, {info['hybrid_seconds']} s")
    for source, by_group in shares.items():
        print(f"Prob2Vec on {source}: text share chosen on a collection's accepted triplets (README step 5): " + ("; ".join(
            f"{g} {r['share']:.2f} on {r['triplets']} (recall's {r['recall_share']:.2f}; {pct(r['recall_share_accuracy'])} -> {pct(r['accuracy'])}%, "
            f"out of fold {pct(r['out_of_fold_accuracy'])}%)" for g, r in by_group.items()) or "none"))
    print("triplet members without concepts (dev books): " + ", ".join(f"{s} {n}" for s, n in no_concepts.items()))
    what = {
        **{name: " (TEST split: rules never written from it, so its 'rules' are 'unseen')" for name in devsets.TEST_SETS.values()},
        **{name: " (second sample: fresh problems of the book, no rule written from them)" for name in devsets.SECOND_SAMPLES.values()},
        **{name: " (third sample: tuning data, rules may be written from it)" for name in devsets.THIRD_SAMPLES.values()},
    }
    for book in order:
        print(f"\n{book} ({len(bank.triplets[book])} triplets){what.get(book, '')}: accuracy % [95% bootstrap interval]")
        print(f"  {'method':24} " + " ".join(f"{s:>18}" for s in (*SOURCES, "text")))
        for method in methods:
            cells = []
            for source in (*SOURCES, "text"):
                r = results.get(method, {}).get(source, {}).get(book)
                cells.append(f"{pct(r['accuracy'])} [{pct(r['low'])}-{pct(r['high'])}]" if r else "")
            print(f"  {method:24} " + " ".join(f"{c:>18}" for c in cells))
    if "prob2vec" in results:
        print("\nwhy Prob2Vec's triplets fail: each kind of triplet (what the concept sets alone say), right / all;"
              "\n  tie = B and C have the same concepts (only the text can order them), overlap agrees / disagrees ="
              "\n  A shares more / fewer of its concepts with B than with C, even = as many")
        for book in order:
            for source in ("labels", "rules"):
                kinds = results["prob2vec"][source][book]["anatomy"]
                print(f"  {book:14} {source:7} " + "  ".join(
                    f"{kind.replace('_', ' ')} {kinds[kind]['correct']}/{kinds[kind]['triplets']}" for kind in ANATOMY))
    if cv:
        over = f", each setting over {args.seeds} draws" if args.seeds > 1 else ", one draw"
        tuning, fresh = cv_triplets(bank)
        with_third = any(len(tuning[b]) > len(bank.triplets[b]) for b in tuning)
        print(f"\ncross-validation over the dev triplets, labels source{over}: (dim, l2, epochs, blend weight, text weight, ensemble)")
        print(f"  chosen on each book's {'first and third samples' if with_third else 'first sample'}' triplets"
              + ("; fresh = its second sample's triplets, never chosen on" if fresh else ""))

        def tested(row: dict, key: str) -> str:
            return f", fresh {pct(row[key])}%" if row.get(key) is not None else ""

        for name in ("prob2vec", "blend"):
            rows = cv[name]
            held_books = [b for b in BOOK_ORDER[:3] if b in rows]
            for held in held_books:
                r = rows[held]
                print(f"  {name:9} held out {held:10}: chosen on the other two {r['chosen']}, held-out accuracy {pct(r['held_out_accuracy'])}%"
                      f"{tested(r, 'fresh_accuracy')} (the shipped defaults {pct(r['default_accuracy'])}%{tested(r, 'default_fresh_accuracy')})")
            chosen_mean = np.mean([rows[b]["held_out_accuracy"] for b in held_books])
            shipped_mean = np.mean([rows[b]["default_accuracy"] for b in held_books])
            print(f"  {name:9} the folds' choices held out {pct(chosen_mean)}% against the shipped defaults' {pct(shipped_mean)}%: "
                  + ("the folds' choice earns its place" if chosen_mean > shipped_mean else "the defaults stay"))
            a = rows["all"]
            print(f"  {name:9} all three books: best {a['chosen']}, accuracy {pct(a['accuracy'])}%{tested(a, 'fresh_accuracy')}; "
                  f"the shipped defaults {a['default']}: {pct(a['default_accuracy'])}%{tested(a, 'default_fresh_accuracy')}"
                  + (f" (one network: {pct(a['single_network_accuracy'])}%)" if a["single_network_accuracy"] is not None else ""))
        rows = cv["borrowed"]
        folds = [k for k in rows if k != "all"]
        print(f"\nborrowed_text_weight, Prob2Vec, the mean over the {', '.join(BORROWED_SOURCES)} sources{over} "
              "(leave one book out; plain = the text weight, no special weight):")
        for held in folds:
            r = rows[held]
            print(f"  held out {held:14}: chosen on the others {r['chosen']}, held-out accuracy {pct(r['held_out_accuracy'])}%"
                  f"{tested(r, 'fresh_accuracy')} (shipped {pct(r['default_accuracy'])}%{tested(r, 'default_fresh_accuracy')}; plain {pct(r['plain'])}%)")
        a = rows["all"]
        print(f"  the folds' choices held out {pct(a['folds_accuracy'])}% against the shipped weight's {pct(a['shipped_folds_accuracy'])}%: "
              + ("the folds' choice earns its place" if a["folds_accuracy"] > a["shipped_folds_accuracy"] else "the shipped weight stays"))
        print(f"  all folds: best {a['chosen']} ({pct(a['accuracy'])}%{tested(a, 'fresh_accuracy')}); shipped {a['default']} "
              f"({pct(a['default_accuracy'])}%{tested(a, 'default_fresh_accuracy')}); plain ({pct(a['plain_accuracy'])}%)")
        for source, by_weight in a["by_source"].items():
            print(f"    {source:7} " + "  ".join(f"{wb}: {pct(v['tuning'])}" + (f" / fresh {pct(v['fresh'])}" if v["fresh"] is not None else "")
                                             for wb, v in by_weight.items()))
    if spread:
        print(f"\nover {args.seeds} draws: mean accuracy % (SD)")
        for book in order:
            print(f"  {book:14} " + "  ".join(f"{m}/{s} {pct(spread[m][s][book]['mean'])} ({pct(spread[m][s][book]['sd'])})"
                                            for m in spread for s in SOURCES))
    if mended:
        fresh = [n for n in devsets.SECOND_SAMPLES.values() if n in bank.triplets]
        tuning = [n for n in (*BOOK_ORDER[:3], *devsets.THIRD_SAMPLES.values()) if n in bank.triplets]
        over = f"mean over {args.seeds} draws" if args.seeds > 1 else "one draw"
        print(f"\nwhat each kind of rule error costs ({over}): the rules mended with the labels on labelled problems, accuracy %"
              "\n  (fresh / tuning = the mean over the second samples' / the first and third samples' triplet sets)")
        print(f"  {'':26}" + " ".join(f"{b:>11}" for b in order) + f" {'fresh':>7} {'tuning':>7}")

        def oracle_line(label: str, acc: dict[str, float]) -> str:
            means = [np.mean([acc[b] for b in part]) if part else float("nan") for part in (fresh, tuning)]
            return f"  {label:26}" + " ".join(f"{pct(acc[b]):>11}" for b in order) + "".join(f" {pct(m):>7}" for m in means)

        for method in (m for m in mended if m != "overlap"):
            for row, acc in mended[method].items():
                print(oracle_line(f"{method} {row}", acc))
        for source, acc in mended["overlap"].items():
            print(oracle_line(f"overlap of the {source}", acc))
        print("  (overlap: the triplets the concept sets' Jaccard overlap alone orders right, ties and even overlaps counted half)")
    if compared:
        print("\nfallback text, LSA -> MiniLM: accuracy % per concept method and source")
        for book in order:
            print(f"  {book}")
            for method in compared["methods"]:
                cells = [f"{s} {pct(compared['results']['lsa'][method][s][book]['accuracy'])}->{pct(compared['results']['minilm'][method][s][book]['accuracy'])}"
                         for s in SOURCES]
                print(f"    {method:10} " + "  ".join(cells))
        print("  the choice per method, leaving one triplet set out (mean over the four sources; the demo never chooses):")
        for method, rows in compared["choice"].items():
            held = "  ".join(f"{h} {rows[h]['chosen']} {pct(rows[h]['held_out_accuracy'])}" for h in compared["sets"])
            a = rows["all"]
            print(f"    {method:11} held out: {held}; held-out mean {pct(rows['held_out_mean'])}%; "
                  f"all sets LSA {pct(a['lsa'])}% MiniLM {pct(a['minilm'])}%: {a['chosen']}")
    print(f"\n{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
