"""Benchmark: latency of the problem list page at 100,000 problems on PostgreSQL.

What it measures
    A fresh PostgreSQL database (default ``prob2vec_bench_list``) is migrated and filled with
    100,000 generated problems: ~400-character LaTeX-flavoured probability texts built from templates
    with varied words and numbers, in the course's 26 demo modules, 5 collections, ~70% released,
    each with ~3 ground-truth labels from the ~130 demo concepts (mostly of its own module). The
    fill uses bulk_create and ends with VACUUM ANALYZE (the state autovacuum reaches shortly after a
    bulk load; ``--no-vacuum`` runs only ANALYZE, to measure the moments right after the load).

    Then, logged in (force_login) as a TA, it times ``django.test.Client`` GETs through the whole
    Django stack (middleware, session, view, queries, template) for each scenario: the list page,
    page 50, full-text searches for common words (in 20-80% of the problems), words in 1-2% of them,
    rare words and words of one late module (as topic words are in a real bank), a two-word search, page 3 of searches, a module filter, a search with a module
    filter, a two-concept "match all" filter, and the htmx fragment (HX-Request / HX-Target:
    problem-results). Module and concept filters use the last module of the syllabus, the worst case
    for reading pages in module order. After a warm-up it prints a table of mean, p50, p95 and max
    milliseconds, the number of matching problems and the SQL queries per request.
    Targets: list and search p95 < 150 ms.

    Settings come from the environment as usual, except that DEBUG is switched off after
    ``django.setup()`` (as in production: no SQL query log, no template debug info); pass ``--debug``
    to keep the configured value. ``--explain`` prints EXPLAIN ANALYZE of each scenario's queries.

How to run (from the project folder, PostgreSQL on 127.0.0.1:5432 with trust auth for postgres)
    .venv/bin/python benchmarks/list_page.py                 # fill, measure, drop the database
    .venv/bin/python benchmarks/list_page.py --reuse         # keep the database and reuse it next time
    .venv/bin/python benchmarks/list_page.py --problems 20000 --requests 50
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import statistics
import sys
import time
import warnings
from pathlib import Path
from urllib.parse import urlencode, urlparse

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/prob2vec_bench_list"

sys.path.insert(0, str(ROOT))

from benchmarks.bench_db import db_create, db_drop, db_exists  # noqa: E402
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prob2vec_site.settings")

COLLECTIONS = [("course-bank", 40), ("textbook-a", 25), ("textbook-b", 20), ("exams", 10), ("contest", 5)]

# Query words and roughly how many problems hold them (see the generator below).
COMMON_WORDS = ["probability", "random", "coin"]
MIDDLE_WORDS = ["hypergeometric", "kofi", "museum", "tyres"]  # in ~1-2% of the problems
RARE_WORDS = ["saxophone", "zeppelin", "nosuchword"]
MODULE_WORDS = ["anova", "regression", "markov"]  # in ~2% of the problems, all in one late module


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL, help=f"PostgreSQL database (default {DEFAULT_URL})")
    parser.add_argument("--problems", type=int, default=100_000, help="problems to generate (default 100000)")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per scenario (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed requests per scenario first (default 10)")
    parser.add_argument("--seed", type=int, default=2024, help="random seed of the generated bank")
    parser.add_argument("--reuse", action="store_true", help="reuse the database if it holds the bank; keep it at the end")
    parser.add_argument(
        "--no-vacuum", action="store_true",
        help="only ANALYZE after filling: the state right after a bulk load, before autovacuum has run",
    )
    parser.add_argument("--debug", action="store_true", help="keep the configured DEBUG instead of switching it off")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of the SQL of one request per scenario")
    parser.add_argument("--force", action="store_true", help="allow a database whose name does not contain 'bench'")
    return parser.parse_args()


# --- database life cycle (psycopg2, outside Django) -------------------------------------------------


# --- the generated bank ------------------------------------------------------------------------------

NAMES = ["Alice", "Bob", "Carla", "Deepak", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jamal", "Kofi", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara"]
PLACES = ["factory", "hospital", "casino", "library", "warehouse", "call centre", "school", "bakery", "airport",
          "laboratory", "farm", "stadium", "pharmacy", "museum", "harbour", "cinema"]
ITEMS = ["light bulbs", "batteries", "widgets", "tickets", "chips", "emails", "parcels", "seeds", "phones",
         "tyres", "books", "letters", "valves", "sensors"]
COLOURS = ["red", "blue", "green", "white", "black", "yellow"]
DISTRIBUTIONS = [r"\mathrm{Bin}(n, p)", r"\mathrm{Poisson}(\lambda)", r"\mathcal{N}(\mu, \sigma^2)",
                 r"\mathrm{Exp}(\lambda)", r"\mathrm{Geom}(p)", r"\mathrm{Unif}(0, 1)"]
VERBS = ["Find", "Compute", "Determine", "Calculate", "Estimate", "Derive"]

SETUPS = [
    "A fair coin is tossed ${n}$ times and the number of heads $X$ is recorded.",
    "A biased coin lands heads with probability $p = {p}$; it is tossed until the first head appears.",
    "Two fair dice are rolled and $S$ denotes the sum of the faces shown.",
    "An urn contains ${a}$ {c1} balls and ${b}$ {c2} balls; ${k}$ balls are drawn at random without replacement.",
    "A {place} receives on average ${lam}$ {items} per hour, arriving independently of each other.",
    "{name} shuffles a standard deck of $52$ cards and deals a hand of ${k}$ cards.",
    "The lifetime $T$ of the {items} made in a {place} is modelled as a random variable with mean ${m}$ hours.",
    "In a {place}, ${pct}\\%$ of the {items} are defective; a random sample of ${n}$ is inspected.",
    "{name} and {name2} play a game in which each round is won by {name} with probability ${p}$.",
    "A random variable $X$ has distribution ${dist}$ with parameters chosen so that $\\mathbb{{E}}[X] = {m}$.",
]
QUESTIONS = [
    "{verb} the probability that $X \\geq {k}$, and give the answer to four decimal places.",
    "{verb} $\\mathbb{{E}}[X]$ and $\\operatorname{{Var}}(X)$, showing each step of the computation.",
    "{verb} $P(S = {s})$ and $P(S > {s} \\mid S \\text{{ is even}})$.",
    "{verb} the probability that exactly ${k}$ of them are {c1}, and compare with the binomial approximation.",
    "{verb} the probability that at least one of the ${n}$ items fails within ${m}$ hours.",
    "{verb} a $95\\%$ confidence interval for the mean based on the sample, assuming normality.",
    "{verb} the expected number of rounds until {name} has won ${k}$ rounds in total.",
    "{verb} \\[ P(X = k) = \\binom{{n}}{{k}} p^k (1-p)^{{n-k}} \\] for $k = {k}$ and interpret the result.",
]
EXTRAS = [
    "Assume that the trials are independent and identically distributed.",
    "Use the central limit theorem to justify an approximation where appropriate.",
    "State clearly which random variables you define and what their distributions are.",
    "Hint: condition on the outcome of the first step and use the law of total probability.",
    "Explain whether the events $A$ and $B$ are independent, mutually exclusive, or neither.",
    "Sketch the cumulative distribution function $F(x) = P(X \\le x)$ of the random variable.",
    "Give the answer both as an exact fraction and as a decimal.",
    "Check your answer by a short simulation with ${n}$ repetitions.",
]
RARE = [
    (0.02, "Recognise the hypergeometric distribution of the count and name its parameters."),
    (0.002, "The {place} also hosts a saxophone quartet whose rehearsals do not affect the {items}."),
    (0.0003, "A zeppelin flies over the {place} during the experiment, which may be ignored."),
]


def problem_text(rng: random.Random, module: str = "") -> str:
    v = {
        "n": rng.randint(3, 60), "k": rng.randint(1, 9), "a": rng.randint(2, 20), "b": rng.randint(2, 20),
        "p": rng.choice(["0.1", "0.25", "1/3", "0.4", "0.55", "2/3", "0.7", "0.9"]), "lam": rng.randint(2, 40),
        "m": rng.randint(5, 500), "s": rng.randint(3, 11), "pct": rng.randint(1, 15),
        "name": rng.choice(NAMES), "name2": rng.choice(NAMES), "place": rng.choice(PLACES),
        "items": rng.choice(ITEMS), "dist": rng.choice(DISTRIBUTIONS), "verb": rng.choice(VERBS),
    }
    v["c1"], v["c2"] = rng.sample(COLOURS, 2)
    parts = [rng.choice(SETUPS), rng.choice(QUESTIONS)]
    for chance, sentence in RARE:
        if rng.random() < chance:
            parts.append(sentence)
    if module and rng.random() < 0.5:  # words of one module, as in a real bank ("ANOVA", "Markov")
        parts.append(f"This exercise practises {module}.")
    text = " ".join(parts).format(**v)
    target = 300 + rng.randint(0, 120)  # ~400 characters on average
    for extra in rng.sample(EXTRAS, len(EXTRAS)):
        if len(text) >= target:
            break
        text += " " + extra.format(**v)
    if rng.random() < 0.1:
        text = text.replace("probability", "chance")
    return text


def bank_fill(n: int, seed: int) -> None:
    from django.contrib.auth.models import Group, User

    from concepts.models import Concept, GroundTruthLabel
    from concepts.services import concepts_upsert
    from problems.bank_io import derive_title
    from problems.demo_course import read_tsv
    from problems.models import Module, Problem
    from problems.services import modules_upsert

    rng = random.Random(seed)
    modules_upsert(rows=read_tsv("modules.tsv"))
    concepts_upsert(rows=read_tsv("concepts.tsv"))
    modules = list(Module.objects.order_by("order"))
    concepts = list(Concept.objects.all())
    by_module: dict[int | None, list[int]] = {}
    for c in concepts:
        by_module.setdefault(c.module_id, []).append(c.id)
    all_concepts = [c.id for c in concepts]
    names, weights = zip(*COLLECTIONS)
    author = User.objects.create(username="bench-author")
    author.groups.add(Group.objects.get(name="ta"))

    t = time.perf_counter()
    batch: list[Problem] = []
    labels: list[tuple[str, str, list[int]]] = []
    for i in range(n):
        module = rng.choice(modules)
        text = problem_text(rng, module.name)
        collection = rng.choices(names, weights)[0]
        source_id = f"{collection[:2].upper()}-{i:06d}"
        batch.append(
            Problem(
                collection=collection, source_id=source_id, title=derive_title(text), text=text, module=module,
                level=rng.choice(["", "easy", "medium", "hard"]), answer=str(rng.randint(0, 999)),
                released=rng.random() < 0.7, author=author if rng.random() < 0.3 else None,
                source=f"generated by benchmarks/list_page.py seed {seed}",
            )
        )
        own = by_module.get(module.id) or all_concepts
        chosen = set(rng.sample(own, min(len(own), rng.choice([2, 2, 3, 3]))))
        if rng.random() < 0.4:
            chosen.add(rng.choice(all_concepts))
        labels.append((collection, source_id, sorted(chosen)))
        if len(batch) == 5000:
            Problem.objects.bulk_create(batch, batch_size=2500)
            batch = []
    Problem.objects.bulk_create(batch, batch_size=2500)
    print(f"  {n} problems in {time.perf_counter() - t:.1f} s")

    t = time.perf_counter()
    ids = {(c, s): pk for pk, c, s in Problem.objects.values_list("id", "collection", "source_id").iterator(chunk_size=10_000)}
    rows = [
        GroundTruthLabel(problem_id=ids[(c, s)], concept_id=cid, created_by=author)
        for c, s, cids in labels
        for cid in cids
    ]
    GroundTruthLabel.objects.bulk_create(rows, batch_size=10_000)
    print(f"  {len(rows)} ground-truth labels in {time.perf_counter() - t:.1f} s")


# --- measuring -------------------------------------------------------------------------------------


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = min(len(sorted_values), max(1, math.ceil(q / 100 * len(sorted_values))))
    return sorted_values[rank - 1]


def main() -> int:
    args = parse_args()
    url = args.database_url
    p = urlparse(url)
    if p.scheme not in {"postgres", "postgresql"} or not p.path.lstrip("/"):
        sys.exit(f"--database-url must be a postgres:// URL naming a database, got {url}")
    name = p.path.lstrip("/")
    if "bench" not in name and not args.force:
        sys.exit(f"refusing to drop and recreate database {name!r}: its name has no 'bench' (use --force)")

    reusing = args.reuse and db_exists(url, name)
    if not reusing:
        db_create(url, name, drop_first=True)
    os.environ["DATABASE_URL"] = url
    import django

    django.setup()
    warnings.filterwarnings("ignore", message="No directory at")  # whitenoise: STATIC_ROOT is not collected here
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from concepts.models import Concept, GroundTruthLabel
    from problems.models import Module, Problem

    if not args.debug:
        settings.DEBUG = False  # before the first request: template engines are built lazily

    try:
        call_command("migrate", verbosity=0, interactive=False)
        if reusing and Problem.objects.count() != args.problems:
            print(f"database {name} does not hold {args.problems} problems: filling it again")
            connections.close_all()
            db_create(url, name, drop_first=True)
            call_command("migrate", verbosity=0, interactive=False)
            reusing = False
        if reusing:
            print(f"database {name}: reused ({args.problems} problems)")
        else:
            print(f"database {name}: filling")
            t = time.perf_counter()
            bank_fill(args.problems, args.seed)
            print(f"  filled in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        with connection.cursor() as cur:
            cur.execute("ANALYZE" if args.no_vacuum else "VACUUM ANALYZE")
        print(f"{'ANALYZE' if args.no_vacuum else 'VACUUM ANALYZE'} in {time.perf_counter() - t:.1f} s")
        print(
            f"{Problem.objects.count()} problems, {GroundTruthLabel.objects.count()} labels, "
            f"{Module.objects.count()} modules, {Concept.objects.count()} concepts; "
            f"PostgreSQL {connection.pg_version}; DEBUG={settings.DEBUG}"
        )

        ta, _ = User.objects.get_or_create(username="bench-ta")
        ta.groups.set([Group.objects.get(name="ta")])
        client = Client(HTTP_HOST="localhost")
        client.force_login(ta)

        # The last module in the syllabus: the worst case for reading pages in module order.
        last = Module.objects.order_by("-order", "-name").first()
        pair = list(Concept.objects.filter(module=last).order_by("slug").values_list("slug", flat=True)[:2])
        htmx = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "problem-results"}
        scenarios: list[tuple[str, list[dict[str, str]], dict[str, str]]] = [
            ("list page", [{}], {}),
            ("list page 50", [{"page": "50"}], {}),
            ("search, common words", [{"q": w} for w in COMMON_WORDS], {}),
            ("search, 1-2% words", [{"q": w} for w in MIDDLE_WORDS], {}),
            ("search, rare words", [{"q": w} for w in RARE_WORDS], {}),
            ("search, a module's word", [{"q": w} for w in MODULE_WORDS], {}),
            ("search, 2 words", [{"q": "red balls"}, {"q": "fair dice"}, {"q": "expected rounds"}], {}),
            ("search, page 3", [{"q": w, "page": "3"} for w in COMMON_WORDS + MIDDLE_WORDS[:2]], {}),
            ("module filter", [{"module": str(last.pk)}], {}),
            ("search + module", [{"q": w, "module": str(last.pk)} for w in COMMON_WORDS + MIDDLE_WORDS[:2]], {}),
            ("concepts, match all", [{"concepts": pair, "match": "all"}], {}),
            ("htmx fragment, search", [{"q": w} for w in COMMON_WORDS + MIDDLE_WORDS + MODULE_WORDS[:1]], htmx),
            ("htmx fragment, page 2", [{"page": "2"}], htmx),
        ]

        def get(params: dict[str, str], headers: dict[str, str]):
            response = client.get("/problems/?" + urlencode(params, doseq=True), **headers)
            if response.status_code != 200:
                raise SystemExit(f"GET /problems/?{urlencode(params, doseq=True)} answered {response.status_code}")
            return response

        print()
        print(f"{args.requests} timed requests per scenario after {args.warmup} warm-up requests; milliseconds")
        header = f"{'scenario':<24} {'matches':>15} {'queries':>7} {'mean':>7} {'p50':>7} {'p95':>7} {'max':>7}"
        print(header)
        print("-" * len(header))
        for label, variants, headers in scenarios:
            counts = []
            with CaptureQueriesContext(connection) as ctx:
                for params in variants:
                    found = re.search(rb"<strong>(\d+) problems?</strong>", get(params, headers).content)
                    counts.append(int(found.group(1)) if found else -1)
            queries = len(ctx.captured_queries) // len(variants)
            if args.explain:
                for q in ctx.captured_queries[:queries]:
                    if "problems_problem" in q["sql"]:
                        with connection.cursor() as cur:
                            cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + q["sql"])
                            print(f"--- {label}: {q['sql'][:300]}")
                            print("\n".join(row[0] for row in cur.fetchall()))
            for i in range(args.warmup):
                get(variants[i % len(variants)], headers)
            times = []
            for i in range(args.requests):
                params = variants[i % len(variants)]
                t0 = time.perf_counter()
                get(params, headers)
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            matches = str(counts[0]) if min(counts) == max(counts) else f"{min(counts)}..{max(counts)}"
            print(
                f"{label:<24} {matches:>15} {queries:>7} {statistics.fmean(times):>7.1f}"
                f" {percentile(times, 50):>7.1f} {percentile(times, 95):>7.1f} {times[-1]:>7.1f}"
            )
        print()
        print("targets: list and search p95 < 150 ms")
    finally:
        connections.close_all()
        if not args.reuse:
            db_drop(url, name)
            print(f"database {name} dropped")
        else:
            print(f"database {name} kept (--reuse)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
