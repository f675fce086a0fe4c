"""Benchmark: would the starter rules do better on new text without the lines the labels call harmful?

What it measures
    The rule analysis page lists the lines (top-level branches) of each rule that match more labelled
    problems without their concept than with it, and the editor's Branches table judges each line the
    same way. This asks what deleting such lines does on text they were not judged on:

    - For each tuned set X (the three dev books and the two genre dev samples): every line of the
      rules *without X's own branches* is judged on the labelled problems of the other tuned sets
      (demo included) by ``concepts.rule_analysis`` (the page's own code), the listed lines are
      deleted, and the rules are measured on X's labelled problems: average FN and FP rate over
      concepts, micro recall, and of the concepts found the share that are right (precision).
    - The test splits (TheoremQA, MATH; never tuned on): every line of every rule judged on all the
      tuned sets, measured on the split.
    - Within a book, as a course would use the page: the rules without the book's branches, lines
      judged on a random half of the book's labelled problems, measured on the other half (the mean
      over ``--halves`` draws).
    - Triplets: Prob2Vec and concept overlap (`devset_table1`, the app's methods with their fallback)
      on the "unseen" source of each dev book (its problems through the pruned rules without its
      branches) and on the test splits, beside the same with every line kept.

    Two ways of choosing what to delete:
      - listed: the lines the analysis page lists (more often wrong than right);
      - only-harm: the lines whose matches no other line of the rule makes are more often wrong than
        right (what deleting the line changes on the judged problems).

How to run (from the project folder; reads ../shared/data, or $PROB2VEC_SHARED_DATA; MiniLM vectors
are cached in benchmarks/out/ as by devset_table1.py)
    .venv/bin/python benchmarks/rule_pruning.py [--no-triplets] [--halves 20]   # about 3.5 minutes

Plain Python: no Django, no database.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from benchmarks.rule_quality import demo_bank, dev_book, load_concepts  # noqa: E402
from concepts import extraction, rule_analysis  # noqa: E402  (pure)
from problems.demo_course import demo_rules  # noqa: E402  (pure)

Rules = dict[str, dict[str, object]]


def listed(f: rule_analysis.LineFigures, only_fp: int) -> bool:
    return f.more_wrong_than_right


def only_harm(f: rule_analysis.LineFigures, only_fp: int) -> bool:
    return only_fp > f.only_tp


CHOICES: dict[str, Callable[[rule_analysis.LineFigures, int], bool]] = {"listed": listed, "only-harm": only_harm}


def as_rules(rules: Rules) -> list[extraction.Rule]:
    return [extraction.Rule.of(s, v) for s, v in sorted(rules.items())]


def tuned_sets() -> dict[str, tuple[list[str], list[set[str]]]]:
    """name -> (texts, labels) of every labelled problem the rules were tuned on."""
    _, texts, truth = demo_bank()
    out = {"demo": (texts, truth)}
    for collection, name in {**devsets.BOOKS, **devsets.GENRE_DEV}.items():
        _, texts, truth = dev_book(collection)
        out[name] = (texts, truth)
    return out


def judged_lines(
    rules: Rules, texts: list[str], truth: list[set[str] | None]
) -> list[tuple[extraction.Rule, rule_analysis.BranchHits | None, list[rule_analysis.LineFigures]]]:
    """Each rule with its lines' hits (None on the backtracking engine) and their figures on (texts, truth)."""
    rule_list = as_rules(rules)
    matched: dict[str, list[int]] = {}
    for i, found in enumerate(extraction.extract_many(texts, extraction.compile_rules(rule_list))):
        for slug in found:
            matched.setdefault(slug, []).append(i)
    out = []
    for rule in rule_list:
        hits = rule_analysis.branch_hits(rule, texts, matched.get(rule.slug, []))
        out.append((rule, hits, rule_analysis.line_figures(hits, truth) if hits is not None else []))
    return out


def pruned(rules: Rules, texts: list[str], truth: list[set[str] | None], choose: Callable) -> tuple[Rules, int]:
    """``rules`` without the lines ``choose`` picks when judged on (texts, truth: None where unlabelled);
    and how many went. A rule the backtracking engine runs has no lines to judge and stays whole, as
    does one none of whose matches is labelled; a rule whose every line goes is left out."""
    out: Rules = {}
    dropped = 0
    for rule, hits, figures in judged_lines(rules, texts, truth):
        slug, spec = rule.slug, rules[rule.slug]
        if hits is None or not figures:  # backtracking, or none of its matches judged: nothing to go by
            out[slug] = spec
            continue
        per_text = Counter(i for branch in hits.by_branch for i in branch)  # lines matching each text
        kept = []
        for f, branch in zip(figures, hits.by_branch):
            only_fp = sum(1 for i in branch if per_text[i] == 1 and truth[i] is not None and slug not in truth[i])
            if choose(f, only_fp):
                dropped += 1
            else:
                kept.append(f.text)
        if kept:
            out[slug] = {"pattern": "|".join(kept), "ignore_case": spec["ignore_case"]}
    return out, dropped


def pooled(sets: dict[str, tuple[list[str], list[set[str]]]], leave_out: str) -> tuple[list[str], list[set[str]]]:
    texts, truth = [], []
    for name, (t, y) in sets.items():
        if name != leave_out:
            texts += t
            truth += y
    return texts, truth


def measure(rules: Rules, texts: list[str], truth: list[set[str]], concepts: list[str]) -> extraction.Evaluation:
    return extraction.evaluate(extraction.extract_many(texts, extraction.compile_rules(as_rules(rules))), truth, concepts)


def pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def lost_right(kept: tuple[int, int], deleted: tuple[int, int]) -> float | None:
    """Of the concepts the deleted lines took away from the measured problems (their matches no
    kept line makes), the share that were right: (TP, FP) with every line, and with some deleted."""
    tp, fp = kept[0] - deleted[0], kept[1] - deleted[1]
    return tp / (tp + fp) if tp + fp else None


def row(label: str, ev: extraction.Evaluation, dropped: int | str = "", lost: float | None = None) -> str:
    return (f"  {label:26} {str(dropped):>8} {pct(ev.fn_rate)} {pct(ev.fp_rate)} {pct(ev.micro_recall)} {pct(ev.micro_precision)}"
            + ("" if lost is None else f" {pct(lost)}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-triplets", action="store_true", help="concept figures only (seconds, no Prob2Vec training)")
    parser.add_argument("--halves", type=int, default=20, help="random halves per book for the within-a-book figures")
    args = parser.parse_args(argv)
    for collections in (devsets.BOOKS, devsets.GENRE_DEV, devsets.TEST_SETS):
        reason = devsets.missing_reason(collections=collections)
        if reason:
            print(f"skipped: {reason}")
            return 0
    concepts = load_concepts()
    sets = tuned_sets()
    # rules_by[choice][name]: the rules for set `name` ("" = the test splits' rules, judged on every tuned set)
    rules_by: dict[str, dict[str, Rules]] = {"kept": {}}
    dropped: dict[tuple[str, str], int] = {}
    for name in ["", *(n for n in sets if n != "demo")]:
        rules = demo_rules(without=name)
        rules_by["kept"][name] = rules
        texts, truth = pooled(sets, name)
        for choice, choose in CHOICES.items():
            rules_by.setdefault(choice, {})[name], dropped[(choice, name)] = pruned(rules, texts, truth, choose)

    texts, truth = pooled(sets, "")
    evidence = Counter(f.tp + f.fp for _, _, figures in judged_lines(demo_rules(), texts, truth) for f in figures if f.more_wrong_than_right)
    print(f"The lines the page lists, judged on every tuned set: {sum(evidence.values())}; labelled problems behind each: "
          + ", ".join(f"{n}: {k} line(s)" for n, k in sorted(evidence.items())))
    print()
    print("Rule lines deleted when judged without the set measured (FN, FP: average over concepts, %;")
    print("recall: micro; precision: of the concepts found, the share that are right; lost right: of the")
    print("concepts the deletion took away from the measured problems, the share that were right)")
    print(f"  {'set / rules':26} {'deleted':>8} {'FN':>6} {'FP':>6} {'recall':>6} {'prec.':>6} {'lost right':>10}")
    tests = {name: dev_book(collection)[1:] for collection, name in devsets.TEST_SETS.items()}
    for name, (texts, truth) in [*((n, s) for n, s in sets.items() if n != "demo"), *tests.items()]:
        key = "" if name in tests else name
        print(f"{name}{' (test split)' if name in tests else ' (rules without its branches)'}")
        for choice, rules in rules_by.items():
            ev = measure(rules[key], texts, truth, concepts)
            if choice == "kept":
                kept = (ev.total("tp"), ev.total("fp"))
            print(row(choice, ev, dropped.get((choice, key), ""), None if choice == "kept" else lost_right(kept, (ev.total("tp"), ev.total("fp")))))
    print(f"\nWithin a book, as a course would use the page: the rules without the book's branches, lines judged")
    print(f"on a random half of its labelled problems and measured on the other half (mean over {args.halves} draws)")
    print(f"  {'book / rules':26} {'deleted':>8} {'FN':>6} {'FP':>6} {'recall':>6} {'prec.':>6} {'lost right':>10}")
    for name in devsets.BOOKS.values():
        texts, truth = sets[name]
        rules = demo_rules(without=name)
        totals: dict[str, list[float]] = {}
        counts: dict[str, tuple[int, int]] = {}  # (TP, FP) summed over the draws
        for draw in range(args.halves):
            order = random.Random(draw).sample(range(len(texts)), len(texts))
            judged, measured = order[: len(order) // 2], order[len(order) // 2 :]
            held = ([texts[i] for i in measured], [truth[i] for i in measured])
            for choice, choose in {"kept": None, **CHOICES}.items():
                chosen, gone = (rules, 0) if choose is None else pruned(rules, [texts[i] for i in judged], [truth[i] for i in judged], choose)
                ev = measure(chosen, *held, concepts)
                figures = [gone, ev.fn_rate or 0.0, ev.fp_rate or 0.0, ev.micro_recall or 0.0, ev.micro_precision or 0.0]
                totals[choice] = [a + b / args.halves for a, b in zip(totals.get(choice, [0.0] * 5), figures)]
                tp, fp = counts.get(choice, (0, 0))
                counts[choice] = (tp + ev.total("tp"), fp + ev.total("fp"))
        print(name)
        for choice, (gone, fn, fp, recall, precision) in totals.items():
            deleted, lost = ("", "") if choice == "kept" else (f"{gone:.1f}", pct(lost_right(counts["kept"], counts[choice])))
            print(f"  {choice:26} {deleted:>8} {100 * fn:6.2f} {100 * fp:6.2f} {100 * recall:6.2f} {100 * precision:6.2f} {lost:>10}")
    if args.no_triplets:
        return 0

    from benchmarks import devset_table1 as t1

    bank = t1.load_bank(test_splits=True)
    text = t1.minilm_vectors(bank.texts)
    books = [*devsets.BOOKS.values(), *devsets.TEST_SETS.values()]
    print("\nExpert triplets, accuracy %: each dev book through its rules without its branches ('unseen'),")
    print("each test split through every rule")
    print(f"  {'method / rules':26} " + " ".join(f"{b:>10}" for b in books))
    for choice, rules in rules_by.items():
        # In the bank with the test splits, the genre dev samples' labels sit on their collections,
        # so the rules without a book are judged on the rest of the tuned sets as above.
        sets_, _ = t1.source_sets(bank, rules_without=lambda name, r=rules: r.get(name) or r[""])
        results = t1.table1(bank, sets_, ["prob2vec", "onehot"], text)
        for method in ("prob2vec", "onehot"):
            cells = []
            for book in books:
                source = "rules" if book in devsets.TEST_SETS.values() else "unseen"
                cells.append(f"{100 * results[method][source][book]['accuracy']:10.1f}")
            print(f"  {method + ' / ' + choice:26} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
