"""Benchmark: 50 concurrent users over the main pages and the API, gunicorn on loopback, PostgreSQL.

What it measures
    A throwaway PostgreSQL database (default ``prob2vec_bench_site``) gets what ``make setup`` gives a
    new site: ``migrate``, ``load_demo`` (run with DEBUG on, so the demo logins, label sets, triplets and
    demo class are there too), ``extract_concepts`` and ``rebuild_embeddings --method prob2vec
    --source labels``, plus an ``extractor_report``. Before extraction it adds ``--problems`` generated
    problems (default 5,000; the bank of ``benchmarks/list_page.py``, ~3 expert labels each, ~70%
    released), so the pages work on a bank bigger than the demo's. Modules 1-6 are open for practice
    (the demo course's state). Users ``bench-student-NN`` (with an API token), ``bench-ta-NN`` and
    ``bench-head-NN`` (head TAs, and instructors for one in three) are created with one password.

    gunicorn then serves the site on 127.0.0.1 with the project's config
    (``prob2vec_site/gunicorn.conf.py``; workers and threads as it picks them for this machine unless
    ``--workers``/``--threads`` say otherwise), DEBUG off. Each simulated user is a thread with its own
    connection and cookies. First every user logs in through the real login form (GET /login/, then
    POST it with the CSRF token from the page); that phase is timed apart (``POST /login/`` runs the
    password hasher, deliberately slow) and is not in the overall figures. Then all users start
    together and loop, with a think time uniform on [``--think-min-ms``, ``--think-ms``] ms between
    requests (default 1-3 s: a person reads a page before the next click; brisk for a student working
    a problem, who takes minutes), until
    ``--requests`` requests in all or ``--seconds`` seconds:

    students (``--students``, default 35)
        GET /practice/ -> GET /problems/<id>/ (the offered problem) -> POST /practice/ (the form, with
        its CSRF token: an answer and a self-report) -> GET /api/students/<id>/next (token) -> every
        other round POST /api/attempts (token) for the problem the API offered
    TAs (``--tas``, default 10)
        GET /problems/ with filters (module, two concepts "match all", page 2, unreleased) or a
        search -> GET /problems/<id>/ (a problem of that page) -> GET /api/problems/?q= -> the rule
        editor GET /concepts/<slug>/rule/ -> POST /concepts/rules/preview/ (htmx, X-CSRFToken) ->
        GET /concepts/label/ -> GET /concepts/label/next/ (302) -> the labelling page it points to ->
        GET /concepts/reports/<id>/ (the extractor report) -> GET /triplets/
    head TAs and instructors (``--heads``, default 5)
        GET /practice/class/ (by modules, or by concepts) -> GET /practice/class/students/<id>/ ->
        GET /triplets/consensus/ -> GET /lab/ -> GET /api/students/<id>/next (as staff)

    Latency is measured by the client, per request, from send to the last byte. Any status other
    than the one the request expects (200; 201 for POST /api/attempts; 302 for POST /login/ and
    /concepts/label/next/) is an error, and so is a broken connection or a timeout; the script
    sends no request that should fail. Prints p50/p95/p99/max per endpoint and overall, the request
    rate, the error count and the first errors, and where the machine's CPU went in the timed phase
    (gunicorn's workers, PostgreSQL's backends of this database, the client, anything else: the
    machine may be shared). Target: p95 < 200 ms, no errors.

    The client runs on the same machine as the server, the database and the gunicorn workers, and
    takes CPU from them. With think times near zero (``--think-min-ms 0 --think-ms 50``) every user
    is almost always waiting on the server: that is a saturation test of the machine's capacity, and
    its latencies are mostly queueing (about users / throughput).

How to run (from the project folder; PostgreSQL on 127.0.0.1:5432, trust auth for postgres)
    .venv/bin/python benchmarks/site_load.py                          # fill, serve, measure, drop
    .venv/bin/python benchmarks/site_load.py --reuse                  # keep the database for next time
    .venv/bin/python benchmarks/site_load.py --reuse --think-min-ms 0 --think-ms 50   # saturation: the capacity
    .venv/bin/python benchmarks/site_load.py --problems 0 --requests 500 --seconds 15   # quick look, demo bank only
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import os
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/prob2vec_bench_site"
sys.path.insert(0, str(ROOT))

from benchmarks._serve import Budget, gunicorn_config_defaults, gunicorn_start, gunicorn_stop  # noqa: E402
from benchmarks.bench_db import db_create, db_drop, db_exists  # noqa: E402
from benchmarks.list_page import COMMON_WORDS, MIDDLE_WORDS, bank_fill, percentile  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prob2vec_site.settings")

PASSWORD = "bench-site-load-password"
TARGET_P95_MS = 200.0
SEARCH_WORDS = COMMON_WORDS + MIDDLE_WORDS + ["variance", "binomial", "expected value", "independent events"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL, help=f"PostgreSQL database (default {DEFAULT_URL})")
    parser.add_argument("--problems", type=int, default=5000, help="generated problems added to the demo bank (default 5000)")
    parser.add_argument("--students", type=int, default=35)
    parser.add_argument("--tas", type=int, default=10)
    parser.add_argument("--heads", type=int, default=5, help="head TAs and instructors (default 5)")
    parser.add_argument("--requests", type=int, default=5000, help="stop after this many requests in all, logins aside (default 5000)")
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this many seconds (default 60)")
    parser.add_argument("--think-min-ms", type=float, default=1000.0, help="shortest think time between requests (default 1000 ms)")
    parser.add_argument("--think-ms", type=float, default=3000.0,
                        help="longest think time between requests; each is uniform on [--think-min-ms, this] (default 3000 ms)")
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (default: what gunicorn.conf.py picks)")
    parser.add_argument("--threads", type=int, default=None, help="gunicorn threads per worker (default: gunicorn.conf.py's)")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--reuse", action="store_true", help="reuse the database if it holds the same bank; keep it at the end")
    parser.add_argument("--force", action="store_true", help="allow a database whose name does not contain 'bench'")
    args = parser.parse_args()
    if args.think_min_ms > args.think_ms:
        parser.error(f"--think-min-ms {args.think_min_ms:g} is above --think-ms {args.think_ms:g}")
    return args


# --- the database -------------------------------------------------------------------------------------


@dataclass
class Plan:
    """What the simulated users pick from: ids and names read from the filled database."""

    students: list[tuple[str, int, str]] = field(default_factory=list)  # (username, id, token)
    tas: list[str] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    modules: list[int] = field(default_factory=list)
    concept_pairs: list[tuple[str, str]] = field(default_factory=list)
    rules: list[tuple[str, str, bool]] = field(default_factory=list)  # (slug, pattern, ignore_case)
    report_id: int = 0
    class_student_ids: list[int] = field(default_factory=list)
    problem_ids: list[int] = field(default_factory=list)


def fill(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    def step(label: str, *command: str) -> None:
        t = time.perf_counter()
        out = io.StringIO()
        call_command(*command, stdout=out, verbosity=1)
        print(f"  {label} in {time.perf_counter() - t:.1f} s")

    call_command("migrate", verbosity=0, interactive=False)
    debug = settings.DEBUG
    settings.DEBUG = True  # load_demo creates the demo logins (and their labels, triplets, class) only with DEBUG on
    try:
        step("load_demo", "load_demo")
    finally:
        settings.DEBUG = debug
    if args.problems:
        bank_fill(args.problems, args.seed)
    step("extract_concepts", "extract_concepts")
    step("rebuild_embeddings --method prob2vec --source labels", "rebuild_embeddings", "--method", "prob2vec", "--source", "labels")
    step("extractor_report", "extractor_report")
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE")


def prepare(args: argparse.Namespace, url: str, name: str) -> Plan:
    """Fill (or reuse) the database and create the bench users; returns what the users will ask for."""
    reusing = args.reuse and db_exists(url, name)
    if not reusing:
        db_create(url, name, drop_first=True)
    os.environ["DATABASE_URL"] = url
    import django

    django.setup()
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group, User
    from django.db import connections
    from rest_framework.authtoken.models import Token

    from concepts.models import ConceptRule, ExtractorReport, GroundTruthLabel
    from embeddings.models import ActiveEmbedding
    from problems.demo_course import DEMO_COLLECTION
    from problems.models import Problem
    from practice.models import Attempt
    from problems.roles import HEAD_TA, INSTRUCTOR, STUDENT, TA

    if reusing:
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        generated = Problem.objects.exclude(collection=DEMO_COLLECTION).count()
        if generated != args.problems or not ExtractorReport.objects.exists() or not ActiveEmbedding.objects.exists():
            print(f"database {name} does not hold the demo course and {args.problems} generated problems: filling it again")
            connections.close_all()
            db_create(url, name, drop_first=True)
            reusing = False
    t = time.perf_counter()
    if reusing:
        print(f"database {name}: reused")
    else:
        print(f"database {name}: demo course + {args.problems} generated problems")
        fill(args)
        print(f"  filled in {time.perf_counter() - t:.1f} s")
    Attempt.objects.filter(student__username__startswith="bench-").delete()  # every run starts fresh

    encoded = make_password(PASSWORD)  # hashed once: the same slow hash for every bench user
    groups = {g.name: g for g in Group.objects.all()}

    def user(username: str, role: str) -> Any:
        u, _ = User.objects.update_or_create(username=username, defaults={"password": encoded, "is_active": True})
        u.groups.set([groups[role]])
        return u

    plan = Plan()
    for i in range(args.students):
        u = user(f"bench-student-{i + 1:02d}", STUDENT)
        plan.students.append((u.username, u.pk, Token.objects.get_or_create(user=u)[0].key))
    plan.tas = [user(f"bench-ta-{i + 1:02d}", TA).username for i in range(args.tas)]
    plan.heads = [user(f"bench-head-{i + 1:02d}", INSTRUCTOR if i % 3 == 2 else HEAD_TA).username for i in range(args.heads)]

    from problems.models import Module

    plan.modules = list(Module.objects.values_list("id", flat=True))
    by_module: dict[int, list[str]] = {}
    for slug, module_id in GroundTruthLabel.objects.values_list("concept__slug", "concept__module_id").distinct():
        by_module.setdefault(module_id or 0, []).append(slug)
    plan.concept_pairs = [tuple(sorted(slugs)[:2]) for slugs in by_module.values() if len(slugs) >= 2]
    plan.rules = list(ConceptRule.objects.filter(enabled=True).values_list("concept__slug", "pattern", "ignore_case"))
    plan.report_id = ExtractorReport.objects.latest("id").pk
    plan.class_student_ids = list(User.objects.filter(groups__name=STUDENT).values_list("id", flat=True))
    plan.problem_ids = list(Problem.objects.values_list("id", flat=True))
    released = Problem.objects.filter(released=True).count()
    print(
        f"{len(plan.problem_ids)} problems ({released} released), {len(plan.rules)} rules, "
        f"embedding run {ActiveEmbedding.objects.get().run_id}, extractor report {plan.report_id}; "
        f"users: {args.students} students, {args.tas} TAs, {args.heads} head TAs/instructors"
    )
    connections.close_all()
    return plan


# --- the simulated users ------------------------------------------------------------------------------

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CSRF_HEADER = re.compile(r'"x-csrftoken": "([^"]+)"')


class Stop(Exception):
    """The request budget or the time is spent."""


class Visitor(threading.Thread):
    """One user with a browser's cookies and keep-alive connection (gunicorn's sync workers close it)."""

    def __init__(self, username: str, args: argparse.Namespace, plan: Plan, budget: Budget, seed: int,
                 logged_in: threading.Barrier, start: dict[str, float]):
        super().__init__(daemon=True)
        self.username, self.args, self.plan, self.budget = username, args, plan, budget
        self.rng = random.Random(seed)
        self.logged_in, self.start_box = logged_in, start
        self.cookies: dict[str, str] = {}
        self.conn: http.client.HTTPConnection | None = None
        self.timings: list[tuple[str, float]] = []  # (endpoint, seconds) of the timed phase
        self.login_timings: list[tuple[str, float]] = []
        self.errors: list[tuple[str, str]] = []  # (endpoint, what happened)
        self.login_errors: list[tuple[str, str]] = []
        self.phase = "login"

    # -- HTTP

    def request(self, endpoint: str, method: str, path: str, *, form: dict[str, Any] | None = None,
                body: dict[str, Any] | None = None, headers: dict[str, str] | None = None, token: str = "",
                expect: int = 200) -> tuple[int, dict[str, str], str] | None:
        if self.phase == "run":
            if time.time() >= self.start_box["stop_at"] or not self.budget.take():
                raise Stop
        sent = {"Accept": "application/json" if body is not None or path.startswith("/api/") else "text/html"}
        data = None
        if form is not None:
            data = urlencode(form, doseq=True).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if token:
            sent["Authorization"] = f"Token {token}"  # an API client: no cookies
        elif self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        sent.update(headers or {})
        timings, errors = (self.timings, self.errors) if self.phase == "run" else (self.login_timings, self.login_errors)
        t = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.args.port, timeout=60)
            self.conn.request(method, path, body=data, headers=sent)
            response = self.conn.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as exc:
            timings.append((endpoint, time.perf_counter() - t))
            errors.append((endpoint, f"{self.username} {method} {path}: {type(exc).__name__}: {exc}"))
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return None
        timings.append((endpoint, time.perf_counter() - t))
        for header in response.headers.get_all("Set-Cookie") or []:
            jar = SimpleCookie()
            jar.load(header)
            for key, morsel in jar.items():
                if morsel.value and morsel["max-age"] != "0":
                    self.cookies[key] = morsel.value
                else:
                    self.cookies.pop(key, None)
        text = payload.decode("utf-8", "replace")
        if response.status != expect:
            where = response.headers.get("Location", "")
            errors.append((endpoint, f"{self.username} {method} {path}: HTTP {response.status} (expected {expect})"
                                     f"{' -> ' + where if where else ''} {text[:160]!r}"))
            return None
        return response.status, {k.lower(): v for k, v in response.headers.items()}, text

    def think(self) -> None:
        if self.args.think_ms > 0:
            time.sleep(self.rng.uniform(self.args.think_min_ms, self.args.think_ms) / 1000)

    # -- the session

    def login(self, password: str) -> bool:
        page = self.request("GET /login/", "GET", "/login/")
        found = page and CSRF_FIELD.search(page[2])
        if not found:
            if page:
                self.login_errors.append(("GET /login/", f"{self.username}: no CSRF token on /login/"))
            return False
        done = self.request("POST /login/", "POST", "/login/", expect=302, headers={"Referer": "http://127.0.0.1/login/"},
                            form={"csrfmiddlewaretoken": found.group(1), "username": self.username, "password": password, "next": ""})
        if done and "sessionid" not in self.cookies:
            self.login_errors.append(("POST /login/", f"{self.username}: logged in without a session cookie"))
            return False
        return done is not None

    def run(self) -> None:
        ok = False
        try:
            ok = self.login(PASSWORD)
        finally:
            try:
                self.logged_in.wait(timeout=600)
            except threading.BrokenBarrierError:
                pass
        if not ok:
            return
        self.phase = "run"
        time.sleep(self.rng.uniform(0, self.args.think_ms) / 1000)  # users do not arrive in lock-step
        try:
            while True:
                self.round()
        except Stop:
            pass
        except Exception as exc:  # a bug in the client must show, not end the run silently
            self.errors.append(("client", f"{self.username}: client {type(exc).__name__}: {exc}"))

    def round(self) -> None:
        raise NotImplementedError

    def csrf_from(self, html: str) -> str:
        found = CSRF_FIELD.search(html) or CSRF_HEADER.search(html)
        return found.group(1) if found else self.cookies.get("csrftoken", "")


class Student(Visitor):
    def __init__(self, user_id: int, token: str, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        self.user_id, self.token, self.rounds = user_id, token, 0

    def round(self) -> None:
        self.rounds += 1
        page = self.request("GET /practice/", "GET", "/practice/")
        self.think()
        offered = page and re.search(r'data-problem="(\d+)"', page[2])
        if offered:
            pk = offered.group(1)
            self.request("GET /problems/<id>/", "GET", f"/problems/{pk}/")
            self.think()
            self.request("POST /practice/", "POST", "/practice/", headers={"Referer": "http://127.0.0.1/practice/"}, form={
                "csrfmiddlewaretoken": self.csrf_from(page[2]), "action": "answer", "answer": str(self.rng.randint(0, 99)),
                "report": self.rng.choice(["solved", "partly", "not_solved"]),
            })
            self.think()
        nxt = self.request("GET /api/students/<id>/next", "GET", f"/api/students/{self.user_id}/next", token=self.token)
        self.think()
        problem = json.loads(nxt[2]).get("problem") if nxt else None
        if problem and self.rounds % 2 == 0:
            body = {"problem": problem["id"], "answer": str(self.rng.randint(0, 99)),
                    "self_report": self.rng.choice(["solved", "partly", "not_solved"]), "reason": json.loads(nxt[2]).get("reason", "")}
            self.request("POST /api/attempts", "POST", "/api/attempts", body=body, token=self.token, expect=201)
            self.think()


class TA(Visitor):
    def list_params(self) -> tuple[str, dict[str, Any]]:
        rng, plan = self.rng, self.plan
        kind = rng.choice(["search", "search", "search+module", "module", "concepts", "page 2", "unreleased"])
        if kind.startswith("search"):
            params: dict[str, Any] = {"q": rng.choice(SEARCH_WORDS)}
            if kind == "search+module":
                params["module"] = rng.choice(plan.modules)
            return "GET /problems/?q= (search)", params
        params = {"module": rng.choice(plan.modules)} if kind == "module" else \
            {"concepts": list(rng.choice(plan.concept_pairs)), "match": "all"} if kind == "concepts" and plan.concept_pairs else \
            {"page": "2"} if kind == "page 2" else {"released": "no", "sort": "title"}
        return "GET /problems/ (filters)", params

    def round(self) -> None:
        rng, plan = self.rng, self.plan
        endpoint, params = self.list_params()
        page = self.request(endpoint, "GET", "/problems/?" + urlencode(params, doseq=True))
        self.think()
        shown = re.findall(r'href="/problems/(\d+)/"', page[2]) if page else []
        self.request("GET /problems/<id>/", "GET", f"/problems/{rng.choice(shown or [str(p) for p in plan.problem_ids[:50]])}/")
        self.think()
        self.request("GET /api/problems/?q=", "GET", "/api/problems/?" + urlencode({"q": rng.choice(SEARCH_WORDS)}))
        self.think()
        slug, pattern, ignore_case = rng.choice(plan.rules)
        editor = self.request("GET /concepts/<slug>/rule/", "GET", f"/concepts/{slug}/rule/")
        self.think()
        form: dict[str, Any] = {"concept": slug, "pattern": pattern if rng.random() < 0.5 else pattern + r"|\bsaxophone\b"}
        if ignore_case:
            form["ignore_case"] = "on"
        if rng.random() < 0.3:
            form["modules"] = [rng.choice(plan.modules)]
        self.request("POST /concepts/rules/preview/", "POST", "/concepts/rules/preview/", form=form, headers={
            "X-CSRFToken": self.csrf_from(editor[2]) if editor else self.cookies.get("csrftoken", ""),
            "HX-Request": "true", "HX-Target": "rule-preview", "Referer": f"http://127.0.0.1/concepts/{slug}/rule/",
        })
        self.think()
        self.request("GET /concepts/label/", "GET", "/concepts/label/")
        self.think()
        queue = rng.choice(["mine", "disagreement", "rules"])
        moved = self.request("GET /concepts/label/next/", "GET", f"/concepts/label/next/?queue={queue}", expect=302)
        self.think()
        if moved and moved[1].get("location", "").startswith("/concepts/label/") and moved[1]["location"] != "/concepts/label/":
            self.request("GET /concepts/label/<id>/", "GET", moved[1]["location"])
            self.think()
        self.request("GET /concepts/reports/<id>/", "GET", f"/concepts/reports/{plan.report_id}/")
        self.think()
        self.request("GET /triplets/", "GET", "/triplets/")
        self.think()


class Head(Visitor):
    def round(self) -> None:
        rng, plan = self.rng, self.plan
        page = self.request("GET /practice/class/", "GET", "/practice/class/" + ("?by=concepts" if rng.random() < 0.5 else ""))
        self.think()
        shown = re.findall(r'href="/practice/class/students/(\d+)/"', page[2]) if page else []
        student = int(rng.choice(shown)) if shown else rng.choice(plan.class_student_ids)
        self.request("GET /practice/class/students/<id>/", "GET", f"/practice/class/students/{student}/")
        self.think()
        self.request("GET /triplets/consensus/", "GET", "/triplets/consensus/")
        self.think()
        self.request("GET /lab/", "GET", "/lab/")
        self.think()
        self.request("GET /api/students/<id>/next", "GET", f"/api/students/{student}/next")
        self.think()


# --- the report -----------------------------------------------------------------------------------------


def row(name: str, seconds: list[float], errors: int) -> str:
    values = sorted(v * 1000 for v in seconds)
    if not values:
        return f"{name:<34} {0:>6} {errors:>6}"
    return (f"{name:<34} {len(values):>6} {errors:>6} {percentile(values, 50):>7.1f} {percentile(values, 95):>7.1f}"
            f" {percentile(values, 99):>7.1f} {values[-1]:>7.1f}")


def table(rows: dict[str, list[float]], errors: list[tuple[str, str]], first: str, total: str = "") -> None:
    counts: dict[str, int] = {}
    for endpoint, _ in errors:
        counts[endpoint] = counts.get(endpoint, 0) + 1
    ordered = {k: rows[k] for k in ENDPOINT_ORDER if k in rows}
    ordered.update(rows)
    for k in counts:
        ordered.setdefault(k, [])
    header = f"{first:<34} {'count':>6} {'errors':>6} {'p50':>7} {'p95':>7} {'p99':>7} {'max':>7}"
    print(header)
    print("-" * len(header))
    for name, seconds in ordered.items():
        print(row(name, seconds, counts.get(name, 0)))
    if total:
        print("-" * len(header))
        print(row(total, [s for v in rows.values() for s in v], len(errors)))


def report(visitors: list[Visitor], seconds: float, login_seconds: float) -> bool:
    def gather(attr: str) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for v in visitors:
            for name, s in getattr(v, attr):
                out.setdefault(name, []).append(s)
        return out

    login_errors = [e for v in visitors for e in v.login_errors]
    print()
    print(f"login phase: {len(visitors)} users in {login_seconds:.1f} s, {len(login_errors)} errors "
          f"(POST /login/ runs the password hasher; not in the figures below); milliseconds")
    table(gather("login_timings"), login_errors, "request")

    timed = gather("timings")
    errors = [e for v in visitors for e in v.errors]
    total = sum(len(v) for v in timed.values())
    print()
    print(f"{total} requests in {seconds:.1f} s ({total / seconds:.1f} requests/s), {len(errors)} errors; milliseconds")
    table(timed, errors, "endpoint", total="all (after login)")
    for _, e in (login_errors + errors)[:8]:
        print("  error:", e)
    values = sorted(s * 1000 for v in timed.values() for s in v)
    p95 = percentile(values, 95) if values else float("inf")
    ok = p95 < TARGET_P95_MS and not errors and not login_errors
    print(f"target p95 < {TARGET_P95_MS:.0f} ms and no errors: {'met' if ok else 'NOT met'} (p95 {p95:.1f} ms, "
          f"{len(errors) + len(login_errors)} errors)")
    return ok


ENDPOINT_ORDER = [
    "GET /practice/", "GET /problems/<id>/", "POST /practice/", "GET /api/students/<id>/next", "POST /api/attempts",
    "GET /problems/?q= (search)", "GET /problems/ (filters)", "GET /api/problems/?q=", "GET /concepts/<slug>/rule/",
    "POST /concepts/rules/preview/", "GET /concepts/label/", "GET /concepts/label/next/", "GET /concepts/label/<id>/",
    "GET /concepts/reports/<id>/", "GET /triplets/", "GET /practice/class/", "GET /practice/class/students/<id>/",
    "GET /triplets/consensus/", "GET /lab/",
]


def cpu_now(master: int, database: str) -> tuple[float, float, float, float]:
    """CPU seconds so far: the machine busy, gunicorn's workers, the PostgreSQL backends serving `database`,
    this process (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    workers = postgres = 0.0
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        busy = (sum(fields[:8]) - fields[3] - fields[4]) / tick  # all but idle and iowait (guest time is in user)
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    name, stat = f.read().split(" (", 1)[1].rsplit(")", 1)
            except (OSError, ValueError):
                continue
            stat = stat.split()  # from field 3 of proc(5): 4 is the ppid, 14 and 15 utime and stime
            used = (int(stat[11]) + int(stat[12])) / tick
            if int(stat[1]) == master:
                workers += used
            elif name.startswith("postgres"):
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        serves = f" {database} ".encode() in f.read()  # "postgres: USER DATABASE HOST(PORT) STATE"
                except OSError:
                    continue
                if serves:
                    postgres += used
    except OSError:
        return 0.0, 0.0, 0.0, time.process_time()
    return busy, workers, postgres, time.process_time()


# --- main -----------------------------------------------------------------------------------------------


def main() -> int:
    args = parse_args()
    url = args.database_url
    p = urlparse(url)
    if p.scheme not in {"postgres", "postgresql"} or not p.path.lstrip("/"):
        sys.exit(f"--database-url must be a postgres:// URL naming a database, got {url}")
    name = p.path.lstrip("/")
    if "bench" not in name and not args.force:
        sys.exit(f"refusing to drop and recreate database {name!r}: its name has no 'bench' (use --force)")
    server = None
    try:
        plan = prepare(args, url, name)
        workers, threads = gunicorn_config_defaults()
        workers = args.workers or workers
        threads = args.threads or threads
        server = gunicorn_start(url, port=args.port, workers=args.workers, threads=args.threads)
        users = args.students + args.tas + args.heads
        print(f"machine: {os.cpu_count()} cores; gunicorn: {workers} workers x {threads} threads "
              f"({'sync' if threads == 1 else 'gthread'} workers), config prob2vec_site/gunicorn.conf.py")
        print(f"{users} users ({args.students} students, {args.tas} TAs, {args.heads} head TAs/instructors), "
              f"think time {args.think_min_ms:.0f}-{args.think_ms:.0f} ms, for {args.seconds:.0f} s or {args.requests} requests after login")

        budget = Budget(args.requests)
        start: dict[str, float] = {"stop_at": float("inf")}
        login_started = time.perf_counter()
        login_end: dict[str, float] = {}

        cpu: dict[str, tuple[float, ...]] = {}

        def all_logged_in() -> None:
            login_end["t"] = time.perf_counter()
            cpu["start"] = cpu_now(server.pid, name)
            start["stop_at"] = time.time() + args.seconds

        barrier = threading.Barrier(users, action=all_logged_in)
        visitors: list[Visitor] = []
        seed = args.seed
        for username, user_id, token in plan.students:
            seed += 1
            visitors.append(Student(user_id, token, username, args, plan, budget, seed, barrier, start))
        for username in plan.tas:
            seed += 1
            visitors.append(TA(username, args, plan, budget, seed, barrier, start))
        for username in plan.heads:
            seed += 1
            visitors.append(Head(username, args, plan, budget, seed, barrier, start))
        for v in visitors:
            v.start()
        for v in visitors:
            v.join(timeout=args.seconds + 900)
        ended = time.perf_counter()
        cpu_end = cpu_now(server.pid, name)
        began = login_end.get("t", ended)
        ok = report(visitors, ended - began, began - login_started)
        if "start" in cpu:
            busy, workers, postgres, client = (end - start for start, end in zip(cpu["start"], cpu_end))
            span = (ended - began) * (os.cpu_count() or 1)
            print(f"CPU seconds in the timed phase, of {span:.1f} on {os.cpu_count()} cores: {busy:.1f} busy ({100 * busy / span:.0f}%): "
                  f"gunicorn workers {workers:.1f}, PostgreSQL {postgres:.1f} (the backends of this database), "
                  f"this client {client:.1f}, anything else {max(0.0, busy - workers - postgres - client):.1f}")
        return 0 if ok else 1
    finally:
        gunicorn_stop(server)
        from django.db import connections

        connections.close_all()
        if not args.reuse:
            db_drop(url, name)
            print(f"database {name} dropped")
        else:
            print(f"database {name} kept (--reuse)")


if __name__ == "__main__":
    sys.exit(main())
