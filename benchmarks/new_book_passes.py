"""Benchmark: what one rule pass on a newly imported book buys, over several authors: recall on
problems no author saw, and the book's similar problems.

What it measures
    A pass folder holds what one author wrote for each book they read as new
    (``rule_workbench.py NAME ... --new-book K``): ``<book>.json`` files ({"slug": ["regex", ...]}) for
    some of ``openstax``, ``openintro`` and ``gs``, and ``draw.json`` ({"k": 30, "pick": "random" |
    "fewest", "seed": 0}) saying which K labelled problems the author saw (without it: 30, random,
    seed 0, the draw of ``benchmarks/devsets/new-book-pass/``).

    1. Recall. Different draws show different problems, so every pass of a book is scored on the
       same problems: the book's labelled problems that none of the given folders' draws showed.
       FN rate (mean over concepts, the paper's figure) and micro recall, with the rules as a course
       would have them without that book (every branch naming it left out), before and after the
       pass. Then, per kind of draw, the mean and SD over authors of the FN points the pass took off.
       One pass is one draw of an author: two authors with the same 30 labels have differed by 9
       points on the same problems. ``--pooled`` also scores the authors' branches together (per kind
       of draw, and every pass), as a course team that each wrote a pass would have them; each branch
       is matched as a rule of its own, so a pool is measured even where the joined rule would be
       over the editor's 2,000 characters (those concepts are named).
    2. Triplets (unless ``--skip-triplets``). More concepts found has not always meant better similar
       problems (README, *The starter rules*). The bank of ``devset_table1.py`` (the demo course and
       the three dev books) is embedded with each book's problems through the rules without it, as
       they are and then with each folder's pass for that book (the demo's through every rule); each
       book's expert triplets are scored with the app's shipped defaults: Prob2Vec over ``--seeds``
       draws of its ensemble (mean) and concept overlap (``onehot``), beside MiniLM on the text. The
       triplets' problems are labelled problems of the book, some of them among those an author saw:
       that is the course's view of its similar problems after the pass, not a held-out figure. The
       second table keeps only the triplets none of whose problems any given draw showed (few: a
       course's 30 labels touch most triplets), where a pass can only help through branches that
       carry to problems its author never read.

How to run (from the project folder; pure code, no database)
    .venv/bin/python benchmarks/new_book_passes.py benchmarks/devsets/new-book-pass benchmarks/devsets/new-book-pass/*/ [--seeds 5] [--skip-triplets] [--pooled]

The books are read from ../shared/data (or $PROB2VEC_SHARED_DATA); MiniLM vectors are cached in
benchmarks/out/ as by devset_table1.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets, devset_table1, rule_quality, rule_workbench  # noqa: E402
from concepts import extraction  # noqa: E402  (pure)
from embeddings.algorithms.methods import METHODS, embed  # noqa: E402  (pure)
from embeddings.algorithms.metrics import triplet_correct  # noqa: E402

BOOKS = ("openstax", "openintro", "gs")
DEFAULT_DRAW = {"k": 30, "pick": "random", "seed": 0}


@dataclass
class Pass:
    name: str  # as printed
    draw: dict  # {"k", "pick", "seed"}
    books: dict[str, dict[str, list[str]]]  # book -> proposals


def name_of(folder: Path) -> str:
    """A pass folder as printed: relative to benchmarks/devsets/ where it lies there."""
    devsets_dir = ROOT / "benchmarks" / "devsets"
    resolved = folder.resolve()
    return str(resolved.relative_to(devsets_dir)) if resolved.is_relative_to(devsets_dir) else str(folder)


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None


def read_pass(folder: Path) -> Pass:
    """A pass folder: its proposals by book and its draw; a bad or empty folder is named (ValueError)."""
    books = {book: _json(folder / f"{book}.json") for book in BOOKS if (folder / f"{book}.json").exists()}
    if not books:
        raise ValueError(f"{folder}: no {', '.join(f'{b}.json' for b in BOOKS)} in it")
    draw = dict(DEFAULT_DRAW)
    if (folder / "draw.json").exists():
        draw.update(_json(folder / "draw.json"))  # type: ignore[arg-type]
    if draw["pick"] not in rule_workbench.PICKS or not isinstance(draw["k"], int) or not isinstance(draw["seed"], int):
        raise ValueError(f"{folder / 'draw.json'}: expected {{\"k\": int, \"pick\": {' | '.join(rule_workbench.PICKS)}, \"seed\": int}}")
    return Pass(name_of(folder), draw, books)  # type: ignore[arg-type]


def unseen_by_all(passes: list[Pass], book: str) -> rule_workbench.Collection:
    """``book`` with its held-out problems set to the labelled ones that no given pass's draw showed."""
    books = rule_workbench.collection(book)
    unseen = dict(books.labels)
    for p in passes:
        if book in p.books:
            for i in rule_workbench.collection(book, p.draw["k"], p.draw["seed"], p.draw["pick"]).labels:
                unseen.pop(i, None)
    books.held_out = unseen
    return books


def recall_table(passes: list[Pass], book: str) -> tuple[int, extraction.Evaluation, dict[str, extraction.Evaluation]]:
    """Every pass of ``book`` scored on the labelled problems no given draw showed: (how many, before any
    pass, after each pass by name)."""
    spec = json.loads(rule_workbench.RULES_FILE.read_text(encoding="utf-8"))
    books = unseen_by_all(passes, book)
    before = None
    after = {}
    for p in passes:
        if book in p.books:
            before, after[p.name] = rule_workbench.score(spec, books, p.books[book], sorted(spec))
    return len(books.held_out), before, after  # type: ignore[return-value]


def pooled_table(passes: list[Pass], book: str) -> dict[str, tuple[extraction.Evaluation, list[str]]]:
    """The pools of ``book``'s passes on the same problems as :func:`recall_table`."""
    spec = json.loads(rule_workbench.RULES_FILE.read_text(encoding="utf-8"))
    books = unseen_by_all(passes, book)
    return {group: score_pooled(spec, books, proposals) for group, proposals in pooled(passes, book).items()}


def pooled(passes: list[Pass], book: str) -> dict[str, dict[str, list[str]]]:
    """Several authors' branches for ``book`` together, each once: per kind of draw, and of every pass ("every")."""
    groups: dict[str, dict[str, list[str]]] = {}
    for p in passes:
        if book not in p.books:
            continue
        for group in (p.draw["pick"], "every"):
            merged = groups.setdefault(group, {})
            for slug, branches in p.books[book].items():
                kept = merged.setdefault(slug, [])
                for branch in branches:
                    if branch not in kept:
                        kept.append(branch)
    return groups


def score_pooled(spec: dict, books: rule_workbench.Collection, proposals: dict[str, list[str]]) -> tuple[extraction.Evaluation, list[str]]:
    """Pooled branches on the held-out problems, and the concepts whose rule they would take over the
    editor's limit. Each proposed branch is matched as a rule of its own (the same concept's matches
    are a union, so the result is the joined rule's), so a pool can be measured past that limit."""
    seen = rule_workbench.visible_rules(spec, books.name, new_book=True)
    visible = {rule.slug: "|".join(p for p in (rule.pattern, rule.statement_pattern) if p) for rule in seen}
    too_long = sorted(
        slug for slug, branches in proposals.items()
        if len("|".join(([visible[slug]] if slug in visible else []) + branches)) > extraction.MAX_PATTERN_LENGTH
    )
    ignore_case = {slug: bool(rule.get("ignore_case", True)) for slug, rule in spec.items()}
    rules = list(seen)
    rules += [extraction.Rule(slug, branch, ignore_case[slug]) for slug, branches in proposals.items() for branch in branches]
    ids = sorted(books.held_out)
    row = {problem: i for i, problem in enumerate(books.ids)}
    found = extraction.extract_many([books.texts[row[i]] for i in ids], extraction.compile_rules(rules))
    return extraction.evaluate(found, [books.held_out[i] for i in ids], sorted(spec)), too_long


def strict_sets(bank: devset_table1.Bank, proposals: dict[str, dict[str, list[str]]]) -> list[list[int]]:
    """Every problem's concepts: each dev book's through the rules without it (plus its proposals, if
    any), the demo's through every rule."""
    spec = json.loads(rule_workbench.RULES_FILE.read_text(encoding="utf-8"))
    rows_of: dict[str, list[int]] = {}
    for i, book in enumerate(bank.books):
        rows_of.setdefault(book, []).append(i)
    found: list[set[str]] = [set() for _ in bank.texts]
    all_rules = rule_quality.compiled_rules()
    for book, rows in rows_of.items():
        if book in BOOKS:
            rules = extraction.compile_rules(rule_workbench.visible_rules(spec, book, proposals.get(book, {}), new_book=True))
        else:
            rules = all_rules
        for i, f in zip(rows, extraction.extract_many([bank.texts[i] for i in rows], rules)):
            found[i] = f
    return bank.sets(found)


def unseen_triplets(bank: devset_table1.Bank, passes: list[Pass]) -> dict[str, np.ndarray]:
    """Per book, a mask of its triplets none of whose three problems any given draw showed its author."""
    masks = {}
    for book in BOOKS:
        shown: set[str] = set()
        for p in passes:
            if book in p.books:
                shown |= set(rule_workbench.collection(book, p.draw["k"], p.draw["seed"], p.draw["pick"]).labels)
        ids = [r["id"] for r in devsets.book_problems(rule_workbench.DEV_SETS[book])]
        rows = [i for i, b in enumerate(bank.books) if b == book]  # the book's problems, in the same order
        shown_rows = {row for row, problem in zip(rows, ids) if problem in shown}
        masks[book] = np.array([not set(t) & shown_rows for t in bank.triplets[book].tolist()], dtype=bool)
    return masks


def accuracies(
    bank: devset_table1.Bank, sets: list[list[int]], text: np.ndarray, seeds: int, masks: dict[str, np.ndarray]
) -> dict[str, dict[str, float]]:
    """Per book, on all its triplets and on those masked in: Prob2Vec's mean accuracy over ``seeds`` draws
    of its ensemble, and concept overlap's."""
    data = devset_table1.bank_data(bank, {"strict": sets}, "strict", text)
    onehot = embed("onehot", data).vectors
    runs: dict[str, list[np.ndarray]] = {book: [] for book in BOOKS}
    for seed in range(seeds):
        vectors = embed("prob2vec", data, {"seed": seed * int(METHODS["prob2vec"].defaults.get("ensemble", 1))}).vectors
        for book in BOOKS:
            runs[book].append(triplet_correct(vectors, bank.triplets[book]))
    out = {}
    for book in BOOKS:
        prob2vec, overlap, unseen = np.mean(runs[book], axis=0), triplet_correct(onehot, bank.triplets[book]), masks[book]
        out[book] = {"prob2vec": float(prob2vec.mean()), "onehot": float(overlap.mean()),
                     "prob2vec_unseen": float(prob2vec[unseen].mean()) if unseen.any() else float("nan"),
                     "onehot_unseen": float(overlap[unseen].mean()) if unseen.any() else float("nan")}
    return out


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="pass folders, each with <book>.json files and optionally draw.json")
    parser.add_argument("--seeds", type=int, default=5, help="draws of Prob2Vec's ensemble to average")
    parser.add_argument("--skip-triplets", action="store_true", help="recall only")
    parser.add_argument("--pooled", action="store_true", help="also: the authors' branches together, per kind of draw and all of them")
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    try:
        passes = [read_pass(folder) for folder in args.folders]
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    width = max(len(p.name) for p in passes) + 2
    for book in BOOKS:
        if not any(book in p.books for p in passes):
            continue
        n, before, after = recall_table(passes, book)
        print(f"\n{book}: {n} labelled problems that no given draw showed; rules without anything written from it: "
              f"FN {pct(before.fn_rate)}, micro recall {pct(before.micro_recall)}, precision {pct(before.micro_precision)}")
        print(f"  {'pass':{width}} {'draw':>12} {'branches':>9} {'FN after':>9} {'FN off':>7} {'recall':>7} {'precision':>9}")
        drops: dict[str, list[float]] = {}
        gains: dict[str, list[float]] = {}
        for p in passes:
            if book not in p.books:
                continue
            ev = after[p.name]
            drop = 100 * ((before.fn_rate or 0) - (ev.fn_rate or 0))
            drops.setdefault(p.draw["pick"], []).append(drop)
            gains.setdefault(p.draw["pick"], []).append(100 * ((ev.micro_recall or 0) - (before.micro_recall or 0)))
            draw = f"{p.draw['pick']}:{p.draw['seed']}"
            print(f"  {p.name:{width}} {draw:>12} {sum(map(len, p.books[book].values())):>9} {pct(ev.fn_rate):>9} {drop:>7.2f} "
                  f"{pct(ev.micro_recall):>7} {pct(ev.micro_precision):>9}")
        for pick, d in drops.items():
            spread = f", SD {statistics.stdev(d):.2f}" if len(d) > 1 else ""
            print(f"  {pick}: {len(d)} author(s), FN off by {statistics.mean(d):.2f} points on average{spread} (range {min(d):.2f} to {max(d):.2f}); "
                  f"micro recall up by {statistics.mean(gains[pick]):.2f}")
        if args.pooled:
            for group, (ev, too_long) in pooled_table(passes, book).items():
                note = f"; joined, the rule of {', '.join(too_long)} would be over the editor's {extraction.MAX_PATTERN_LENGTH} characters" if too_long else ""
                who = "all the passes" if group == "every" else f"the {group} draw's passes"
                print(f"  pooled, {who} together: FN {pct(ev.fn_rate)}, micro recall "
                      f"{pct(ev.micro_recall)}, precision {pct(ev.micro_precision)}{note}")
    if args.skip_triplets:
        return 0
    bank = devset_table1.load_bank()
    text = devset_table1.minilm_vectors(bank.texts)
    masks = unseen_triplets(bank, passes)
    rows = {"strict rules": accuracies(bank, strict_sets(bank, {}), text, args.seeds, masks)}
    for p in passes:
        rows[f"+ {p.name}"] = accuracies(bank, strict_sets(bank, p.books), text, args.seeds, masks)
    minilm = {b: triplet_correct(text, bank.triplets[b]) for b in BOOKS}
    width = max(map(len, rows)) + 2
    for suffix, title in (("", "all"), ("_unseen", "only those with no problem any given draw showed its author")):
        counts = ", ".join(f"{b} {int(masks[b].sum()) if suffix else len(bank.triplets[b])}" for b in BOOKS)
        print(f"\nexpert triplets per book, {title} ({counts}); each book's problems through the rules without it; "
              f"Prob2Vec mean over {args.seeds} draws / concept overlap, accuracy %")
        print(f"{'':{width}}" + "".join(f"{b:>20}" for b in BOOKS))
        for name, acc in rows.items():
            print(f"{name:{width}}" + "".join(f"{100 * acc[b]['prob2vec' + suffix]:>11.1f} / {100 * acc[b]['onehot' + suffix]:5.1f}" for b in BOOKS))
        text_acc = {b: minilm[b][masks[b]] if suffix else minilm[b] for b in BOOKS}
        print(f"{'MiniLM (text, reads no concepts)':{width}}" + "".join(
            f"{100 * float(text_acc[b].mean()) if text_acc[b].size else float('nan'):>19.1f}" for b in BOOKS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
