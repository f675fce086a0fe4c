"""Benchmark: quality of the expert regex concept rules on the demo bank.

What it measures
    Loads the concept dictionary (``problems/demo_course/concepts.tsv``), the demo bank with its
    expert ground-truth labels (``problems/demo_course/bank/module-*.jsonl``) and the rules
    (``problems/demo_course/rules.json``), compiles the rules with ``concepts.extraction``, extracts
    concepts from every problem text and compares them with the labels, problem by problem. Prints
    the average false-positive rate FP/(FP+TN) and false-negative rate FN/(FN+TP) over concepts
    (the figures the Prob2Vec paper reports: 0.98% and 9.17%), then the worst concepts.

    With ``--shared DIR`` the rules are also run on every ``DIR/*/problems.jsonl`` (text we did not
    write, without labels from our dictionary): per collection the number of problems, the share with
    at least one extracted concept, the mean number of concepts per problem and the most frequent
    concepts; for TheoremQA, which labels each problem with a theorem, the concepts extracted on the
    problems of a few theorems.

How to run (from the project folder)
    .venv/bin/python benchmarks/rule_quality.py
    .venv/bin/python benchmarks/rule_quality.py --shared ../shared/data

Plain Python: no Django, no database.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "problems" / "demo_course"

THEOREMQA = "theoremqa-probability-statistics"
THEOREMQA_LABELS = [
    "binomial theorem",
    "inclusion-exclusion principle",
    "bayes' theorem",
    "chebyshev's inequality",
    "markov's inequality",
    "central limit theorem",
    "poisson process",
    "p-value",
    "t-test",
    "covariance formula",
    "law of large number",
    "chi-square test",
]


def _load_extraction():
    """Import concepts/extraction.py by path, so that the Django app package is never imported."""
    path = ROOT / "concepts" / "extraction.py"
    spec = importlib.util.spec_from_file_location("prob2vec_extraction", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


extraction = _load_extraction()


def load_concepts(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as f:
        return [row["slug"] for row in csv.DictReader(f, delimiter="\t") if row.get("slug")]


def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_bank(folder: Path) -> list[dict]:
    problems: list[dict] = []
    for path in sorted(folder.glob("module-*.jsonl")):
        problems.extend(load_jsonl(path))
    return problems


def load_rules(path: Path) -> list:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        extraction.Rule(slug, spec["pattern"], bool(spec.get("ignore_case", True)))
        for slug, spec in data.items()
    ]


def pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def print_table(title: str, rows: list[tuple[str, object]]) -> None:
    print(f"\n{title}")
    print(f"  {'concept':34s} {'tp':>4s} {'fp':>4s} {'fn':>4s} {'tn':>4s} {'FN%':>7s} {'FP%':>7s}")
    for slug, s in rows:
        print(f"  {slug:34s} {s.tp:4d} {s.fp:4d} {s.fn:4d} {s.tn:4d} {pct(s.fn_rate):>7s} {pct(s.fp_rate):>7s}")


def evaluate_bank(concepts: list[str], rules: list, compiled) -> None:
    bank = load_bank(COURSE / "bank")
    texts = [p["text"] for p in bank]
    truth = [set(p.get("labels") or []) for p in bank]
    predicted = extraction.extract_many(texts, compiled)
    ev = extraction.evaluate(predicted, truth, concepts)
    ruled = {r.slug for r in rules}
    engines = Counter(compiled.engines.values())
    print(f"problems: {ev.problems}")
    print(f"concepts: {len(concepts)}  rules: {len(rules)}  (engines: {dict(engines)})")
    missing = [c for c in concepts if c not in ruled]
    if missing:
        print(f"concepts without a rule: {', '.join(missing)}")
    unknown = sorted(ruled - set(concepts))
    if unknown:
        print(f"rules for unknown concepts: {', '.join(unknown)}")
    print(f"average FP rate over concepts: {pct(ev.fp_rate).strip()}%")
    print(f"average FN rate over concepts: {pct(ev.fn_rate).strip()}%")
    stats = ev.concepts
    by_fn = sorted(
        (s for s in stats.items() if s[1].fn_rate is not None),
        key=lambda kv: (-kv[1].fn_rate, -kv[1].fn, kv[0]),
    )
    by_fp = sorted(
        (s for s in stats.items() if s[1].fp_rate is not None),
        key=lambda kv: (-kv[1].fp_rate, -kv[1].fp, kv[0]),
    )
    print_table("20 worst concepts by FN rate", by_fn[:20])
    print_table("10 worst concepts by FP rate", by_fp[:10])


def run_shared(shared: Path, compiled) -> None:
    paths = sorted(shared.glob("*/problems.jsonl"))
    if not paths:
        print(f"\nno */problems.jsonl under {shared}")
        return
    for path in paths:
        name = path.parent.name
        problems = load_jsonl(path)
        found = extraction.extract_many([p.get("text") or "" for p in problems], compiled)
        n = len(problems)
        hit = sum(1 for f in found if f)
        mean = sum(len(f) for f in found) / n if n else 0.0
        counts = Counter(c for f in found for c in f)
        print(f"\n== {name}: {n} problems, {100 * hit / n if n else 0:.1f}% with >= 1 concept, "
              f"{mean:.2f} concepts per problem")
        top = ", ".join(f"{slug} {k}" for slug, k in counts.most_common(15))
        print(f"  top concepts: {top}")
        if name == THEOREMQA:
            print("  concepts extracted per theorem label (problems with the label -> concept counts):")
            for label in THEOREMQA_LABELS:
                idx = [i for i, p in enumerate(problems) if label in (p.get("labels") or [])]
                if not idx:
                    continue
                c = Counter(x for i in idx for x in found[i])
                empty = sum(1 for i in idx if not found[i])
                shown = ", ".join(f"{slug} {k}" for slug, k in c.most_common(6)) or "-"
                print(f"    {label!r} ({len(idx)} problems, {empty} with none): {shown}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", type=Path, default=COURSE / "rules.json", help="rules file (JSON)")
    parser.add_argument("--concepts", type=Path, default=COURSE / "concepts.tsv")
    parser.add_argument("--shared", type=Path, metavar="DIR",
                        help="also run the rules on DIR/*/problems.jsonl (e.g. ../shared/data)")
    args = parser.parse_args(argv)

    concepts = load_concepts(args.concepts)
    rules = load_rules(args.rules)
    compiled = extraction.compile_rules(rules)
    evaluate_bank(concepts, rules, compiled)
    if args.shared:
        run_shared(args.shared, compiled)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
