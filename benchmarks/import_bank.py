"""Benchmark: importing the shared problem collections into a fresh PostgreSQL database.

What it measures
    For every collection in ``shared/data/*/problems.jsonl`` (next to the project folder), the time
    to parse the file (``bank_io.parse_problem_file``) and import it
    (``services.problems_import(records=..., default_collection=<folder name>)``), printed as
    problems, seconds and problems/s per collection, then the total. A second pass imports the same
    files again (every problem unchanged: the "re-upload the same file" case). Finally the peak
    memory of the process (``ru_maxrss``) and, with ``--tracemalloc``, the Python allocation peak of
    one extra import run under tracemalloc (slower, so it is timed separately and not reported as
    throughput).

    The shared data holds only ~3,800 problems, so ``--repeat N`` imports N copies of every record
    under distinct ids (``<id>#r2``, ``<id>#r3``, ...), e.g. ``--repeat 10`` for ~37,000 problems.

    The database (default ``prob2vec_bench``) is dropped and created by this script with psycopg2 and
    migrated with ``migrate``; the course's demo modules and concept dictionary are loaded first, so
    labels naming known concept slugs are stored as ground-truth labels. It is dropped again at the
    end unless ``--keep`` is given. Target: >= 5,000 problems/s.

How to run (from the project folder, PostgreSQL on 127.0.0.1:5432 with trust auth for postgres)
    .venv/bin/python benchmarks/import_bank.py
    .venv/bin/python benchmarks/import_bank.py --repeat 10
    .venv/bin/python benchmarks/import_bank.py --database-url postgres://postgres@127.0.0.1:5432/other_bench
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/prob2vec_bench"

sys.path.insert(0, str(ROOT))

from benchmarks.bench_db import db_create, db_drop  # noqa: E402
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prob2vec_site.settings")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL, help=f"PostgreSQL database to (re)create (default {DEFAULT_URL})")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help=f"folder of <collection>/problems.jsonl (default {DATA_DIR})")
    parser.add_argument("--repeat", type=int, default=1, help="import N copies of every record under distinct ids (default 1)")
    parser.add_argument("--no-concepts", action="store_true", help="do not load the demo modules and concepts first")
    parser.add_argument("--tracemalloc", action="store_true", help="also measure the Python allocation peak of one import")
    parser.add_argument("--keep", action="store_true", help="keep the database at the end (default: drop it)")
    parser.add_argument("--force", action="store_true", help="allow a database whose name does not contain 'bench'")
    return parser.parse_args()


def db_name_of(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        sys.exit(f"--database-url must be a postgres:// URL, got {url}")
    name = parsed.path.lstrip("/")
    if not name:
        sys.exit(f"--database-url names no database: {url}")
    return name


def amplified(data: bytes, repeat: int) -> bytes:
    """The file's lines, then `repeat - 1` more copies with the ids suffixed `#r2`, `#r3`, ..."""
    if repeat <= 1:
        return data
    lines = [line for line in data.split(b"\n") if line.strip()]
    out = list(lines)
    for k in range(2, repeat + 1):
        for line in lines:
            obj = json.loads(line)
            obj["id"] = f"{obj['id']}#r{k}"
            out.append(json.dumps(obj, ensure_ascii=False).encode("utf-8"))
    return b"\n".join(out) + b"\n"


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> int:
    args = parse_args()
    files = sorted(args.data_dir.glob("*/problems.jsonl")) if args.data_dir.is_dir() else []
    if not files:
        print(f"No shared data: {args.data_dir}/*/problems.jsonl not found; nothing to benchmark.")
        return 0
    name = db_name_of(args.database_url)
    if "bench" not in name and not args.force:
        sys.exit(f"refusing to drop and recreate database {name!r}: its name has no 'bench' (use --force)")

    collections = [(path.parent.name, amplified(path.read_bytes(), args.repeat)) for path in files]

    db_create(args.database_url, name)
    os.environ["DATABASE_URL"] = args.database_url
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, connections

    from concepts.models import Concept, GroundTruthLabel
    from concepts.services import concepts_upsert
    from problems.bank_io import parse_problem_file
    from problems.demo_course import read_tsv
    from problems.models import Problem
    from problems.services import modules_upsert, problems_import

    try:
        t = time.perf_counter()
        call_command("migrate", verbosity=0, interactive=False)
        print(f"database {name}: created and migrated in {time.perf_counter() - t:.1f} s")
        if not args.no_concepts:
            modules_upsert(rows=read_tsv("modules.tsv"))
            concepts_upsert(rows=read_tsv("concepts.tsv"))
        print(f"{Concept.objects.count()} concepts known; --repeat {args.repeat}; PostgreSQL {connection.pg_version}")
        print()

        def one_pass(title: str) -> float:
            print(title)
            print(f"  {'collection':<40} {'problems':>9} {'created':>8} {'updated':>8} {'unchanged':>9} {'seconds':>8} {'problems/s':>11}")
            total_n = 0
            total_s = 0.0
            for coll, data in collections:
                t0 = time.perf_counter()
                parsed = parse_problem_file(data, f"{coll}.jsonl")
                if parsed.errors:
                    print(f"  {coll}: {len(parsed.errors)} bad lines, skipped (first: {parsed.errors[0]})")
                    continue
                report = problems_import(records=parsed.records, default_collection=coll)
                seconds = time.perf_counter() - t0
                n = len(parsed.records)
                total_n += n
                total_s += seconds
                print(
                    f"  {coll:<40} {n:>9} {report.created:>8} {report.updated:>8} {report.unchanged:>9}"
                    f" {seconds:>8.3f} {n / seconds:>11,.0f}"
                )
            rate = total_n / total_s if total_s else 0.0
            print(f"  {'TOTAL':<40} {total_n:>9} {'':>8} {'':>8} {'':>9} {total_s:>8.3f} {rate:>11,.0f}")
            print()
            return rate

        first = one_pass("Pass 1: fresh import (parse + problems_import)")
        second = one_pass("Pass 2: re-import, every problem unchanged")
        print(f"problems in database: {Problem.objects.count()}, ground-truth labels: {GroundTruthLabel.objects.count()}")
        print(f"import throughput: fresh {first:,.0f} problems/s, unchanged re-import {second:,.0f} problems/s (target >= 5,000)")
        print(f"peak memory (ru_maxrss): {maxrss_mib():.0f} MiB")

        if args.tracemalloc:
            import tracemalloc

            coll, data = max(collections, key=lambda c: len(c[1]))
            with connection.cursor() as cur:  # make it a fresh import again
                cur.execute(
                    "DELETE FROM concepts_groundtruthlabel WHERE problem_id IN"
                    " (SELECT id FROM problems_problem WHERE collection = %s)",
                    [coll],
                )
                cur.execute("DELETE FROM problems_problem WHERE collection = %s", [coll])
            tracemalloc.start()
            parsed = parse_problem_file(data, f"{coll}.jsonl")
            problems_import(records=parsed.records, default_collection=coll)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"tracemalloc peak of parse + fresh import of {coll} ({len(parsed.records)} problems): {peak / 2**20:.1f} MiB")
    finally:
        connections.close_all()
        if not args.keep:
            db_drop(args.database_url, name)
            print(f"database {name} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
