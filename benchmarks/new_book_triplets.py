"""Benchmark: does a new-book rule pass give better similar problems, not only more concepts?

What it measures
    ``rule_workbench.py NAME score --new-book K`` counts what a pass finds. A course also needs its
    similar problems to get better, and more concepts found has not always meant that (README, *The
    starter rules*: the pass of stop 27 raised recall by 9-20 points and left the triplets mixed). Here
    the bank of ``devset_table1.py`` (the demo course and the three dev books) is embedded with each
    book's problems through the rules as a course would have them without that book (every branch
    naming it left out, ``rule_workbench.visible_rules(..., new_book=True)``), first as they are, then
    with each pass's branches for its book; the demo's problems go through every rule. Each book's
    expert triplets are scored with the app's shipped defaults: Prob2Vec over ``--seeds`` draws of
    its ensemble (mean), and concept overlap (``onehot``).

    A pass folder holds ``<book>.json`` files ({"slug": ["regex", ...]}) for some of ``openstax``,
    ``openintro`` and ``gs``; a book without a file in a folder keeps the strict rules there.

    The triplets' problems are labelled problems of the book, so some of them were among the K a
    pass's author saw: this is the course's view (its similar problems after the pass), not a held-out
    figure.

How to run (from the project folder; pure code, no database)
    .venv/bin/python benchmarks/new_book_triplets.py benchmarks/devsets/new-book-pass [MORE_FOLDERS ...] [--seeds 5]

The books are read from ../shared/data (or $PROB2VEC_SHARED_DATA); MiniLM vectors are cached in
benchmarks/out/ as by devset_table1.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets, devset_table1, rule_workbench  # noqa: E402
from concepts import extraction  # noqa: E402  (pure)
from embeddings.algorithms.methods import METHODS, embed  # noqa: E402  (pure)
from embeddings.algorithms.metrics import triplet_correct  # noqa: E402
from problems.demo_course import demo_rules  # noqa: E402

BOOKS = ("openstax", "openintro", "gs")


def read_passes(folder: Path) -> dict[str, dict[str, list[str]]]:
    """A pass folder's proposals by book; a bad file is named, not a traceback."""
    passes = {}
    for book in BOOKS:
        path = folder / f"{book}.json"
        if path.exists():
            try:
                passes[book] = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not valid JSON: {exc}") from None
    return passes


def name_of(folder: Path) -> str:
    """A pass folder as printed: relative to benchmarks/devsets/ where it lies there."""
    devsets_dir = ROOT / "benchmarks" / "devsets"
    resolved = folder.resolve()
    return str(resolved.relative_to(devsets_dir)) if resolved.is_relative_to(devsets_dir) else str(folder)


def strict_sets(bank: devset_table1.Bank, passes: dict[str, dict[str, list[str]]]) -> list[list[int]]:
    """Every problem's concepts: each dev book's through the rules without it (plus its pass, if any), the
    demo's through every rule."""
    spec = json.loads(rule_workbench.RULES_FILE.read_text(encoding="utf-8"))
    rows_of: dict[str, list[int]] = {}
    for i, book in enumerate(bank.books):
        rows_of.setdefault(book, []).append(i)
    found: list[set[str]] = [set() for _ in bank.texts]
    all_rules = extraction.compile_rules([extraction.Rule(s, str(v["pattern"]), bool(v["ignore_case"])) for s, v in sorted(demo_rules().items())])
    for book, rows in rows_of.items():
        if book in BOOKS:
            rules = extraction.compile_rules(rule_workbench.visible_rules(spec, book, passes.get(book, {}), new_book=True))
        else:
            rules = all_rules
        for i, f in zip(rows, extraction.extract_many([bank.texts[i] for i in rows], rules)):
            found[i] = f
    return bank.sets(found)


def accuracies(bank: devset_table1.Bank, sets: list[list[int]], text: np.ndarray, seeds: int) -> dict[str, dict[str, float]]:
    """Per book: Prob2Vec's mean accuracy over ``seeds`` draws of its ensemble, and concept overlap's."""
    named = {"strict": sets}
    data = devset_table1.bank_data(bank, named, "strict", text)
    out: dict[str, dict[str, float]] = {book: {} for book in BOOKS}
    onehot = embed("onehot", data).vectors
    runs: dict[str, list[float]] = {book: [] for book in BOOKS}
    for seed in range(seeds):
        vectors = embed("prob2vec", data, {"seed": seed * int(METHODS["prob2vec"].defaults.get("ensemble", 1))}).vectors
        for book in BOOKS:
            runs[book].append(float(triplet_correct(vectors, bank.triplets[book]).mean()))
    for book in BOOKS:
        out[book] = {"prob2vec": float(np.mean(runs[book])), "onehot": float(triplet_correct(onehot, bank.triplets[book]).mean())}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="pass folders, each with <book>.json files")
    parser.add_argument("--seeds", type=int, default=5, help="draws of Prob2Vec's ensemble to average")
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    try:
        passes = {name_of(folder): read_passes(folder) for folder in args.folders}
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    for folder, found in passes.items():
        if not found:
            print(f"{folder}: no {', '.join(f'{b}.json' for b in BOOKS)} in it", file=sys.stderr)
            return 2
    bank = devset_table1.load_bank()
    text = devset_table1.minilm_vectors(bank.texts)
    rows = {"strict rules": accuracies(bank, strict_sets(bank, {}), text, args.seeds)}
    for folder, found in passes.items():
        rows[f"+ {folder}"] = accuracies(bank, strict_sets(bank, found), text, args.seeds)
    print(f"expert triplets per book ({', '.join(f'{b} {len(bank.triplets[b])}' for b in BOOKS)}), each book's problems through the "
          f"rules without it; Prob2Vec mean over {args.seeds} draws / concept overlap, accuracy %")
    minilm = {b: float(triplet_correct(text, bank.triplets[b]).mean()) for b in BOOKS}
    width = max(map(len, rows)) + 2
    print(f"{'':{width}}" + "".join(f"{b:>20}" for b in BOOKS))
    for name, acc in rows.items():
        print(f"{name:{width}}" + "".join(f"{100 * acc[b]['prob2vec']:>11.1f} / {100 * acc[b]['onehot']:5.1f}" for b in BOOKS))
    print(f"{'MiniLM (text, reads no concepts)':{width}}" + "".join(f"{100 * minilm[b]:>19.1f}" for b in BOOKS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
