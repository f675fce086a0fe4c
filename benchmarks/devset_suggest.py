"""Benchmark: how many suggested branches bring weak concepts under 15% FN on a new bank (the dev sets).

What it measures
    Each dev book (``benchmarks/devsets/``: OpenStax, OpenIntro, Grinstead & Snell; text from
    ../shared/data) is a new bank: all its problems, its expert labels, and the starter rules of
    ``problems/demo_course/rules.json`` **without the branches written from that book's misses**
    (each branch records where it came from), i.e. rules never tuned on that text, as a course team
    gets them (``--rules all`` keeps every branch). A concept is weak when the book has at least
    ``--min-positives`` labelled positives of it and the rule misses at least ``--target`` of them.

    For each weak concept a TA is simulated in the rule editor: mine the concept's phrases with
    ``concepts.mining`` (the code behind the editor's "Suggested branches", with the concept's own
    words as hints), append the first suggestion to the pattern, let the preview score it again, and
    repeat until FN falls under the target, nothing is suggested, or ``--max-steps``. Printed per
    concept: the branches appended, FN and FP before and after on the book's labelled problems, and
    the unlabelled problems of the book that the new branches match.

    ``held out``: the same loop seeing the labels of half of the book's labelled problems only (the
    other half in the bank, unlabelled), then FN and FP measured on the other half, which the mining
    never saw; both halves in turn, averaged. Whether the branches carry over to new text of the
    same bank, or only fit the problems they were mined from.

How to run (from the project folder)
    .venv/bin/python benchmarks/devset_suggest.py [--target 0.15] [--min-positives 8] [--rules without|all] [--json]

Plain Python: no Django, no database. Needs ../shared/data (or $PROB2VEC_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from concepts import extraction, mining  # noqa: E402  (pure)
from problems.demo_course import demo_rules, read_tsv  # noqa: E402  (pure)


def book_bank(book: str) -> tuple[list[str], list[str], list[set[str] | None]]:
    """Every problem of a book: ids, texts and label sets (None: not labelled)."""
    labels = devsets.labels(book)
    records = devsets.book_problems(book)
    return ([r["id"] for r in records], [r.get("text") or "" for r in records],
            [set(labels[r["id"]]) if r["id"] in labels else None for r in records])


def halves(ids: list[str], truth: list[set[str] | None]) -> list[list[bool]]:
    """Two complementary halves of the labelled problems (by a hash of the id: fixed across runs)."""
    import hashlib

    side = [int(hashlib.sha1(i.encode()).hexdigest(), 16) % 2 for i in ids]
    return [[t is not None and s == k for t, s in zip(truth, side)] for k in (0, 1)]


def rates(slug: str, matched: list[bool], truth: list[set[str] | None], keep: list[bool]) -> dict:
    tp = fp = fn = tn = 0
    for hit, labels, k in zip(matched, truth, keep):
        if not k or labels is None:
            continue
        positive = slug in labels
        tp += hit and positive
        fp += hit and not positive
        fn += (not hit) and positive
        tn += (not hit) and not positive
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "fn_rate": fn / (fn + tp) if fn + tp else None,
            "fp_rate": fp / (fp + tn) if fp + tn else None}


def matches(pattern: str, ignore_case: bool, texts: list[str]) -> list[bool]:
    if not pattern:
        return [False] * len(texts)
    _, found = extraction.matching(pattern, ignore_case, texts)
    hit = [False] * len(texts)
    for i in found:
        hit[i] = True
    return hit


def author(slug: str, pattern: str, ignore_case: bool, texts: list[str], truth: list[set[str] | None], seen: list[bool],
           target: float, max_steps: int, hints: frozenset[str] = frozenset()) -> dict:
    """Append the first suggestion, again and again, judged on the labels of the `seen` problems only."""
    labels = [None if t is None or not s else (slug in t) for t, s in zip(truth, seen)]
    matched = matches(pattern, ignore_case, texts)
    start = rates(slug, matched, truth, seen)
    steps, seconds = [], []
    now = start
    while (now["fn_rate"] or 0) >= target and len(steps) < max_steps:
        t0 = time.perf_counter()
        mined = mining.mine(texts, labels, matched, ignore_case=ignore_case, suggestions=1, hints=hints)
        seconds.append(time.perf_counter() - t0)
        if not mined.suggestions:
            break
        phrase = mined.suggestions[0].phrase
        pattern = mining.append_branch(pattern, phrase.branch)
        before = matched
        matched = matches(pattern, ignore_case, texts)
        now = rates(slug, matched, truth, seen)
        steps.append({"phrase": phrase.text, "branch": phrase.branch, "fn_recovered": phrase.fn_recovered,
                      "fp_added": phrase.fp_added, "fn_rate": now["fn_rate"], "fp": now["fp"],
                      "unlabelled_new": sum(1 for a, b, t in zip(before, matched, labels) if b and not a and t is None)})
    return {"start": start, "end": now, "steps": steps, "pattern": pattern, "matched": matched,
            "mine_seconds": max(seconds) if seconds else 0.0}


def concept_hints(slug: str) -> frozenset[str]:
    """The stems of the concept's slug, name and description, as the editor computes them."""
    rows = read_tsv("concepts.tsv")
    words = {r["slug"]: " ".join((r["slug"].replace("-", " "), r["name"], r["description"])) for r in rows}
    return mining.hint_stems(words.get(slug, slug), list(words.values()))


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=float, default=0.15, help="FN rate to get under (default 0.15)")
    parser.add_argument("--min-positives", type=int, default=8, help="labelled positives a concept needs in the book")
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("--rules", choices=["without", "all"], default="without",
                        help="starter rules without the book's own branches (default), or all of them")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0

    out: dict = {"target": args.target, "rules": args.rules, "books": {}}
    for book, name in devsets.BOOKS.items():
        ids, texts, truth = book_bank(book)
        rules = demo_rules(name if args.rules == "without" else "")
        everyone = [t is not None for t in truth]
        folds = halves(ids, truth)
        weak = []
        for slug in sorted(demo_rules()):
            spec = rules.get(slug, {"pattern": "", "ignore_case": True})
            r = rates(slug, matches(str(spec["pattern"]), bool(spec["ignore_case"]), texts), truth, everyone)
            if r["tp"] + r["fn"] >= args.min_positives and (r["fn_rate"] or 0) >= args.target:
                weak.append(slug)
        result: dict = {"problems": len(texts), "labelled": sum(everyone), "concepts": {}}
        for slug in weak:
            spec = rules.get(slug, {"pattern": "", "ignore_case": True})
            pattern, ignore_case = str(spec["pattern"]), bool(spec["ignore_case"])
            hints = concept_hints(slug)
            run = author(slug, pattern, ignore_case, texts, truth, everyone, args.target, args.max_steps, hints)
            held = []
            for k, seen in enumerate(folds):
                other = author(slug, pattern, ignore_case, texts, truth, seen, args.target, args.max_steps, hints)
                unseen = folds[1 - k]
                held.append({"branches": len(other["steps"]),
                             "before": rates(slug, matches(pattern, ignore_case, texts), truth, unseen),
                             "after": rates(slug, other["matched"], truth, unseen)})
            result["concepts"][slug] = {"start": run["start"], "end": run["end"], "steps": run["steps"],
                                        "mine_seconds": run["mine_seconds"], "held_out": held}
        out["books"][name] = result
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    rules_said = "without the book's own branches" if args.rules == "without" else "all branches"
    print(f"starter rules ({rules_said}); target FN < {pct(args.target)}; weak: >= {args.min_positives} positives in the book, FN >= target")
    for name, result in out["books"].items():
        print(f"\n== {name}: {result['problems']} problems, {result['labelled']} labelled, {len(result['concepts'])} weak concepts")
        print(f"{'concept':28} {'pos':>4} {'FN before':>9} {'after':>7} {'FP before':>9} {'after':>7} {'branches':>8} "
              f"{'new unl.':>8} | {'held out: FN':>12} {'->':>2} {'FN':>6} {'FP':>6} {'->':>2} {'FP':>6}  phrases appended")
        for slug, c in result["concepts"].items():
            s, e = c["start"], c["end"]
            reached = "" if (e["fn_rate"] or 0) < args.target else "  (target not reached)"
            h = c["held_out"]

            def mean(key: str, when: str) -> float | None:
                values = [x[when][key] for x in h if x[when][key] is not None]
                return sum(values) / len(values) if values else None

            print(f"{slug:28} {s['tp'] + s['fn']:>4} {pct(s['fn_rate']):>9} {pct(e['fn_rate']):>7} {pct(s['fp_rate']):>9} "
                  f"{pct(e['fp_rate']):>7} {len(c['steps']):>8} {sum(st['unlabelled_new'] for st in c['steps']):>8} | "
                  f"{pct(mean('fn_rate', 'before')):>12} {'->':>2} {pct(mean('fn_rate', 'after')):>6} "
                  f"{pct(mean('fp_rate', 'before')):>6} {'->':>2} {pct(mean('fp_rate', 'after')):>6}  "
                  f"{', '.join(repr(st['phrase']) for st in c['steps'])}{reached}")
    concepts = [c for result in out["books"].values() for c in result["concepts"].values()]
    reached = [c for c in concepts if (c["end"]["fn_rate"] or 0) < args.target]
    branches = [len(c["steps"]) for c in reached]
    print(f"\nweak concepts: {len(concepts)}; under {pct(args.target)} FN: {len(reached)}, with "
          f"{min(branches, default=0)}-{max(branches, default=0)} branches ({sum(branches) / max(len(branches), 1):.1f} on average); "
          f"no suggestion at all: {sum(1 for c in concepts if not c['steps'])}; "
          f"FP added on the labelled problems: {sum(c['end']['fp'] - c['start']['fp'] for c in concepts)}; "
          f"slowest mining: {1000 * max((c['mine_seconds'] for c in concepts), default=0):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
