"""Benchmark: students asking for their next problem and posting attempts, 100,000-problem bank, gunicorn on loopback.

What it measures
    A PostgreSQL database (default ``prob2vec_bench_recommend``) is migrated and filled with the
    100,000 generated problems of ``benchmarks/list_page.py`` (26 modules, ~3 expert labels each),
    every module is opened for practice, and a Prob2Vec embedding is built from the labels
    (``rebuild_embeddings --method prob2vec``). Each simulated student gets an API token. Before the
    rebuild the sentence-model cache (embeddings.TextVector) is filled with seeded random unit
    vectors of the model's width: the run then has the shipped width (5 x 20 + 384 since stop 36)
    without 50 minutes of MiniLM encoding, which benchmarks/text_vectors.py measures; serving does
    not depend on the vectors' values.

    gunicorn then serves the site on 127.0.0.1 with the project's config
    (``prob2vec_site/gunicorn.conf.py``: the app and the practice bank are loaded before forking),
    DEBUG off. ``--students`` threads (default 20), one per student, each with its own keep-alive
    connection, loop until ``--duration`` seconds or ``--max-requests`` requests in all:
        GET /api/students/<id>/next  ->  think  ->  POST /api/attempts (a checked answer, mostly
        wrong, or a self-report)  ->  think
    The think time is uniform on [0, 2 x --think] seconds (default mean 0.5 s: a student reads and
    answers far more slowly, so this is already a busy class). ``--think 0`` is the stress case:
    every student fires as fast as the server answers. Latency is measured by the client, per
    request, from send to the last byte.

    Prints p50/p95/p99/max milliseconds per request kind and overall, the request rate, and the
    errors (any status other than 200/201, or a broken connection). Target: p95 < 50 ms, no errors.
    The client runs on the same machine as the server, database and gunicorn workers, and takes
    CPU from them.

How to run (from the project folder; PostgreSQL on 127.0.0.1:5432, trust auth for postgres)
    .venv/bin/python benchmarks/recommend_load.py                     # fill, serve, measure, drop
    .venv/bin/python benchmarks/recommend_load.py --reuse             # keep the filled database for next time
    .venv/bin/python benchmarks/recommend_load.py --reuse --think 0   # stress: no think time
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/prob2vec_bench_recommend"
sys.path.insert(0, str(ROOT))

from benchmarks._serve import Budget, gunicorn_start, gunicorn_stop  # noqa: E402
from benchmarks.bench_db import db_create, db_drop, db_exists  # noqa: E402
from benchmarks.list_page import bank_fill, percentile  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prob2vec_site.settings")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL, help=f"PostgreSQL database (default {DEFAULT_URL})")
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--students", type=int, default=20, help="concurrent students (default 20)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--max-requests", type=int, default=20_000, help="stop after this many requests in all")
    parser.add_argument("--think", type=float, default=0.5, help="mean think time in seconds between requests (default 0.5)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--reuse", action="store_true", help="reuse the database if it holds the bank; keep it at the end")
    parser.add_argument("--force", action="store_true", help="allow a database whose name does not contain 'bench'")
    return parser.parse_args()


def prepare(args: argparse.Namespace, url: str, name: str) -> list[tuple[int, str]]:
    """Fill (or reuse) the database; returns (student id, token) pairs."""
    reusing = args.reuse and db_exists(url, name)
    if not reusing:
        db_create(url, name, drop_first=True)
    os.environ["DATABASE_URL"] = url
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection, connections
    from rest_framework.authtoken.models import Token

    from embeddings.models import ActiveEmbedding
    from problems.models import Module, Problem
    from practice.models import Attempt

    call_command("migrate", verbosity=0, interactive=False)
    if reusing and Problem.objects.count() != args.problems:
        print(f"database {name} does not hold {args.problems} problems: filling it again")
        connections.close_all()
        db_create(url, name, drop_first=True)
        call_command("migrate", verbosity=0, interactive=False)
        reusing = False
    if not reusing:
        print(f"database {name}: filling {args.problems} problems")
        bank_fill(args.problems, args.seed)
        with connection.cursor() as cur:
            cur.execute("VACUUM ANALYZE")
    Module.objects.update(open_for_practice=True)
    if not ActiveEmbedding.objects.exists():
        text_vectors_stand_in()
        t = time.perf_counter()
        call_command("rebuild_embeddings", "--method", "prob2vec", "--source", "labels", verbosity=0)
        print(f"  prob2vec embedding of {args.problems} problems in {time.perf_counter() - t:.1f} s")
    Attempt.objects.filter(student__username__startswith="bench-student-").delete()  # every run starts fresh
    student = Group.objects.get(name="student")
    pairs = []
    for i in range(args.students):
        user, _ = User.objects.get_or_create(username=f"bench-student-{i:03d}")
        user.groups.add(student)
        pairs.append((user.pk, Token.objects.get_or_create(user=user)[0].key))
    released = Problem.objects.filter(released=True).count()
    print(f"{Problem.objects.count()} problems ({released} released, all modules open), embedding run "
          f"{ActiveEmbedding.objects.get().run_id}, {len(pairs)} students with tokens")
    connections.close_all()
    return pairs


def text_vectors_stand_in(seed: int = 0) -> None:
    """Cache a random unit vector of the sentence model's width for every problem text not cached yet."""
    import numpy as np

    from embeddings.algorithms.text import MINILM_DIM
    from embeddings.models import TextVector
    from embeddings.services import TEXT_VECTOR_MODEL, text_sha256
    from problems.models import Problem

    rng = np.random.default_rng(seed)
    have = set(TextVector.objects.filter(model=TEXT_VECTOR_MODEL).values_list("problem_id", flat=True))
    rows = [(pid, text) for pid, text in Problem.objects.values_list("id", "text") if pid not in have]
    t = time.perf_counter()
    for start in range(0, len(rows), 5000):
        chunk = rows[start : start + 5000]
        v = rng.normal(size=(len(chunk), MINILM_DIM)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        TextVector.objects.bulk_create(
            [TextVector(problem_id=pid, model=TEXT_VECTOR_MODEL, text_sha256=text_sha256(text), vector=v[i].tobytes()) for i, (pid, text) in enumerate(chunk)]
        )
    print(f"  sentence-model cache filled with {len(rows)} random unit vectors (a stand-in for encoding) in {time.perf_counter() - t:.1f} s")


def serve(args: argparse.Namespace, url: str) -> subprocess.Popen:
    return gunicorn_start(url, port=args.port, workers=args.workers)


class Student(threading.Thread):
    def __init__(self, student_id: int, token: str, args: argparse.Namespace, stop_at: float, budget: "Budget", seed: int):
        super().__init__(daemon=True)
        self.student_id, self.args, self.stop_at, self.budget = student_id, args, stop_at, budget
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}
        self.rng = random.Random(seed)
        self.timings: list[tuple[str, float]] = []
        self.errors: list[str] = []
        self.conn: http.client.HTTPConnection | None = None

    def call(self, kind: str, method: str, path: str, body: dict | None = None) -> dict | None:
        if not self.budget.take():
            return None
        data = json.dumps(body).encode() if body is not None else None
        t = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.args.port, timeout=30)
            self.conn.request(method, path, body=data, headers=self.headers)
            response = self.conn.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            self.conn = None
            return None
        self.timings.append((kind, time.perf_counter() - t))
        if response.status not in (200, 201):
            self.errors.append(f"{kind}: HTTP {response.status} {payload[:200]!r}")
            return None
        return json.loads(payload)

    def think(self) -> None:
        if self.args.think > 0:
            time.sleep(self.rng.uniform(0, 2 * self.args.think))

    def run(self) -> None:
        time.sleep(self.rng.uniform(0, max(self.args.think, 0.05)))  # students do not arrive in lock-step
        while time.time() < self.stop_at:
            offered = self.call("GET next", "GET", f"/api/students/{self.student_id}/next")
            if offered is None or offered.get("problem") is None:
                if not self.budget.left():
                    return
                self.think()
                continue
            self.think()
            body = {"problem": offered["problem"]["id"], "reason": offered["reason"]}
            if self.rng.random() < 0.5:
                body["answer"] = str(self.rng.randint(0, 999))  # checked: right 1 time in 1000
            else:
                body["self_report"] = self.rng.choice(["solved", "solved", "partly", "not_solved"])
            if self.call("POST attempt", "POST", "/api/attempts", body) is None and not self.budget.left():
                return
            self.think()


def report(students: list[Student], seconds: float) -> bool:
    timings = [t for s in students for t in s.timings]
    errors = [e for s in students for e in s.errors]
    print()
    print(f"{len(timings)} requests in {seconds:.1f} s ({len(timings) / seconds:.1f} requests/s), {len(errors)} errors; milliseconds")
    header = f"{'request':<14} {'count':>7} {'p50':>7} {'p95':>7} {'p99':>7} {'max':>7}"
    print(header)
    print("-" * len(header))
    overall_p95 = None
    for kind in ("GET next", "POST attempt", "all"):
        values = sorted(ms * 1000 for k, ms in timings if kind in ("all", k))
        if not values:
            continue
        p95 = percentile(values, 95)
        if kind == "all":
            overall_p95 = p95
        print(f"{kind:<14} {len(values):>7} {percentile(values, 50):>7.1f} {p95:>7.1f} {percentile(values, 99):>7.1f} {values[-1]:>7.1f}")
    for e in errors[:10]:
        print("  error:", e)
    ok = overall_p95 is not None and overall_p95 < 50 and not errors
    print(f"target p95 < 50 ms and no errors: {'met' if ok else 'NOT met'}")
    return ok


def main() -> int:
    args = parse_args()
    url = args.database_url
    name = urlparse(url).path.lstrip("/")
    if "bench" not in name and not args.force:
        sys.exit(f"refusing to drop and recreate database {name!r}: its name has no 'bench' (use --force)")
    server = None
    try:
        pairs = prepare(args, url, name)
        server = serve(args, url)
        print(f"{args.students} students, mean think time {args.think} s, for {args.duration:.0f} s or {args.max_requests} requests")
        budget = Budget(args.max_requests)
        stop_at = time.time() + args.duration
        students = [Student(sid, token, args, stop_at, budget, args.seed + i) for i, (sid, token) in enumerate(pairs)]
        t = time.perf_counter()
        for s in students:
            s.start()
        for s in students:
            s.join(timeout=args.duration + 60)
        ok = report(students, time.perf_counter() - t)
        return 0 if ok else 1
    finally:
        gunicorn_stop(server)
        if not args.reuse:
            from django.db import connections

            connections.close_all()
            db_drop(url, name)


if __name__ == "__main__":
    sys.exit(main())
