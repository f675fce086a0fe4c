"""Benchmark: which starter branches misfire on solutions, and what reading them in the statement alone gives.

What it measures
    Since stop 39 the rules read each problem's statement, then its solution. A branch written for a
    statement's footprint can also match a solution's working (`\\binom{10}{3} = 120` computed, a
    `5!` written out, `P(A | B)` in a derivation). A rule's branches can be matched in the statement
    alone (its second box in the editor, ``"statement_only": true`` in rules.json; README "Where a
    branch reads"). This asks which starter branches should be, and what that would change:

    1. For each branch of ``problems/demo_course/rules.json`` (flagged or not), on the sets rules may
       be written from (the demo, the first and third samples, the genre dev samples): the
       problems where the branch matches the statement-and-solution text, no branch of its rule
       matches the statement, and so the concept comes from the solution alone: right or wrong by
       the labels.
    2. The choice, by one rule set before looking at any triplet: a branch reads the statement alone
       when what it adds from solutions is wrong more often than right, and wrong at least
       ``--min-wrong`` times (default 2).
    3. Per labelled set, the rules three ways: on the statements alone; on statement and solution
       (the product since stop 39); and with the chosen branches in the statement alone. Average FN
       and FP rate over concepts, micro precision and micro recall. The second samples and test
       splits are printed as well; nothing is chosen on them.

    ``--write`` flags the chosen branches in rules.json (nothing else changes), so that
    ``benchmarks/devset_table1.py --seeds 5`` measures the triplets; ``git checkout
    problems/demo_course/rules.json`` undoes it. Stop 40 did exactly that and kept rules.json
    unflagged: README "Where a branch reads".

How to run (from the project folder; reads ../shared/data, or $PROB2VEC_SHARED_DATA)
    .venv/bin/python benchmarks/statement_scope.py [--min-wrong 2] [--branches 25] [--write]   # about 1.5 minutes

Plain Python: no Django, no database.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from benchmarks.rule_quality import load_concepts  # noqa: E402
from concepts import extraction  # noqa: E402  (pure)
from problems.demo_course import DEMO_DIR, bank_files, demo_rule_branches, join_branches  # noqa: E402  (pure)

Record = tuple[str, str | None, set[str]]  # statement, solution, labels


def demo_records() -> list[Record]:
    rows = [json.loads(line) for path in bank_files() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["text"], r.get("solution"), set(r["labels"])) for r in rows]


def book_records(book: str) -> list[Record]:
    truth = devsets.labels(book)
    records = {r["id"]: r for r in devsets.book_problems(book)}
    return [(records[i]["text"], records[i].get("solution"), set(truth[i])) for i in truth if i in records]


def labelled_sets() -> tuple[dict[str, list[Record]], dict[str, list[Record]]]:
    """(sets rules may be written from, yardsticks): name -> records, for what ../shared/data holds."""
    tuning: dict[str, list[Record]] = {"demo": demo_records()}
    yardsticks: dict[str, list[Record]] = {}
    groups = []
    if not devsets.missing_reason():
        groups += [(devsets.BOOKS, tuning), (devsets.THIRD_SAMPLES, tuning), (devsets.SECOND_SAMPLES, yardsticks)]
    if not devsets.missing_reason(collections=devsets.GENRE_DEV):
        groups.append((devsets.GENRE_DEV, tuning))
    if not devsets.missing_reason(collections=devsets.TEST_SETS):
        groups.append((devsets.TEST_SETS, yardsticks))
    for collections, into in groups:
        for book, name in collections.items():
            records = book_records(book)
            if records:
                into[name] = records
    return tuning, yardsticks


def solution_additions(spec: dict, records: list[Record]) -> dict[tuple[str, int], list[int]]:
    """(slug, branch index) -> [right, wrong]: the problems where the branch gives its concept from the
    solution alone (it matches the rule text, no branch of its rule matches the statement)."""
    found: dict[tuple[str, int], list[int]] = {}
    for slug, rule in spec.items():
        flags = re.ASCII | (re.IGNORECASE if rule.get("ignore_case", True) else 0)
        branches = [re.compile(b["re"], flags) for b in rule["branches"]]
        for statement, solution, labels in records:
            if not solution or not solution.strip() or any(b.search(statement) for b in branches):
                continue
            text = extraction.rule_text(statement, solution)
            for k, branch in enumerate(branches):
                if branch.search(text):
                    found.setdefault((slug, k), [0, 0])[0 if slug in labels else 1] += 1
    return found


def chosen_branches(additions: dict[tuple[str, int], list[int]], min_wrong: int) -> set[tuple[str, int]]:
    return {key for key, (right, wrong) in additions.items() if wrong > right and wrong >= min_wrong}


def flagged(spec: dict, chosen: set[tuple[str, int]]) -> dict:
    """rules.json with exactly the ``chosen`` branches flagged statement-only."""
    out = json.loads(json.dumps(spec))
    for slug, rule in out.items():
        for k, branch in enumerate(rule["branches"]):
            branch.pop("statement_only", None)
            if (slug, k) in chosen:
                branch["statement_only"] = True
    return out


def compiled(spec: dict) -> extraction.CompiledRules:
    """The rules of a rules.json ``spec``, its flagged branches in the statement alone (as ``demo_rules``)."""
    return extraction.compile_rules(
        extraction.Rule(
            slug, join_branches(rule["branches"]), bool(rule.get("ignore_case", True)), join_branches(rule["branches"], statement_only=True)
        )
        for slug, rule in sorted(spec.items())
    )


def figures(found: list[set[str]], records: list[Record], concepts: list[str]) -> str:
    ev = extraction.evaluate(found, [labels for _, _, labels in records], concepts)
    return f"{100 * ev.fn_rate:5.2f} / {100 * ev.fp_rate:4.2f}% p {100 * ev.micro_precision:4.1f} r {100 * ev.micro_recall:4.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-wrong", type=int, default=2, help="wrong additions a branch needs before it reads the statement alone")
    parser.add_argument("--branches", type=int, default=25, help="branches listed, most wrong first")
    parser.add_argument("--write", action="store_true", help="flag the chosen branches statement-only in rules.json")
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"only the demo bank is measured: {reason}")
    spec = demo_rule_branches()
    unflagged = flagged(spec, set())
    concepts = load_concepts()
    tuning, yardsticks = labelled_sets()
    additions: dict[tuple[str, int], list[int]] = {}
    for records in tuning.values():
        for key, (right, wrong) in solution_additions(unflagged, records).items():
            total = additions.setdefault(key, [0, 0])
            total[0] += right
            total[1] += wrong
    chosen = chosen_branches(additions, args.min_wrong)
    right = sum(r for r, _ in additions.values())
    wrong = sum(w for _, w in additions.values())
    # A problem two branches of one rule give from its solution counts once for each.
    print(f"branch matches that give a concept from a solution alone, on {', '.join(tuning)}: right {right}, wrong {wrong}")
    print(f"chosen to read the statement alone (wrong > right, wrong >= {args.min_wrong}): {len(chosen)} branches\n")
    print(f"{'concept':30s} {'branch':>6s} {'right':>5s} {'wrong':>5s}  pattern")
    for (slug, k), (r, w) in sorted(additions.items(), key=lambda kv: (-kv[1][1], kv[1][0], kv[0]))[: args.branches]:
        mark = "*" if (slug, k) in chosen else " "
        print(f"{slug:30s} {k + 1:>5d}{mark} {r:5d} {w:5d}  {spec[slug]['branches'][k]['re'][:70]}")
    print("\n* chosen. Per set: average FN / FP over concepts, micro precision and recall")
    ways = {"statements alone": compiled(unflagged), "statement + solution": compiled(unflagged), "chosen in statement": compiled(flagged(spec, chosen))}
    print(f"{'set':16s} " + " | ".join(f"{w:33s}" for w in ways))
    for kind, sets in (("tuning", tuning), ("yardstick", yardsticks)):
        for name, records in sets.items():
            row = []
            for way, rules in ways.items():
                texts = [s if way == "statements alone" else extraction.rule_text(s, sol) for s, sol, _ in records]
                row.append(f"{figures(extraction.extract_many(texts, rules), records, concepts):33s}")
            print(f"{name:16s} " + " | ".join(row) + ("" if kind == "tuning" else "  (yardstick)"))
    if args.write:
        path = DEMO_DIR / "rules.json"
        path.write_text(json.dumps(flagged(spec, chosen), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"\nflagged {len(chosen)} branches statement-only in {path.relative_to(ROOT)}; `git checkout {path.relative_to(ROOT)}` undoes it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
