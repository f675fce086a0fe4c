"""Benchmark: quality of the starter concept rules, on the demo bank and on real text (the dev sets).

What it measures
    The rules of ``problems/demo_course/rules.json`` compiled by ``concepts.extraction`` against expert
    labels, problem by problem, as ``extractor_report`` does, on what the app's rules read of a problem:
    its statement, then its solution where it has one (``--no-solutions``: the statements alone, as
    before stop 39): per concept FP rate FP/(FP+TN) and FN rate
    FN/(FN+TP), averaged over concepts (FN over the concepts with positives), with micro recall and
    precision over all labelled concepts. Printed for
      - the demo bank (286 problems, written by the team: flattering);
      - each dev book (``benchmarks/devsets/``: OpenStax, OpenIntro, Grinstead & Snell, labelled by
        ``../shared/concepts/LABELLING.md``), with micro recall and the share of labelled problems the
        rules find no concept in;
      - the **genre dev samples** (MATH counting & probability and TheoremQA problems outside their
        test splits, ``benchmarks/devsets/sample_genre_dev.py``), once labelled, like the books;
      - each book's **second sample** (``openstax-2``, ``openintro-2``, ``gs-2``: more of its problems,
        drawn after the rules were written, in no triplet, labelled by the guide; ``sample.py --second``):
        what the rules find on problems of a book they were tuned on but never written from. A
        yardstick, like the test splits: no misses or per-concept lists are printed for them;
      - each book's **third sample** (``openstax-3``, ``openintro-3``, ``gs-3``; ``sample.py --third``,
        stop 34): more labelled problems of the book to write rules from, like its first sample;
      - **leave one book out**: each book measured with the rules minus the branches written from
        that book's misses only (each branch of rules.json says where it came from), i.e. rules tuned
        without the book; and **strict**: also without the branches the book shares with other
        origins (a branch first written for the demo, then widened on the book's misses, goes too).
        The truth for a new textbook lies between the two;
      - the **test splits** (``benchmarks/devsets/TEST_SETS.md``: TheoremQA and MATH, labelled by the
        guide, never read while writing rules): the honest figure on text nobody here tuned on. Only
        their summary is printed, no per-concept list, so that nobody tunes on them;
      - per set, the labelled concepts found, missed and found wrongly (the counts behind micro
        recall and precision, stop 43);
      - the worst concepts per book.
    ``--miss-classes`` prints the third samples' misses by kind (``benchmarks/devsets/miss-classes.tsv``,
    stop 45: named, paraphrased or implied, judged by the guide) and the FN the rules would reach if
    they found the named ones, then the paraphrased ones too.
    ``--misses SLUG`` prints, per book, the labelled problems the rule misses and the ones it wrongly
    matches (a rule author's view; text comes from ../shared/data and is not stored).
    ``--shared DIR`` also reports coverage on every collection in DIR (most carry no labels).
    ``--new-book`` follows a dev book read as a new book (leave-one-book-out rules) while the course
    labels k of its problems: FN / FP on its other labelled problems, the rules alone and with the
    learned extractor trained on the other books' labels plus those k.
    ``--transfer`` measures what blind branches carry (``benchmarks/devsets/blind-pass/``, written
    through ``benchmarks/rule_workbench.py`` by authors who each saw one dev set only): per author,
    the rules it saw without and with its branches, on every labelled dev set. Its own set shows what
    it fixed; the others, what rules carry to a book they were not written from.
    ``--learned`` adds the hybrid source's learned extractor (concepts/learned.py, scored out of fold)
    to each book's leave-one-book-out rules, on the dev bank (benchmarks/devset_table1.py): what it
    recovers where the rules were never tuned on the book; and, unless ``--no-test-splits``, to the
    test splits, trained on every label but the split's own: what the hybrid source gives on text
    nobody tuned the rules or the model on (a summary only, as for the rules), and to the second
    samples, trained on every label but theirs. ``--thresholds-alone`` chooses the learned half's
    thresholds for the model alone instead of against the rules (not the product's choice; see
    concepts/learned.py for what it finds and what it costs the triplets).

How to run (from the project folder)
    .venv/bin/python benchmarks/rule_quality.py [--json] [--misses SLUG] [--miss-classes] [--shared ../shared/data] [--learned [--thresholds-alone]] [--new-book] [--transfer] [--no-test-splits] [--no-solutions]

Plain Python: no Django, no database. The dev books are read from ../shared/data (or
$PROB2VEC_SHARED_DATA); without them only the demo bank is measured, and the script says so.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from concepts import extraction  # noqa: E402  (pure)
from problems.demo_course import DEMO_DIR, bank_files, demo_rule_branches, demo_rules  # noqa: E402  (pure)

if TYPE_CHECKING:  # torch comes with it: imported where --learned needs it
    from concepts import learned

THEOREMQA = "theoremqa-probability-statistics"
# The rules read each problem's statement and then its solution, as the app does by default
# (RULES_READ_SOLUTIONS; README "Rules read the solution"); --no-solutions: the statements alone.
READS_SOLUTIONS = True


def rule_text(record: dict) -> str:
    """What the rules read of a problem record (``extraction.rule_text``, or the statement without solutions)."""
    return extraction.rule_text(str(record["text"]), record.get("solution") if READS_SOLUTIONS else None)


def load_concepts() -> list[str]:
    with (DEMO_DIR / "concepts.tsv").open(encoding="utf-8", newline="") as f:
        return [row["slug"] for row in csv.DictReader(f, delimiter="\t") if row.get("slug")]


def compiled_rules(without: str = "", strict: bool = False) -> extraction.CompiledRules:
    rules = [extraction.Rule.of(slug, s) for slug, s in sorted(demo_rules(without, strict).items())]
    return extraction.compile_rules(rules)


def demo_bank() -> tuple[list[str], list[str], list[set[str]]]:
    rows = [json.loads(line) for path in bank_files() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["id"] for r in rows], [rule_text(r) for r in rows], [set(r["labels"]) for r in rows]


def dev_book(book: str) -> tuple[list[str], list[str], list[set[str]]]:
    truth = devsets.labels(book)
    records = {r["id"]: r for r in devsets.book_problems(book)}
    ids = [i for i in truth if i in records]
    return ids, [rule_text(records[i]) for i in ids], [set(truth[i]) for i in ids]


def measure(texts: list[str], truth: list[set[str]], concepts: list[str], compiled: extraction.CompiledRules) -> dict:
    predicted = extraction.extract_many(texts, compiled)
    ev = extraction.evaluate(predicted, truth, concepts)
    per_concept = ev.as_dict()["concepts"]
    # The FN average over concepts with at least 3 labelled positives: a concept with one or two moves
    # the plain average by whole points with each label (stop 29's note).
    common = [c["fn"] / (c["tp"] + c["fn"]) for c in per_concept.values() if c["tp"] + c["fn"] >= 3]
    return {
        "problems": len(texts),
        "fn_rate": ev.fn_rate,
        "fn_rate_3_positives": sum(common) / len(common) if common else None,
        "concepts_3_positives": len(common),
        "fp_rate": ev.fp_rate,
        "micro_recall": ev.micro_recall,
        # Of the concepts found on labelled problems, the share the labels hold (FP rates hide how
        # many wrong concepts a problem gets, and a wrong shared concept is what misleads similarity).
        "micro_precision": ev.micro_precision,
        # The counts behind recall and precision: what the similar lists gain by a concept found and lose
        # by a wrong one differ (README "What each kind of rule error costs"), so both are worth seeing.
        "found_right": ev.total("tp"),
        "missed": ev.total("fn"),
        "wrong": ev.total("fp"),
        "no_concept": sum(1 for p in predicted if not p) / len(texts) if texts else None,
        "concepts": ev.as_dict()["concepts"],
        "_predicted": predicted,
    }


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def worst(concepts: dict, key: str, n: int) -> list[str]:
    rows = [(slug, s) for slug, s in concepts.items() if s[f"{key}_rate"] is not None and s[key] > 0]
    rows.sort(key=lambda kv: (-kv[1][f"{key}_rate"], -kv[1][key], kv[0]))
    return [f"{slug} {s[key]}/{s[key] + (s['tp'] if key == 'fn' else s['tn'])}" for slug, s in rows[:n]]


def print_misses(slug: str, books: dict[str, tuple]) -> None:
    for name, (ids, texts, truth, result) in books.items():
        predicted = result["_predicted"]
        fn = [i for i in range(len(ids)) if slug in truth[i] and slug not in predicted[i]]
        fp = [i for i in range(len(ids)) if slug not in truth[i] and slug in predicted[i]]
        print(f"\n==== {name}: {slug}: {len(fn)} missed, {len(fp)} wrongly matched")
        for kind, rows in (("MISSED", fn), ("WRONG", fp)):
            for i in rows:
                text = " ".join(texts[i].split())
                print(f"-- {kind} {ids[i]} labels={sorted(truth[i])}\n   {text[:700]}")


MISS_CLASSES = Path(devsets.__file__).parent / "miss-classes.tsv"
MISS_KINDS = {"N": "named", "P": "paraphrased", "I": "implied", "Q": "label questioned"}


def miss_classes() -> dict[tuple[str, str, str], str]:
    """(sample folder, problem id, concept) -> N / P / I / Q: why the rules of stop 45 missed a labelled
    concept on a third sample, judged by the guide (benchmarks/devsets/README.md, "Why the rules miss")."""
    with MISS_CLASSES.open(encoding="utf-8", newline="") as f:
        return {(r["set"], r["id"], r["concept"]): r["class"] for r in csv.DictReader(f, delimiter="\t")}


def print_miss_classes(concepts: list[str], books: dict[str, tuple]) -> None:
    """Per third sample, the rules' misses by kind, and the FN average the rules would reach if they
    also found the named misses, then the paraphrased ones too: how far better phrasing can take the
    rules. An implied concept (nothing in the text points to it) is beyond any rule."""
    classes = miss_classes()
    print("\nthird samples: the rules' misses by kind (named / paraphrased / implied / label questioned / not classified),"
          " and FN now -> if the named were found -> and the paraphrased too:")
    for folder, name in devsets.THIRD_SAMPLES.items():
        if name not in books:
            continue
        ids, _, truth, result = books[name]
        predicted = result["_predicted"]
        kinds = Counter(classes.get((folder, ids[i], c), "?") for i in range(len(ids)) for c in truth[i] - predicted[i])
        rates = []
        for found in ((), ("N",), ("N", "P")):
            mended = [predicted[i] | {c for c in truth[i] - predicted[i] if classes.get((folder, ids[i], c)) in found} for i in range(len(ids))]
            rates.append(pct(extraction.evaluate(mended, truth, concepts).fn_rate))
        counts = " / ".join(str(kinds.get(k, 0)) for k in (*MISS_KINDS, "?"))
        print(f"  {name:13} misses {counts}; FN {' -> '.join(rates)}")


def run_shared(shared: Path, compiled: extraction.CompiledRules) -> None:
    for path in sorted(shared.glob("*/problems.jsonl")):
        problems = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        found = extraction.extract_many([extraction.rule_text(p.get("text") or "", p.get("solution") if READS_SOLUTIONS else None) for p in problems], compiled)
        n = len(problems)
        hit = sum(1 for f in found if f)
        counts = Counter(c for f in found for c in f)
        print(f"\n== {path.parent.name}: {n} problems, {100 * hit / n if n else 0:.1f}% with >= 1 concept, "
              f"{sum(len(f) for f in found) / max(n, 1):.2f} concepts per problem")
        print("  top concepts: " + ", ".join(f"{slug} {k}" for slug, k in counts.most_common(12)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--misses", metavar="SLUG", help="list the labelled problems one rule misses or wrongly matches")
    parser.add_argument("--worst", type=int, default=8, help="worst concepts listed per book")
    parser.add_argument("--shared", type=Path, metavar="DIR", help="also report coverage on DIR/*/problems.jsonl")
    parser.add_argument("--learned", action="store_true", help="also: leave-one-book-out rules plus the learned extractor")
    parser.add_argument("--new-book", action="store_true", help="also: a new book's FN after the course labels k of its problems (rules + learned)")
    parser.add_argument("--transfer", action="store_true", help="also: what each blind author's branches carry to the other dev sets")
    parser.add_argument("--no-test-splits", action="store_true", help="leave the test splits out (while writing rules: never see them)")
    parser.add_argument("--thresholds-alone", action="store_true",
                        help="with --learned: the learned half's thresholds chosen for the model alone, not against the rules (not the product's choice)")
    parser.add_argument("--miss-classes", action="store_true",
                        help="also: the third samples' misses by kind (named / paraphrased / implied) and the FN if rules found the first kinds")
    parser.add_argument("--no-solutions", action="store_true",
                        help="the rules read the statements alone, as before stop 39 (RULES_READ_SOLUTIONS=false)")
    args = parser.parse_args(argv)
    global READS_SOLUTIONS
    READS_SOLUTIONS = not args.no_solutions

    concepts = load_concepts()
    compiled = compiled_rules()
    books: dict[str, tuple] = {}
    ids, texts, truth = demo_bank()
    books["demo"] = (ids, texts, truth, measure(texts, truth, concepts, compiled))
    reason = devsets.missing_reason()
    lobo: dict[str, dict] = {}
    strict: dict[str, dict] = {}  # also without the branches the book shares with other origins
    # The dev books, then the genre dev samples (MATH, TheoremQA outside their test splits): tuned on alike.
    # A book's later samples (more of its problems, in no triplet) are measured beside it, and leave one
    # book out drops the same branches for them as for the book (devsets.origin: "gs-2" -> "gs").
    tuned = {
        **({} if reason else {**devsets.BOOKS, **devsets.THIRD_SAMPLES, **devsets.SECOND_SAMPLES}),
        **({} if devsets.missing_reason(collections=devsets.GENRE_DEV) else devsets.GENRE_DEV),
    }
    for book, name in tuned.items():
        ids, texts, truth = dev_book(book)
        if not ids:  # a sample not labelled yet
            continue
        books[name] = (ids, texts, truth, measure(texts, truth, concepts, compiled))
        lobo[name] = measure(texts, truth, concepts, compiled_rules(without=devsets.origin(name)))
        strict[name] = measure(texts, truth, concepts, compiled_rules(without=devsets.origin(name), strict=True))
    # The test splits: measured with every rule, never tuned on (benchmarks/devsets/TEST_SETS.md).
    tests: dict[str, dict] = {}
    if not args.no_test_splits and not devsets.missing_reason(collections=devsets.TEST_SETS):
        for collection, name in devsets.TEST_SETS.items():
            _, texts, truth = dev_book(collection)
            tests[name] = measure(texts, truth, concepts, compiled)
    # The second samples are a yardstick like the test splits: rules are never written from them, so no
    # per-problem misses or per-concept lists are printed for them.
    tunable = {name: b for name, b in books.items() if name not in devsets.SECOND_SAMPLES.values()}
    if args.misses:
        print_misses(args.misses, tunable)
        return 0
    summary = {
        name: {k: v for k, v in r.items() if not k.startswith("_") and k != "concepts"} for name, (_, _, _, r) in books.items()
    }
    for name, r in lobo.items():
        summary[name]["leave_one_book_out"] = {k: v for k, v in r.items() if not k.startswith("_") and k != "concepts"}
        summary[name]["leave_one_book_out_strict"] = {k: v for k, v in strict[name].items() if not k.startswith("_") and k != "concepts"}
    for name, r in tests.items():
        summary[name] = {k: v for k, v in r.items() if not k.startswith("_") and k != "concepts"} | {"test_split": True}
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    print(f"rules: {len(demo_rules())} of {len(concepts)} concepts")
    if reason:
        print(f"dev books skipped: {reason}")
    print(f"\n{'set':13} {'problems':>8} {'FN':>8} {'FP':>7} {'recall':>8} {'precision':>9} {'no concept':>11} {'LOBO FN':>8} {'LOBO FP':>8} {'LOBO prec.':>10} "
          f"{'strict FN':>9} {'strict FP':>9}")
    for name, s in summary.items():
        if s.get("test_split") and not any(summary[n].get("test_split") for n in list(summary)[: list(summary).index(name)]):
            print("test splits, never tuned on (per-concept figures not printed, so that nobody tunes on them):")
        lo, st = s.get("leave_one_book_out", {}), s.get("leave_one_book_out_strict", {})
        print(f"{name:13} {s['problems']:>8} {pct(s['fn_rate']):>8} {pct(s['fp_rate']):>7} {pct(s['micro_recall']):>8} {pct(s['micro_precision']):>9} "
              f"{pct(s['no_concept']):>11} {pct(lo.get('fn_rate')) if lo else '':>8} {pct(lo.get('fp_rate')) if lo else '':>8} "
              f"{pct(lo.get('micro_precision')) if lo else '':>10} {pct(st.get('fn_rate')) if st else '':>9} {pct(st.get('fp_rate')) if st else '':>9}")
    if lobo:
        print("\nleave one book out, read two more ways: micro recall (the share of all labelled concepts found) and the FN"
              " average over concepts with at least 3 labelled positives (in the book / without its branches / strict):")
        for name, lo in lobo.items():
            s_ = summary[name]
            print(f"  {name:13} micro recall {pct(s_['micro_recall'])} / {pct(lo['micro_recall'])} / {pct(strict[name]['micro_recall'])}; "
                  f"FN over {lo['concepts_3_positives']} concepts with >= 3 positives {pct(s_['fn_rate_3_positives'])} / "
                  f"{pct(lo['fn_rate_3_positives'])} / {pct(strict[name]['fn_rate_3_positives'])}")
    print("\nlabelled concepts found, missed and found wrongly, per set (found / missed / wrong):")
    print("  " + "; ".join(f"{name} {s['found_right']} / {s['missed']} / {s['wrong']}" for name, s in summary.items()))
    for name, (_, _, _, r) in tunable.items():
        print(f"\n{name}: worst FN: {', '.join(worst(r['concepts'], 'fn', args.worst))}")
        print(f"{name}: worst FP: {', '.join(worst(r['concepts'], 'fp', args.worst))}")
    if args.shared:
        run_shared(args.shared, compiled)
    if args.miss_classes and not reason:
        print_miss_classes(concepts, books)
    if args.new_book and not reason:
        print_new_book_curve(concepts)
    if args.transfer and not reason:
        print_transfer(concepts, {name: (texts, truth) for name, (_, texts, truth, _) in tunable.items() if name != "demo"})
    if args.learned and not reason:
        from concepts import learned

        config = learned.LearnedConfig(thresholds_against_rules=not args.thresholds_alone)
        if args.thresholds_alone:
            print("\nthe learned half below has its thresholds chosen for the model alone (--thresholds-alone; the product"
                  " chooses them against the rules: concepts/learned.py)")
        print("\nleave one book out: the rules alone -> with the learned extractor (the book's labels out of fold)"
              " -> with one that never saw the book's labels:")
        for name, (alone, with_learned, blind) in lobo_with_learned(concepts, config).items():
            print(f"  {name:10} FN {pct(alone.fn_rate)} -> {pct(with_learned.fn_rate)} -> {pct(blind.fn_rate)}, "
                  f"FP {pct(alone.fp_rate)} -> {pct(with_learned.fp_rate)} -> {pct(blind.fp_rate)}")
        print("\nsecond samples (more problems of a dev book, in no triplet; rules and model tuned on the book's other labels):"
              " the rules alone -> with the learned extractor trained on every label but the second samples':")
        for name, (alone, with_learned) in second_samples_with_learned(concepts, config).items():
            print(f"  {name:11} FN {pct(alone.fn_rate)} -> {pct(with_learned.fn_rate)}, FP {pct(alone.fp_rate)} -> "
                  f"{pct(with_learned.fp_rate)}, micro recall {pct(alone.micro_recall)} -> {pct(with_learned.micro_recall)}")
        if tests:
            print("\ntest splits, never tuned on: the rules alone -> with the learned extractor trained on every other"
                  " label of the bank (the demo, the dev books, the genre dev samples; never the split's own):")
            for name, (alone, with_learned) in test_splits_with_learned(concepts, config).items():
                print(f"  {name:10} FN {pct(alone.fn_rate)} -> {pct(with_learned.fn_rate)}, FP {pct(alone.fp_rate)} -> "
                      f"{pct(with_learned.fp_rate)}, micro recall {pct(alone.micro_recall)} -> {pct(with_learned.micro_recall)}, "
                      f"concepts added {with_learned.total('tp') + with_learned.total('fp') - alone.total('tp') - alone.total('fp')}"
                      f" ({with_learned.total('tp') - alone.total('tp')} right)")
    return 0


def print_transfer(concepts: list[str], sets: dict[str, tuple[list[str], list[set[str]]]]) -> None:
    from benchmarks.rule_workbench import BLIND_PASS, blind_pass, transfer

    print(f"\nblind pass ({BLIND_PASS.relative_to(ROOT)}): the rules each author saw, without -> with its branches;"
          " per set FN, FP, and the labelled concepts its branches add right / wrong; * its own set")
    for origin, by_set in transfer(demo_rule_branches(), blind_pass(), sets, concepts).items():
        print(f"  {origin}")
        for name, (a, b) in by_set.items():
            print(f"    {name + ('*' if name == origin else ''):15} FN {pct(a.fn_rate)} -> {pct(b.fn_rate)}, FP {pct(a.fp_rate)} -> {pct(b.fp_rate)}, "
                  f"+{b.total('tp') - a.total('tp')} right / +{b.total('fp') - a.total('fp')} wrong")


def concept_matrix(concept_sets: "list", slugs: list[str], dtype: type) -> "np.ndarray":
    """{0, 1} matrix (len(concept_sets), len(slugs)): row i marks the slugs of concept_sets[i] (None: none)."""
    import numpy as np

    col = {s: j for j, s in enumerate(slugs)}
    out = np.zeros((len(concept_sets), len(slugs)), dtype=dtype)
    for i, found in enumerate(concept_sets):
        out[i, [col[s] for s in found or ()]] = 1
    return out


def lobo_with_learned(concepts: list[str], config: "learned.LearnedConfig | None" = None) -> dict[str, tuple[extraction.Evaluation, ...]]:
    """Per book: the LOBO rules alone; plus concepts.learned trained on the dev bank's labels (the
    book's own labels scored out of fold); and plus concepts.learned that never saw the book's labels
    (trained on the other books and the demo, each training problem's rule hits from the rules without
    its own book, so the thresholds are chosen where rules miss as much as on a new book; with
    ``thresholds_against_rules=False`` the hits do not matter)."""
    import numpy as np

    from benchmarks.devset_table1 import load_bank
    from concepts import learned

    bank = load_bank()
    bank.reads_solutions = READS_SOLUTIONS
    sources = sorted(set(bank.books))
    unseen = {b: extraction.extract_many(bank.rule_texts(), compiled_rules(without=b)) for b in sources}

    def hits_of(found: list[set[str]]) -> "np.ndarray":
        return concept_matrix(found, bank.slugs, bool)

    def truth_of(rows: list[int]) -> "np.ndarray":
        return concept_matrix([bank.labels[i] for i in rows], bank.slugs, np.float32)

    config = config or learned.LearnedConfig()
    labelled = [i for i, lab in enumerate(bank.labels) if lab]
    regime = hits_of([unseen[b][i] for i, b in enumerate(bank.books)])
    out = {}
    for folder, name in devsets.BOOKS.items():
        found = unseen[name]
        rows = _labelled_rows(bank, name, folder, devsets.labels(folder))  # the first sample, as in the per-book table
        t = [set(bank.labels[i] or ()) for i in rows]
        fit = learned.cross_fit(bank.rule_texts(), labelled, truth_of(labelled), hits_of(found), config)
        added = [found[i] | {bank.slugs[j] for j in fit.predicted[i]} for i in rows]
        others = [i for i in labelled if bank.books[i] != name]
        blind = learned.cross_fit(bank.rule_texts(), others, truth_of(others), regime, config)
        blind_added = [found[i] | {bank.slugs[j] for j in blind.predicted[i]} for i in rows]
        out[name] = (
            extraction.evaluate([found[i] for i in rows], t, concepts),
            extraction.evaluate(added, t, concepts),
            extraction.evaluate(blind_added, t, concepts),
        )
    return out


def test_splits_with_learned(concepts: list[str], config: "learned.LearnedConfig | None" = None) -> dict[str, tuple[extraction.Evaluation, extraction.Evaluation]]:
    """Per test split: the rules alone, and the rules plus concepts.learned as the hybrid source would
    run on a bank holding the split's collection, trained on every label of the bank except the
    split's own (whose problems it scores as unlabelled ones). Text nobody tuned rules or model on."""
    from benchmarks.devset_table1 import load_bank

    bank = load_bank(test_splits=True)
    bank.reads_solutions = READS_SOLUTIONS
    measured = {name: _labelled_rows(bank, name, collection, devsets.labels(collection)) for collection, name in devsets.TEST_SETS.items()}
    return held_out_with_learned(bank, measured, concepts, config)


def second_samples_with_learned(concepts: list[str], config: "learned.LearnedConfig | None" = None) -> dict[str, tuple[extraction.Evaluation, extraction.Evaluation]]:
    """Per second sample (more problems of a dev book, in no triplet): the rules alone, and the rules plus
    concepts.learned trained on every label of the bank except the second samples': what the hybrid
    source gives on problems of a book whose other labelled problems the rules and the model were tuned on."""
    from benchmarks.devset_table1 import load_bank

    bank = load_bank()
    bank.reads_solutions = READS_SOLUTIONS
    measured = {
        name: _labelled_rows(bank, devsets.BOOKS[devsets.SECOND_OF[folder]], devsets.SECOND_OF[folder], devsets.labels(folder))
        for folder, name in devsets.SECOND_SAMPLES.items()
    }
    return held_out_with_learned(bank, measured, concepts, config)


def _labelled_rows(bank, book_name: str, collection: str, truth: dict) -> list[int]:
    """The bank's rows of ``collection`` (named ``book_name`` in the bank) whose ids ``truth`` labels."""
    rows = [i for i, b in enumerate(bank.books) if b == book_name]
    return [i for i, r in zip(rows, devsets.book_problems(collection)) if r["id"] in truth]


def held_out_with_learned(
    bank, measured: dict[str, list[int]], concepts: list[str], config: "learned.LearnedConfig | None" = None
) -> dict[str, tuple[extraction.Evaluation, extraction.Evaluation]]:
    """Per name: its rows' FN / FP with the rules alone and with concepts.learned added, the model trained
    on every labelled row of the bank outside ``measured`` (so it scores those rows as unlabelled ones)."""
    import numpy as np

    from concepts import learned

    found = extraction.extract_many(bank.rule_texts(), compiled_rules())
    held_out = {i for rows in measured.values() for i in rows}
    train = [i for i, lab in enumerate(bank.labels) if lab and i not in held_out]
    fit = learned.cross_fit(
        bank.rule_texts(), train, concept_matrix([bank.labels[i] for i in train], bank.slugs, np.float32), concept_matrix(found, bank.slugs, bool),
        config or learned.LearnedConfig(),
    )
    out = {}
    for name, rows in measured.items():
        truth = [set(bank.labels[i] or ()) for i in rows]
        out[name] = (
            extraction.evaluate([found[i] for i in rows], truth, concepts),
            extraction.evaluate([found[i] | {bank.slugs[j] for j in fit.predicted[i]} for i in rows], truth, concepts),
        )
    return out


def new_book_curve(
    texts: list[str],
    books: list[str],
    labels: list[set[str] | None],
    found_without: dict[str, list[set[str]]],
    slugs: list[str],
    book: str,
    ks: tuple[int, ...] = (0, 10, 25, 50),
    draws: int = 3,
    seed: int = 0,
) -> dict[int, list[tuple[extraction.Evaluation, extraction.Evaluation]]]:
    """A course imports ``book``, which the rules were not written from, and labels k of its problems:
    what do the rules, and the rules plus concepts.learned, find on the book's other labelled problems?

    ``found_without[b][i]``: problem i's rule hits with the rules without book b's branches (each
    training problem is read as a new book too, as in lobo_with_learned's blind regime). The learned
    model trains on every other book's labels plus the k drawn problems of ``book``, and is measured on
    the rest of its labelled problems, never on one it trained on. {k: [(rules, rules + learned) per draw]}.
    """
    import numpy as np

    from concepts import learned

    hits = concept_matrix([found_without[b][i] for i, b in enumerate(books)], slugs, bool)

    def truth_of(rows: list[int]) -> "np.ndarray":
        return concept_matrix([labels[i] for i in rows], slugs, np.float32)

    own = [i for i, b in enumerate(books) if b == book and labels[i]]
    others = [i for i, b in enumerate(books) if b != book and labels[i]]
    found = found_without[book]
    out: dict[int, list[tuple[extraction.Evaluation, extraction.Evaluation]]] = {}
    for k in ks:
        out[k] = []
        for draw in range(draws if 0 < k < len(own) else 1):
            drawn = set(np.random.default_rng(seed + draw).choice(own, size=min(k, len(own)), replace=False).tolist()) if k else set()
            test = [i for i in own if i not in drawn]
            train = others + sorted(drawn)
            fit = learned.cross_fit(texts, train, truth_of(train), hits)
            truth = [set(labels[i] or ()) for i in test]
            out[k].append((
                extraction.evaluate([found[i] for i in test], truth, slugs),
                extraction.evaluate([found[i] | {slugs[j] for j in fit.predicted[i]} for i in test], truth, slugs),
            ))
    return out


def print_new_book_curve(concepts: list[str]) -> None:
    from statistics import mean

    from benchmarks.devset_table1 import load_bank

    bank = load_bank()
    bank.reads_solutions = READS_SOLUTIONS
    found_without = {b: extraction.extract_many(bank.rule_texts(), compiled_rules(without=b)) for b in sorted(set(bank.books))}
    labels = [set(lab) if lab else None for lab in bank.labels]
    print("\na new book (rules not written from it) after the course labels k of its problems: FN / FP on its other"
          " labelled problems, the rules alone -> with the learned extractor (mean over 3 draws of the k problems)")
    for name in devsets.BOOKS.values():
        curve = new_book_curve(bank.rule_texts(), bank.books, labels, found_without, bank.slugs, name)
        cells = []
        for k, runs in curve.items():
            rules_fn = mean(r.fn_rate or 0.0 for r, _ in runs)
            fn, fp = mean(h.fn_rate or 0.0 for _, h in runs), mean(h.fp_rate or 0.0 for _, h in runs)
            cells.append(f"k={k}: {pct(rules_fn)} -> {pct(fn)} / {pct(fp)}")
        print(f"  {name:10} " + " | ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
