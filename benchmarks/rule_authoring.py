"""Benchmark: rule authoring on a 10,000-problem bank (the live preview with its FN/FP lists, phrase
mining, the rule analysis page).

What it measures
    1. Phrase mining alone (pure ``concepts.mining.mine``, one core, no database): one concept at a
       time over N synthetic problems (default 10,000: sentences of the demo course spliced, numbers
       redrawn, as in ``benchmarks/extract.py``), all labelled, with two kinds of labels (see
       ``bench_mining``). Every concept of the list is mined ``--runs`` times; p50/p95/max per
       concept and overall. Target: < 1 s per concept.
    2. Through the site (Django test client, PostgreSQL, DEBUG off): a fresh database
       (``prob2vec_bench_authoring``) holds the demo course plus synthetic problems up to N, every
       one labelled (``--labelled`` < 1 labels a share only), and the starter rules. A TA's requests
       are timed after a warm-up:
         - ``POST /concepts/rules/preview/`` (RE2 over the bank, stats, the FN and FP lists rendered
           with their text, the diff against the saved rule), ``--requests`` per rule, each pattern
           different (the saved rule with a harmless extra branch) so nothing is served from a memo;
           target p95 < 100 ms;
         - ``POST /concepts/rules/suggestions/`` (mining behind the view, the same fresh patterns);
         - ``GET /concepts/analysis/`` (every rule and each rule's lines over the bank): on a first
           visit, after a rule change (that rule alone matched again), after a new label (nothing
           matched again; needs ``--labelled`` < 1 for unlabelled problems), and from its memo; and
           the labelling home with its "No rule matches" queue.

How to run (from the project folder; PostgreSQL on 127.0.0.1:5432 with trust auth for postgres)
    .venv/bin/python benchmarks/rule_authoring.py [--problems 10000] [--requests 40] [--labelled 1.0] [--skip-site]

Nothing in the test suite asserts a time; this script prints figures.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.extract import demo_problems, synthetic_texts  # noqa: E402
from concepts import extraction, mining  # noqa: E402  (pure)
from problems.demo_course import demo_rules  # noqa: E402  (pure)

CONCEPTS = ["nchoosek", "Bayes-formula", "Poisson-distribution", "conditional-probability", "central-limit-theorem", "p-value"]


def p95(times: list[float]) -> float:
    times = sorted(times)
    return times[max(0, int(round(0.95 * len(times))) - 1)]


def line(name: str, times: list[float], extra: str = "") -> str:
    if not times:  # nothing to time (a bank with every problem labelled has no problem to label anew)
        return f"{name:28} {'-':>8} {'-':>8} {'-':>8}  {extra}"
    return f"{name:28} {statistics.median(times):8.1f} {p95(times):8.1f} {max(times):8.1f}  {extra}"


def bench_mining(problems: int, runs: int, seed: int) -> None:
    """Two kinds of labels: each problem labelled like a random demo problem (the labels say nothing
    about the text: few phrases separate), and labels made by the concept's whole starter rule with
    2% flipped, the current pattern being its first branch only (the missed problems hold the other
    branches' words: many phrases separate, and the ranking and greedy steps have work to do)."""
    from problems.demo_course import demo_rule_branches

    texts = synthetic_texts(problems, seed)
    rng = random.Random(seed)
    demo = demo_problems()
    random_truth = [set(rng.choice(demo)["labels"]) for _ in texts]
    rules, branches = demo_rules(), demo_rule_branches()
    everything = []
    for kind in ("random demo labels", "labels of the whole rule, current pattern its first branch"):
        print(f"== phrase mining alone (pure), {problems:,} problems, all labelled: {kind}; {runs} runs per concept")
        print(f"{'concept':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  missed / candidates / phrases; first suggestion")
        for slug in [s for s in CONCEPTS if s in rules]:
            ignore_case = bool(rules[slug]["ignore_case"])
            if kind.startswith("random"):
                pattern = str(rules[slug]["pattern"])
                labels = [slug in t for t in random_truth]
            else:
                whole = set(extraction.matching(str(rules[slug]["pattern"]), ignore_case, texts)[1])
                pattern = str(branches[slug]["branches"][0]["re"])
                labels = [(i in whole) != (rng.random() < 0.02) for i in range(len(texts))]
            found = set(extraction.matching(pattern, ignore_case, texts)[1])
            matched = [i in found for i in range(len(texts))]
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                result = mining.mine(texts, labels, matched, ignore_case=ignore_case)
                times.append((time.perf_counter() - t0) * 1000)
            everything += times
            first = result.suggestions[0] if result.suggestions else None
            said = f"{first.phrase.text!r} +{first.fn_recovered} FN +{first.fp_added} FP" if first else "none"
            print(line(slug, times, f"{result.missed} / {result.candidates} / {len(result.phrases)}; {said}"))
        print()
    print(line("all concepts, both kinds", everything))


def bench_site(database_url: str, problems: int, requests: int, labelled: float, seed: int, keep: bool) -> None:
    from benchmarks.bench_db import db_drop, django_on_fresh_db

    name = django_on_fresh_db(database_url)
    from django.db import connection, connections
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    from concepts.models import Concept, ConceptRule, GroundTruthLabel
    from concepts.services import rule_save, rules_load
    from concepts import selectors
    from problems.models import Module, Problem

    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["testserver"]
    try:
        call_command("migrate", verbosity=0)
        call_command("load_demo", "--no-users", stdout=open(os.devnull, "w"))
        rng = random.Random(seed)
        demo = demo_problems()
        modules = {m.name: m for m in Module.objects.all()}
        concepts = {c.slug: c for c in Concept.objects.all()}
        extra = max(0, problems - Problem.objects.count())
        objs = [
            Problem(collection="bench", source_id=f"b{i}", title=text[:80], text=text, module=modules[rng.choice(demo)["module"]], released=True)
            for i, text in enumerate(synthetic_texts(extra, seed))
        ]
        Problem.objects.bulk_create(objs, batch_size=5000)
        labels = [
            GroundTruthLabel(problem=p, concept=concepts[slug])
            for p in Problem.objects.filter(collection="bench")
            if rng.random() < labelled
            for slug in rng.choice(demo)["labels"]
        ]
        GroundTruthLabel.objects.bulk_create(labels, batch_size=10000, ignore_conflicts=True)
        rules_load(rules=demo_rules())
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
        ta = User.objects.create_user("bench-ta")
        ta.groups.add(Group.objects.get(name="ta"))
        client = Client()
        client.force_login(ta)
        total = Problem.objects.count()
        with_labels = Problem.objects.filter(ground_truth_labels__isnull=False).distinct().count()
        spec = demo_rules()
        slugs = [s for s in CONCEPTS if s in spec]
        print(f"\n== through the site: {total:,} problems ({with_labels:,} labelled), PostgreSQL, DEBUG off; "
              f"{requests} requests per rule, every pattern new")
        print(f"{'request':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        counter = iter(range(10**9))

        def timed(url: str, slug: str, n: int) -> tuple[list[float], str]:
            times, body = [], ""
            for k in range(n + 3):
                data = {"concept": slug, "pattern": f"{spec[slug]['pattern']}|zzqx{next(counter)}", "ignore_case": "on"}
                t0 = time.perf_counter()
                response = client.post(url, data)
                elapsed = (time.perf_counter() - t0) * 1000
                assert response.status_code == 200, response.status_code
                if k >= 3:  # the first few warm the bank's texts and the saved rule's matches
                    times.append(elapsed)
                body = response.content.decode()
            return times, body

        all_preview, all_suggest = [], []
        for slug in slugs:
            times, body = timed("/concepts/rules/preview/", slug, requests)
            all_preview += times
            fn = re.search(r'id="fn-count">FN (\d+)<', body)
            fp = re.search(r'id="fp-count">FP (\d+)<', body)
            shown = body.count('class="match verdict-fn"') + body.count('class="match verdict-fp"')
            print(line(f"preview {slug}", times, f"FN {fn.group(1) if fn else '?'}, FP {fp.group(1) if fp else '?'}, {shown} rendered in the lists"))
        print(line("preview, all rules", all_preview))
        for slug in slugs:
            times, body = timed("/concepts/rules/suggestions/", slug, max(5, requests // 4))
            all_suggest += times
            print(line(f"suggestions {slug}", times, f"{body.count('data-append-branch')} Append links"))
        print(line("suggestions, all rules", all_suggest))

        rule = ConceptRule.objects.select_related("concept").get(concept__slug=slugs[0])
        selectors._BANK_MATCHES.clear()  # the first visit: every rule (and every line) matched afresh
        first = []
        t0 = time.perf_counter()
        assert client.get("/concepts/analysis/").status_code == 200
        first.append((time.perf_counter() - t0) * 1000)
        cold, warm, labelled = [], [], []
        for k in range(5):
            rule_save(concept=rule.concept, pattern=f"{spec[slugs[0]]['pattern']}|zzqy{k}")  # a new version: the memo is stale
            t0 = time.perf_counter()
            assert client.get("/concepts/analysis/").status_code == 200
            cold.append((time.perf_counter() - t0) * 1000)
            for _ in range(5):
                t0 = time.perf_counter()
                client.get("/concepts/analysis/")
                warm.append((time.perf_counter() - t0) * 1000)
        unlabelled = list(Problem.objects.filter(ground_truth_labels__isnull=True).values_list("id", flat=True)[:5])
        for pid in unlabelled:  # a new label: the analysis is judged again, nothing is matched again
            GroundTruthLabel.objects.create(problem_id=pid, concept=rule.concept)
            t0 = time.perf_counter()
            assert client.get("/concepts/analysis/").status_code == 200
            labelled.append((time.perf_counter() - t0) * 1000)
        rules_count = f"{ConceptRule.objects.filter(enabled=True).count()} rules over {total:,} problems"
        print(line("analysis, first visit", first, rules_count))
        print(line("analysis, after a rule change", cold, "that rule (and its lines) matched again"))
        print(line("analysis, after a new label", labelled, "" if unlabelled else "(no unlabelled problem: --labelled < 1 to time it)"))
        print(line("analysis, unchanged", warm))
        home = []
        for _ in range(10):
            t0 = time.perf_counter()
            assert client.get("/concepts/label/").status_code == 200
            home.append((time.perf_counter() - t0) * 1000)
        print(line("labelling home (6 queues)", home))
    finally:
        connections.close_all()
        if not keep:
            db_drop(database_url, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10, help="mining runs per concept (pure part)")
    parser.add_argument("--requests", type=int, default=40, help="timed preview requests per rule")
    parser.add_argument("--labelled", type=float, default=1.0, help="share of the synthetic problems given labels")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/prob2vec_bench_authoring")
    parser.add_argument("--skip-site", action="store_true", help="only the pure mining part")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args(argv)
    bench_mining(args.problems, args.runs, args.seed)
    if not args.skip_site:
        bench_site(args.database_url, args.problems, args.requests, args.labelled, args.seed, args.keep)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
