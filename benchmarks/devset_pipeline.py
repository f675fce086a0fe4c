"""Benchmark: the dev sets through the application itself, as a course team would run them.

What it does
    In a throwaway PostgreSQL database: `migrate`, `load_demo --no-users`, then for each dev book
    (benchmarks/devsets/) `import_problems` (every problem of the book, module = chapter),
    `import_labels` (the labels rules were written from: the first and third samples'), `import_labels
    --held-out` (the second sample's, never written from) and `import_triplets --status accepted`; then
    `extract_concepts`, `extract_concepts --source hybrid`, and per book `extractor_report
    --collection BOOK --source rules|hybrid [--held-out] --json` and `evaluate_triplets --collection
    BOOK --methods ... --json`, and again with `--triplets` the second sample's triplets. It prints per
    book the FN/FP rates of rules and hybrid, on every label and on the held-out ones, and the triplet
    accuracy of each method and source with its 95% bootstrap interval: the figures of the README,
    printed by the app's own commands (benchmarks/devset_table1.py is the fast, pure equivalent used
    while tuning).

How to run (from the project folder; PostgreSQL as for `make test`)
    .venv/bin/python benchmarks/devset_pipeline.py [--methods prob2vec,onehot,blend,minilm] [--json] [--keep]

The books are read from ../shared/data (or $PROB2VEC_SHARED_DATA); without them the script says so and stops.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402


def run(database_url: str, methods: str, keep: bool) -> dict:
    from benchmarks.bench_db import db_drop, django_on_fresh_db

    name = django_on_fresh_db(database_url)
    from django.core.management import call_command

    def command(*args: str) -> str:
        out = io.StringIO()
        call_command(*args, stdout=out, stderr=io.StringIO())
        return out.getvalue()

    results: dict = {"books": {}, "seconds": {}}
    tmp = Path(tempfile.mkdtemp(prefix="devset-pipeline-"))
    held_out_triplets: dict[str, Path] = {}  # book -> its second sample's triplets, scored with --triplets
    try:
        started = time.monotonic()
        call_command("migrate", verbosity=0)
        command("load_demo", "--no-users")
        for book in devsets.BOOKS:
            paths = devsets.write_import_files(book, tmp)
            command("import_problems", str(paths["problems"]), "--collection", book)
            command("import_labels", str(paths["labels"]), "--collection", book)
            if "held_out_labels" in paths:  # the second sample: kept out of rule writing, as a course would
                command("import_labels", str(paths["held_out_labels"]), "--collection", book, "--held-out")
                held_out_triplets[book] = paths["held_out_triplets"]
            command("import_triplets", str(paths["triplets"]), "--collection", book, "--status", "accepted")
        results["seconds"]["load"] = round(time.monotonic() - started, 1)
        for source in ("rules", "hybrid"):
            started = time.monotonic()
            results.setdefault("extraction", {})[source] = command("extract_concepts", "--source", source).strip()
            results["seconds"][f"extract {source}"] = round(time.monotonic() - started, 1)
        # The demo course without users has no triplets (its proposers and judges are demo users): rates only.
        for book, short in [*devsets.BOOKS.items(), ("demo", "demo")]:
            row: dict = {}
            for source in ("rules", "hybrid"):
                report = json.loads(command("extractor_report", "--collection", book, "--source", source, "--json"))
                row[f"extractor_{source}"] = {"problems": report["problems"], **report["average"]}
                if book in held_out_triplets:
                    report = json.loads(command("extractor_report", "--collection", book, "--source", source, "--held-out", "--json"))
                    row[f"extractor_{source}_held_out"] = {"problems": report["problems"], **report["average"]}
            if book != "demo":
                started = time.monotonic()
                row["triplets"] = json.loads(command("evaluate_triplets", "--collection", book, "--methods", methods, "--json"))
                if book in held_out_triplets:
                    row["triplets_held_out"] = json.loads(command(
                        "evaluate_triplets", "--collection", book, "--triplets", str(held_out_triplets[book]), "--methods", methods, "--json"
                    ))
                results["seconds"][f"evaluate {short}"] = round(time.monotonic() - started, 1)
            results["books"][short] = row
    finally:
        from django.db import connections

        shutil.rmtree(tmp, ignore_errors=True)
        connections.close_all()
        if not keep:
            db_drop(database_url, name)
    return results


def pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/prob2vec_bench_devsets")
    parser.add_argument("--methods", default="prob2vec,onehot,blend,minilm")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the database (to look at it in the site)")
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    results = run(args.database_url, args.methods, args.keep)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for line in results["extraction"].values():
        print(line)
    print(f"\n{'book':18} {'labelled':>8} {'rules FN':>9} {'rules FP':>9} {'hybrid FN':>10} {'hybrid FP':>10}")
    for book, row in results["books"].items():
        for suffix, name in (("", book), ("_held_out", f"{book} held out")):
            if f"extractor_rules{suffix}" in row:
                r, h = row[f"extractor_rules{suffix}"], row[f"extractor_hybrid{suffix}"]
                print(f"{name:18} {r['problems']:>8} {pct(r['fn_rate']):>9} {pct(r['fp_rate']):>9} {pct(h['fn_rate']):>10} {pct(h['fp_rate']):>10}")
    for book, row in results["books"].items():
        for key, name in (("triplets", book), ("triplets_held_out", f"{book}, held-out problems' triplets")):
            if key in row:
                print_triplets(name, row[key])
    print("\nseconds: " + ", ".join(f"{k} {v}" for k, v in results["seconds"].items()))
    return 0


def print_triplets(name: str, t: dict) -> None:
    print(f"\n{name}: {t['triplets']} triplets, accuracy % [95% bootstrap interval]")
    for method, by_source in sorted(t["results"].items()):
        cells = []
        for source in ("labels", "rules", "hybrid", "text"):
            if source in by_source and by_source[source] is not None:
                low, high = t["intervals"][method][source]
                cells.append(f"{source} {pct(by_source[source])} [{pct(low)}-{pct(high)}]")
        print(f"  {method:10} " + "   ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
