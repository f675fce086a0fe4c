"""Benchmark: rule extraction over 100,000 problems, and the live rule preview on a 10,000-problem bank.

What it measures
    1. Extraction (pure, one core): every demo concept rule (problems/demo_course/rules.json) over
       N synthetic problems of ~450 characters, spliced from the demo course's own sentences with
       fresh numbers. With `--solutions` each also has a ~200-character solution spliced from the demo's
       solutions, read after the statement as a run reads it (`extraction.rule_text`; the preview bank's
       problems get one too). Our engine (`extract_many`: the rules' branches without a gap in one RE2 set,
       those with a gap in small sets of their own, plus time-limited fallbacks) is timed on all N,
       `--runs` times, each from a fresh compile (its DFAs cold, as in a real run); min and median
       are printed, and one pass of `extract` text by text. A plain loop of Python `re` over the
       compiled rules is timed on a sample (it is ~100x slower; `--re-sample all` runs it on all N)
       and its problems/s extrapolated. Results are compared problem by problem: with the `re` loop
       on the sample, and on all N with `extract` text by text and with every whole pattern in one
       RE2 set (the engine before the split). "identical: True" means no problem differs in any.
    2. Live preview: a fresh PostgreSQL database (default `prob2vec_bench_extract`) holds a
       10,000-problem bank with labels; a TA's POST to /concepts/rules/preview/ (form parsing and
       joining the box's lines, RE2 over the bank, stats against the labels, diff against the saved
       rule, rendering) is timed for each of several rules after a warm-up, and for a rule 100
       characters short of the editor's limit; p50/p95/max are printed. Each request types one more
       line, as a keystroke changes one line, so the preview matches that line alone and reads the
       others' matches from its memo (concepts.extraction.BranchMemo). "pasted" times requests with
       the memo emptied first: every line new, as when a TA pastes a rule in or opens another concept.

How to run (from the project folder; PostgreSQL on 127.0.0.1:5432 with trust auth for postgres)
    .venv/bin/python benchmarks/extract.py
    .venv/bin/python benchmarks/extract.py --problems 20000 --re-sample 2000 --skip-preview
    .venv/bin/python benchmarks/extract.py --skip-preview --skip-footprint --re-sample all   # `re` on all N (~10 min)
    .venv/bin/python benchmarks/extract.py --solutions   # every problem with a solution, which the rules read too
Targets: the whole 100,000 in under 1 s on one core (>= 100x the `re` loop), identical results;
preview p95 < 100 ms (typing; pasted has no target).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from concepts import extraction  # noqa: E402  (pure: no Django)
from concepts.extraction import Rule, compile_rules, extract, extract_many, statement_of  # noqa: E402

BANK = ROOT / "problems" / "demo_course" / "bank"
RULES = ROOT / "problems" / "demo_course" / "rules.json"


def load_rules() -> list[Rule]:
    from problems.demo_course import demo_rules  # pure: the package reads files only

    return [Rule.of(slug, s) for slug, s in sorted(demo_rules().items())]


# A "gap" is an unbounded or counted repetition of a broad class: `[^.?]*`, `\w+`, `(?:...){0,60}`.
# Rules that pair two footprints in one sentence need them; they multiply the states of RE2's DFA.
_GAP = re.compile(r"(\]|\.|\\[wWsSdD]|\))[*+]|\{\d")


def footprint_only(rules: list[Rule]) -> list[Rule]:
    """The paper's style of rule: each rule keeps only its gap-free alternatives (plain footprints)."""
    out = []
    for rule in rules:
        keep = [a for a in extraction.top_level_branches(rule.pattern) if not _GAP.search(a)]
        out.append(dataclasses.replace(rule, pattern="|".join(keep) if keep else rule.pattern))
    return out


def demo_problems() -> list[dict]:
    return [json.loads(line) for path in sorted(BANK.glob("*.jsonl")) for line in path.read_text(encoding="utf-8").splitlines() if line]


def synthetic_texts(n: int, seed: int, field: str = "text", length: int = 360) -> list[str]:
    """~400-character problems: sentences of two demo problems spliced, numbers redrawn. With ``field``
    "solution" and ``length`` 160, ~200-character solutions (the demo's own average: 196) the same way."""
    rng = random.Random(seed)
    sentences = [s for p in demo_problems() for s in re.split(r"(?<=[.?!])\s+", p.get(field) or "") if len(s) > 20]
    texts = []
    for _ in range(n):
        parts: list[str] = []
        while sum(len(s) for s in parts) < length:
            parts.append(rng.choice(sentences))
        text = " ".join(parts)
        texts.append(re.sub(r"\d+", lambda m: str(rng.randint(1, 999)), text))
    return texts


def synthetic_solutions(n: int, seed: int) -> list[str]:
    return synthetic_texts(n, seed + 1, field="solution", length=160)


def whole_patterns_in_one_set(rules: list[Rule], texts: list[str]) -> list[set[str]]:
    """The engine before the split: every whole pattern in one RE2 set (slow, but exact); a rule's
    statement-only pattern in a second set over the statements."""
    import re2

    def one_set(patterns: list[tuple[str, str, bool]], over: list[str]) -> list[set[str]]:
        options = re2.Options()
        options.max_mem = 1 << 30
        whole = re2.Set.SearchSet(options)
        for _, pattern, ignore_case in patterns:
            whole.Add(f"(?i:{pattern})" if ignore_case else f"(?:{pattern})")
        whole.Compile()
        return [{patterns[i][0] for i in whole.Match(t) or ()} for t in over]

    found = one_set([(r.slug, r.pattern, r.ignore_case) for r in rules if r.pattern], texts)
    in_statement = [(r.slug, r.statement_pattern, r.ignore_case) for r in rules if r.statement_pattern]
    if in_statement:
        found = [a | b for a, b in zip(found, one_set(in_statement, [statement_of(t) for t in texts]))]
    return found


def time_extraction(rules: list[Rule], texts: list[str], runs: int) -> dict:
    """Our engine over all texts, `runs` times, each from a fresh compile (its DFAs start cold, as in
    a real run); then `extract` text by text once."""
    times, compile_times = [], []
    ours: list[set[str]] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        compiled = compile_rules(rules)
        compile_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ours = extract_many(texts, compiled)
        times.append(time.perf_counter() - t0)
    compiled = compile_rules(rules)
    t0 = time.perf_counter()
    one_by_one = [extract(t, compiled) for t in texts]
    one_s = time.perf_counter() - t0
    return {"times": times, "compile_times": compile_times, "ours": ours, "one_by_one": one_by_one,
            "one_s": one_s, "compiled": compiled}


def report_extraction(rules: list[Rule], texts: list[str], re_sample: int, timed: dict) -> None:
    """Print the timings, then time the plain `re` loop and compare results problem by problem."""
    n = len(texts)
    chars = sum(map(len, texts)) / len(texts)
    times, ours, compiled = timed["times"], timed["ours"], timed["compiled"]
    ours_s, median_s = min(times), statistics.median(times)

    def plain_re(pattern: str, ignore_case: bool) -> re.Pattern[str]:
        return re.compile(pattern, re.ASCII | (re.IGNORECASE if ignore_case else 0))

    plain = [(r.slug, plain_re(r.pattern, r.ignore_case)) for r in rules if r.pattern]
    in_statement = [(r.slug, plain_re(r.statement_pattern, r.ignore_case)) for r in rules if r.statement_pattern]
    sample = texts[:re_sample]
    t0 = time.perf_counter()
    reference = [
        {slug for slug, p in plain if p.search(t)} | {slug for slug, p in in_statement if p.search(statement_of(t))} for t in sample
    ]
    re_s = time.perf_counter() - t0
    differ_re = sum(1 for a, b in zip(ours, reference) if a != b)
    differ_one = sum(1 for a, b in zip(ours, timed["one_by_one"]) if a != b)
    differ_whole = None
    if all(e == "re2" for e in compiled.engines.values()):
        differ_whole = sum(1 for a, b in zip(ours, whole_patterns_in_one_set(rules, texts)) if a != b)

    engines = {e: list(compiled.engines.values()).count(e) for e in set(compiled.engines.values())}
    with_gap = sum(len(slugs) for _, slugs in compiled.gapped_sets)
    print(f"rules: {len(rules)} ({engines}; {sum(1 for r in rules if _GAP.search(r.pattern))} with repetitions, "
          f"{with_gap} with a gap, matched in {len(compiled.gapped_sets)} small set(s)); problems: {n:,}, "
          f"mean {chars:.0f} characters; compile {min(timed['compile_times']) * 1000:.1f} ms")
    print(f"our engine (extract_many): {' '.join(f'{t:.3f}' for t in times)} s; min {ours_s:.3f} s, "
          f"median {median_s:.3f} s ({n / ours_s:,.0f} problems/s at the min)")
    print(f"`extract`, text by text:   {timed['one_s']:.3f} s ({n / timed['one_s']:,.0f} problems/s)")
    print(f"plain `re` loop:           {re_s:.3f} s ({len(sample) / re_s:,.0f} problems/s on {len(sample):,} problems; "
          f"{n / (len(sample) / re_s):.1f} s extrapolated to {n:,})")
    print(f"speed-up at the min: {(n / ours_s) / (len(sample) / re_s):.0f}x `re`; "
          f"concepts found per problem {sum(map(len, ours)) / n:.2f}")
    checks = [f"vs `re` on {len(sample):,}: {differ_re} differ", f"vs `extract` text by text on all {n:,}: {differ_one} differ"]
    if differ_whole is not None:
        checks.append(f"vs every whole pattern in one RE2 set on all {n:,}: {differ_whole} differ")
    print(f"identical: {differ_re == differ_one == (differ_whole or 0) == 0} ({'; '.join(checks)})")


def bench_preview(database_url: str, problems: int, requests: int, seed: int, keep: bool, with_solutions: bool = False) -> None:
    from benchmarks.bench_db import db_drop, django_on_fresh_db

    name = django_on_fresh_db(database_url)
    from django.db import connection, connections
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    from concepts import selectors
    from concepts.models import Concept, GroundTruthLabel
    from concepts.services import rules_load
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
        texts = synthetic_texts(problems, seed)
        solutions = synthetic_solutions(problems, seed) if with_solutions else [""] * problems
        objs = []
        for i, (text, solution) in enumerate(zip(texts, solutions)):
            objs.append(Problem(collection="bench", source_id=f"b{i}", title=text[:80], text=text, solution=solution,
                                module=modules[rng.choice(demo)["module"]], released=True))
        Problem.objects.bulk_create(objs, batch_size=5000)
        labels = []
        for problem in Problem.objects.filter(collection="bench"):
            for slug in rng.choice(demo)["labels"]:
                labels.append(GroundTruthLabel(problem=problem, concept=concepts[slug]))
        GroundTruthLabel.objects.bulk_create(labels, batch_size=10000, ignore_conflicts=True)
        from problems.demo_course import demo_rules

        rules_load(rules=demo_rules())
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
        ta = User.objects.create_user("bench-ta")
        ta.groups.add(Group.objects.get(name="ta"))
        client = Client()
        client.force_login(ta)
        total = Problem.objects.count()
        spec = demo_rules()
        slugs = [s for s in ["nchoosek", "Bayes-formula", "Poisson-distribution", "conditional-probability",
                             "central-limit-theorem", "p-value"] if s in spec] or sorted(spec)[:6]
        # A rule near the longest the editor takes (`MAX_PATTERN_LENGTH`): the branches of the longest
        # starter rules, as if pooled into nchoosek, up to 100 characters short of the limit.
        long_branches: list[str] = []
        for other in sorted(spec, key=lambda s: -len(spec[s]["pattern"])):
            for branch in extraction.pattern_lines(spec[other]["pattern"]).split("\n"):
                if sum(len(b) + 1 for b in long_branches) + len(branch) <= extraction.MAX_PATTERN_LENGTH - 100:
                    long_branches.append(branch)
        long_rule = "\n".join(long_branches)
        cases = [(slug, slug, extraction.pattern_lines(spec[slug]["pattern"])) for slug in slugs]
        cases.append((f"nchoosek, {len(long_rule):,} chars", "nchoosek", long_rule))
        print(f"\npreview over a {total}-problem bank (PostgreSQL), {requests} requests per rule:")
        print(f"{'rule':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'matched':>8} {'pasted p50':>10} {'pasted max':>10}")
        all_times: list[float] = []
        all_pasted: list[float] = []
        for label, slug, typed in cases:
            # Typing, as the editor sends it (a branch per line): the saved pattern with a harmless new
            # line, so the lines are joined and the diff against the saved rule is computed. Each request
            # types another line, as each keystroke does: nothing compiled for one pattern serves the next.
            def keystroke(k: int) -> dict[str, str]:
                return {"concept": slug, "pattern": f"{typed}\nzzqx{k}", "ignore_case": "on"}

            for k in range(3):
                client.post("/concepts/rules/preview/", keystroke(-1 - k))
            times = []
            for k in range(requests):
                t0 = time.perf_counter()
                response = client.post("/concepts/rules/preview/", keystroke(k))
                times.append((time.perf_counter() - t0) * 1000)
                assert response.status_code == 200
            matched = re.search(r'id="matched-count">(\d+)<', response.content.decode())
            # Pasted: every line new to the preview (a rule pasted in, or another concept's opened), as
            # every keystroke was before stop 47 kept each line's matches (concepts.extraction.BranchMemo).
            pasted = []
            for k in range(max(1, requests // 4)):
                for bank in selectors._BANK_MEMO.values():
                    bank.__dict__.pop("branch_memo", None)
                t0 = time.perf_counter()
                client.post("/concepts/rules/preview/", keystroke(requests + k))
                pasted.append((time.perf_counter() - t0) * 1000)
            times.sort()
            pasted.sort()
            all_times += times
            all_pasted += pasted
            print(f"{label:28} {statistics.median(times):8.1f} {times[int(0.95 * len(times)) - 1]:8.1f} {times[-1]:8.1f} "
                  f"{matched.group(1) if matched else '?':>8} {statistics.median(pasted):10.1f} {pasted[-1]:10.1f}")
        all_times.sort()
        all_pasted.sort()
        print(f"{'all rules':28} {statistics.median(all_times):8.1f} {all_times[int(0.95 * len(all_times)) - 1]:8.1f} {all_times[-1]:8.1f} "
              f"{'':>8} {statistics.median(all_pasted):10.1f} {all_pasted[-1]:10.1f}")
    finally:
        connections.close_all()
        if not keep:
            db_drop(database_url, name)


def bench_hostile_patterns() -> None:
    """The issue's catastrophic case, timed here rather than in a test (tests carry no wall clock)."""
    from concepts.extraction import RuleTimeout

    print("== hostile patterns")
    started = time.perf_counter()
    compiled = compile_rules([Rule("evil", r"(a+)+$")])
    found = extract("a" * 30 + "!", compiled)
    print(f"(a+)+$ on 30 a's and '!': {found or 'no match'} on {compiled.engines['evil']} "
          f"in {(time.perf_counter() - started) * 1000:.2f} ms")
    compiled = compile_rules([Rule("evil", r"(a|aa)+(?=b)")], timeout=0.5)
    started = time.perf_counter()
    try:
        extract("a" * 40 + "!", compiled)
        outcome = "finished"
    except RuleTimeout as error:
        outcome = f"stopped: {error}"
    print(f"(a|aa)+(?=b) on 40 a's and '!' ({compiled.engines['evil']}, limit 0.5 s): {outcome} "
          f"after {time.perf_counter() - started:.2f} s\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--re-sample", default="5000", help="problems the slow `re` loop runs on, or `all`")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of our engine, each from a fresh compile")
    parser.add_argument("--skip-footprint", action="store_true", help="skip the footprint-only comparison")
    parser.add_argument("--preview-problems", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=40, help="timed preview requests per rule")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/prob2vec_bench_extract")
    parser.add_argument("--skip-preview", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the preview database")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--solutions", action="store_true",
                        help="each problem also has a ~200-character solution, which the rules read after the statement (RULES_READ_SOLUTIONS)")
    args = parser.parse_args()
    if not RULES.exists():
        sys.exit(f"no rules at {RULES}")
    rules = load_rules()
    texts = synthetic_texts(args.problems, args.seed)
    if args.solutions:  # what a run reads of a problem with a solution (extraction.rule_text)
        texts = [extraction.rule_text(t, s) for t, s in zip(texts, synthetic_solutions(args.problems, args.seed))]
    print(f"{len(texts)} problems of {statistics.mean(map(len, texts)):.0f} characters on average"
          + (", statement and solution" if args.solutions else ", statements alone"))
    sample = args.problems if args.re_sample == "all" else min(int(args.re_sample), args.problems)
    bench_hostile_patterns()
    # Every timed run first, then the slow checks: the reference engines' memory stays out of the timings.
    sections = [("the demo course rules (problems/demo_course/rules.json)", rules)]
    if not args.skip_footprint:
        sections.append(("the same rules, footprint alternatives only (the paper's style: no same-sentence gaps)",
                         footprint_only(rules)))
    timed = [time_extraction(section_rules, texts, args.runs) for _, section_rules in sections]
    for k, ((title, section_rules), section_timed) in enumerate(zip(sections, timed)):
        print(f"{chr(10) if k else ''}== {title}")
        report_extraction(section_rules, texts, sample, section_timed)
    if not args.skip_preview:
        bench_preview(args.database_url, args.preview_problems, args.requests, args.seed, args.keep, args.solutions)


if __name__ == "__main__":
    main()
