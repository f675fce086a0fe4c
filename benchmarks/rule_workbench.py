"""A blind rule-authoring workbench: write rule branches from ONE collection's text, seeing nothing of the others.

Why
    "Leave one book out" (``rule_quality.py``) asks how the starter rules do on a book they were not
    written from. Branches written by someone who has read the other books' misses would flatter that
    figure. Here an author works on one dev set (a dev book, or a genre dev collection without its
    test split) and sees only its problems, its expert labels, the demo bank, and the branches of
    ``rules.json`` whose origins are all among ``demo``, ``general`` and its own. ``merge`` adds the
    proposals to ``rules.json`` tagged with that origin and ``"blind": true``.
    ``rule_quality.py --transfer`` measures what a recorded pass (``benchmarks/devsets/blind-pass/``)
    carries to the sets its authors never saw.

Commands (from the project folder; NAME is a dev set: openstax, openintro, gs, math-dev, theoremqa-dev)
    .venv/bin/python benchmarks/rule_workbench.py NAME status      per concept: labelled misses and wrong matches, visible rules vs + proposals; demo totals
    .venv/bin/python benchmarks/rule_workbench.py NAME check       each proposed branch: engine check, NEW hits on labelled (right/wrong), unlabelled, demo
    .venv/bin/python benchmarks/rule_workbench.py NAME misses SLUG labelled problems whose SLUG the rules miss, and wrong matches
    .venv/bin/python benchmarks/rule_workbench.py NAME grep REGEX [--limit N]
    .venv/bin/python benchmarks/rule_workbench.py NAME show ID
    .venv/bin/python benchmarks/rule_workbench.py NAME nothing [--limit N]      problems where no concept is found
    .venv/bin/python benchmarks/rule_workbench.py NAME rule SLUG   the branches of SLUG this author may see, and its proposals
    .venv/bin/python benchmarks/rule_workbench.py NAME merge       add the proposals to rules.json (all or nothing)
Proposals: ``benchmarks/out/workbench-NAME.json`` (or ``--proposals FILE``): {"slug": ["regex", ...]}.

A new book (``--new-book K``): the course has just imported a book and labelled K of its problems.
The author sees every problem of the book but only the labels of K of them (drawn with ``--seed``),
and the starter rules as a course would have them without anything written from this book (every
branch naming it is left out: ``demo_rules(without=NAME, strict=True)``). Proposals go to
``benchmarks/out/workbench-NAME-new-book.json``. ``score`` is the experimenter's command, never the
author's: FN / FP on the labelled problems the author did not see, without and with the proposals.
A new-book pass is measured, not merged.
    .venv/bin/python benchmarks/rule_workbench.py NAME status --new-book 30
    .venv/bin/python benchmarks/rule_workbench.py NAME score --new-book 30
``--pick fewest`` labels first the K problems where those rules find the fewest concepts, as a course
labelling from the "no rule matches" queue would; ``score --unseen-by PICK:SEED`` keeps only problems
that another draw's author did not see either, so that two passes are compared on the same problems.

Plain Python, no Django. Problem text is read from ../shared/data (or $PROB2VEC_SHARED_DATA) and never stored.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from benchmarks.devsets.sample_genre_dev import test_ids  # noqa: E402
from concepts import extraction  # noqa: E402  (pure)
from problems.demo_course import DEMO_DIR, RULE_ORIGINS, bank_files  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
RULES_FILE = DEMO_DIR / "rules.json"
# One blind pass, recorded: what four authors proposed, each seeing one dev set (README, "Blind rule
# authoring"). Measured by ``rule_quality.py --transfer``; not merged into the starter rules.
BLIND_PASS = ROOT / "benchmarks" / "devsets" / "blind-pass"
# One new-book pass, recorded (stop 27): three authors, each reading one dev book as new with 30 of its
# labels (``--new-book 30``, seed 0). Measured by ``score``; not merged.
NEW_BOOK_PASS = ROOT / "benchmarks" / "devsets" / "new-book-pass"
ALWAYS_VISIBLE = frozenset({"demo", "general"})  # our own bank and textbook usage in general
DEV_SETS = {**{name: folder for folder, name in devsets.BOOKS.items()}, **{name: folder for folder, name in devsets.GENRE_DEV.items()}}


class WorkbenchError(ValueError):
    """Proposals that cannot be merged: the message names the concept and the branch."""


def visible(branch: dict, origin: str) -> bool:
    """May an author writing from ``origin`` see this branch? If every origin of it is theirs or ours,
    or it is a blind branch that they wrote (two blind authors may write the same branch)."""
    return set(branch["from"]) <= ALWAYS_VISIBLE | {origin} or bool(branch.get("blind") and origin in branch["from"])


def visible_new_book(branch: dict, origin: str) -> bool:
    """A new book's author sees the starter rules with nothing written from that book (strict)."""
    return origin not in branch["from"]


def visible_rules(
    spec: dict, origin: str, proposals: dict[str, list[str]] | None = None, new_book: bool = False
) -> list[extraction.Rule]:
    """The rules an author from ``origin`` sees, plus their proposals (``spec`` as rules.json)."""
    proposals = proposals or {}
    sees = visible_new_book if new_book else visible
    rules = []
    for slug, rule in spec.items():
        seen = [b for b in rule["branches"] if sees(b, origin)]
        branches = [b["re"] for b in seen if not b.get("statement_only")] + list(proposals.get(slug, []))
        in_statement = [b["re"] for b in seen if b.get("statement_only")]
        if branches or in_statement:
            rules.append(extraction.Rule(slug, "|".join(branches), bool(rule.get("ignore_case", True)), "|".join(in_statement)))
    return rules


def check_branch(slug: str, pattern: str, ignore_case: bool) -> None:
    """A proposed branch must be a valid pattern that RE2 runs (WorkbenchError naming it otherwise)."""
    try:
        engine = extraction.check_pattern(pattern, ignore_case)
    except extraction.RuleError as exc:
        raise WorkbenchError(f"{slug}: branch {pattern!r}: {exc}") from None
    if engine != extraction.ENGINE_RE2:
        raise WorkbenchError(f"{slug}: branch {pattern!r} needs the backtracking engine (lookaround or a backreference); rewrite it for RE2")


def merged(spec: dict, proposals: dict[str, list[str]], origin: str) -> tuple[dict, int]:
    """rules.json with the proposals added as blind branches of ``origin``; (new spec, branches added).

    All or nothing: an unknown concept, an empty or invalid branch, one the RE2 engine cannot run, or
    a rule that would outgrow the editor raises WorkbenchError and ``spec`` is left as it was.
    """
    if origin not in RULE_ORIGINS or origin in ALWAYS_VISIBLE:
        raise WorkbenchError(f"{origin!r} is not a dev set origin ({', '.join(sorted(DEV_SETS))})")
    out = json.loads(json.dumps(spec))
    added = 0
    for slug, branches in proposals.items():
        if slug not in out:
            raise WorkbenchError(f"{slug}: no such concept rule in rules.json")
        if not isinstance(branches, list) or not all(isinstance(b, str) for b in branches):
            raise WorkbenchError(f"{slug}: proposals must be a list of regex strings")
        for pattern in branches:
            check_branch(slug, pattern, bool(out[slug].get("ignore_case", True)))
            same = next((b for b in out[slug]["branches"] if b["re"] == pattern), None)
            if same and same.get("blind") and origin not in same["from"]:
                same["from"].append(origin)  # another blind author wrote it too
            if same:
                continue  # otherwise already there, and its origins stay as they were
            out[slug]["branches"].append({"re": pattern, "from": [origin], "blind": True})
            added += 1
        length = len("|".join(b["re"] for b in out[slug]["branches"]))
        if length > extraction.MAX_PATTERN_LENGTH:
            raise WorkbenchError(f"{slug}: the rule would be {length} characters, over the editor's {extraction.MAX_PATTERN_LENGTH}")
    return out, added


def transfer(
    spec: dict, proposals: dict[str, dict[str, list[str]]], sets: dict[str, tuple[list[str], list[set[str]]]], concepts: list[str]
) -> dict[str, dict[str, tuple[extraction.Evaluation, extraction.Evaluation]]]:
    """What each blind author's proposals carry: per origin (``proposals``: origin -> its proposals),
    the rules its author saw (``visible_rules``) without and with them, evaluated on every labelled
    set (name -> (texts, truth)), its own included. {origin: {set: (before, after)}}."""
    out: dict[str, dict[str, tuple[extraction.Evaluation, extraction.Evaluation]]] = {}
    for origin, proposed in sorted(proposals.items()):
        before = extraction.compile_rules(visible_rules(spec, origin))
        after = extraction.compile_rules(visible_rules(spec, origin, proposed))
        out[origin] = {
            name: (
                extraction.evaluate(extraction.extract_many(texts, before), truth, concepts),
                extraction.evaluate(extraction.extract_many(texts, after), truth, concepts),
            )
            for name, (texts, truth) in sets.items()
        }
    return out


def blind_pass(folder: Path = BLIND_PASS) -> dict[str, dict[str, list[str]]]:
    """A recorded pass (by default the blind pass; ``NEW_BOOK_PASS`` the new-book pass): origin ->
    proposals, one ``<origin>.json`` per author."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))}


@dataclass
class Collection:
    name: str
    ids: list[str]
    texts: list[str]
    labels: dict[str, set[str]]  # what the author may see
    held_out: dict[str, set[str]] = field(default_factory=dict)  # labels kept from the author (new book)


PICKS = ("random", "fewest")


def collection(name: str, new_book: int = 0, seed: int = 0, pick: str = "random") -> Collection:
    """A dev set's problems as its author may read them: a genre collection loses its test split; a new
    book (``new_book`` = K > 0) shows the labels of K problems and holds out the rest. ``pick`` says which
    K a course labels first: ``random`` (drawn with ``seed``), or ``fewest``: those where the rules it
    starts from find the fewest concepts (the labelling page's "no rule matches" queue first; ties drawn
    with ``seed``)."""
    folder = DEV_SETS[name]
    hidden = test_ids(devsets.GENRE_DEV_OF[folder]) if folder in devsets.GENRE_DEV_OF else set()
    records = [r for r in devsets.book_problems(folder) if r["id"] not in hidden]
    ids = [r["id"] for r in records]
    truth = {i: set(c) for i, c in devsets.labels(folder).items() if i in set(ids)}
    held_out: dict[str, set[str]] = {}
    if new_book:
        labelled = sorted(truth)
        if pick == "fewest":
            rules = extraction.compile_rules(visible_rules(json.loads(RULES_FILE.read_text(encoding="utf-8")), name, new_book=True))
            row = {problem: i for i, problem in enumerate(ids)}
            found = dict(zip(labelled, extraction.extract_many([records[row[i]]["text"] for i in labelled], rules)))
            draw = random.Random(seed)
            ties = {i: draw.random() for i in labelled}
            order = sorted(labelled, key=lambda i: (len(found[i]), ties[i]))
            shown = set(order[:new_book])
        else:
            shown = set(random.Random(seed).sample(labelled, min(new_book, len(labelled))))
        held_out = {i: c for i, c in truth.items() if i not in shown}
        truth = {i: c for i, c in truth.items() if i in shown}
    return Collection(name, ids, [r["text"] for r in records], truth, held_out)


def score(spec: dict, books: Collection, proposals: dict[str, list[str]], concepts: list[str]) -> tuple[extraction.Evaluation, extraction.Evaluation]:
    """A new-book pass on the labelled problems its author never saw: (without, with) the proposals."""
    ids = sorted(books.held_out)
    row = {problem: i for i, problem in enumerate(books.ids)}
    texts = [books.texts[row[i]] for i in ids]
    truth = [books.held_out[i] for i in ids]
    return tuple(  # type: ignore[return-value]
        extraction.evaluate(extraction.extract_many(texts, extraction.compile_rules(visible_rules(spec, books.name, p, new_book=True))), truth, concepts)
        for p in ({}, proposals)
    )


def flat(text: str) -> str:
    return " ".join(text.split())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(DEV_SETS))
    parser.add_argument("command", choices=["status", "check", "misses", "grep", "show", "nothing", "rule", "merge", "score"])
    parser.add_argument("arg", nargs="?", default="")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--proposals", type=Path)
    parser.add_argument("--new-book", type=int, default=0, metavar="K", help="a new book with K labelled problems (module doc)")
    parser.add_argument("--seed", type=int, default=0, help="which K problems are labelled (--new-book)")
    parser.add_argument("--pick", choices=PICKS, default="random", help="which K a new book labels first: random, or where the rules find fewest (--new-book)")
    parser.add_argument("--unseen-by", action="append", default=[], metavar="PICK:SEED",
                        help="score: only on problems that the author of this other draw did not see either (to compare two passes on the same problems)")
    args = parser.parse_args(argv)
    new_book = args.new_book > 0
    if args.command == "score" and not new_book:
        parser.error("score measures a new-book pass: give --new-book K")
    path = args.proposals or OUT / (f"workbench-{args.name}-new-book.json" if new_book else f"workbench-{args.name}.json")
    try:
        proposals = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except json.JSONDecodeError as exc:
        print(f"{path}: not valid JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(proposals, dict):
        print(f"{path}: expected an object {{\"slug\": [\"regex\", ...]}}", file=sys.stderr)
        return 2
    spec = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    if args.command == "merge":
        if new_book:
            print("nothing merged: a new-book pass is measured (score), not merged", file=sys.stderr)
            return 2
        try:
            new, added = merged(spec, proposals, args.name)
        except WorkbenchError as exc:
            print(f"nothing merged: {exc}", file=sys.stderr)
            return 2
        RULES_FILE.write_text(json.dumps(new, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"merged {added} blind branch(es) of {args.name} from {path} into {RULES_FILE.name}")
        return 0
    reason = devsets.missing_reason(collections={DEV_SETS[args.name]: args.name})
    if reason:
        print(f"skipped: {reason}")
        return 0

    books = collection(args.name, args.new_book, args.seed, args.pick)
    for other in args.unseen_by:
        other_pick, _, other_seed = other.partition(":")
        if other_pick not in PICKS or not other_seed.isdigit():
            parser.error(f"--unseen-by {other}: expected PICK:SEED with PICK one of {', '.join(PICKS)}")
        seen = collection(args.name, args.new_book, int(other_seed), other_pick).labels
        books.held_out = {i: c for i, c in books.held_out.items() if i not in seen}
    if args.command == "score":
        for slug, proposed in proposals.items():
            if slug not in spec:
                print(f"{slug}: no such concept rule in rules.json", file=sys.stderr)
                return 2
            try:
                for pattern in proposed:
                    check_branch(slug, pattern, bool(spec[slug].get("ignore_case", True)))
            except WorkbenchError as exc:
                print(f"!! {exc}", file=sys.stderr)
                return 2
        try:
            before, after = score(spec, books, proposals, sorted(spec))
        except extraction.RuleError as exc:  # each branch is valid, the rule with all of them is not (too long)
            print(f"!! {exc}", file=sys.stderr)
            return 2
        print(f"{args.name} as a new book, {len(books.labels)} labelled ({args.pick}, seed {args.seed}); scored on the other "
              f"{len(books.held_out)} labelled problems, rules without anything written from it -> with {sum(map(len, proposals.values()))} "
              f"proposed branch(es) from {path.name}:")
        print(f"  FN {100 * (before.fn_rate or 0):.2f}% -> {100 * (after.fn_rate or 0):.2f}%, FP {100 * (before.fp_rate or 0):.2f}% -> {100 * (after.fp_rate or 0):.2f}%")
        for name, ev in (("before", before), ("after", after)):
            print(f"  {name:6} micro recall {100 * (ev.micro_recall or 0):.1f}%, precision {100 * (ev.micro_precision or 0):.1f}% "
                  f"({ev.total('tp')} right, {ev.total('fp')} wrong, {ev.total('fn')} missed)")
        return 0
    demo = [json.loads(line) for p in bank_files() for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    base = extraction.compile_rules(visible_rules(spec, args.name, new_book=new_book))
    try:
        now = extraction.compile_rules(visible_rules(spec, args.name, proposals, new_book=new_book))
    except extraction.RuleError as exc:
        print(f"!! {exc}: the rule with your proposals cannot run; shorten or drop a branch", file=sys.stderr)
        return 2
    found = extraction.extract_many(books.texts, now)
    labelled = [i for i, x in enumerate(books.ids) if x in books.labels]

    def label_of(i: int) -> str:
        return str(sorted(books.labels[books.ids[i]])) if books.ids[i] in books.labels else "(unlabelled)"

    if args.command == "status":
        before = extraction.extract_many(books.texts, base)
        demo_before = extraction.extract_many([d["text"] for d in demo], base)
        demo_now = extraction.extract_many([d["text"] for d in demo], now)

        def errors(predicted: list[set[str]]) -> tuple[Counter, Counter, Counter]:
            missed, wrong, positives = Counter(), Counter(), Counter()
            for i in labelled:
                truth = books.labels[books.ids[i]]
                positives.update(truth)
                missed.update(truth - predicted[i])
                wrong.update(predicted[i] - truth)
            return missed, wrong, positives

        m0, w0, pos = errors(before)
        m1, w1, _ = errors(found)
        print(f"{args.name}: {len(books.ids)} problems, {len(labelled)} labelled; labelled concepts missed {sum(m0.values())} -> {sum(m1.values())} "
              f"of {sum(pos.values())}; wrong matches {sum(w0.values())} -> {sum(w1.values())}")
        print(f"problems with no concept: {sum(1 for f in before if not f)} -> {sum(1 for f in found if not f)} of {len(books.ids)}")
        demo_wrong = [sum(len(f - set(d["labels"])) for f, d in zip(p, demo)) for p in (demo_before, demo_now)]
        print(f"demo ({len(demo)} labelled problems): wrong matches {demo_wrong[0]} -> {demo_wrong[1]}")
        for slug in sorted(set(pos) | set(w1), key=lambda s: -(m1[s] + w1[s])):
            print(f"  {slug:32} missed {m0[slug]:>3} -> {m1[slug]:<3} of {pos[slug]:<3} wrong {w0[slug]:>3} -> {w1[slug]}")
    elif args.command == "check":
        before = extraction.extract_many(books.texts, base)
        demo_before = extraction.extract_many([d["text"] for d in demo], base)
        for slug, patterns in proposals.items():
            if slug not in spec:
                print(f"!! {slug}: no such concept rule in rules.json")
                continue
            ignore_case = bool(spec[slug].get("ignore_case", True))
            for pattern in patterns:
                try:
                    check_branch(slug, pattern, ignore_case)
                except WorkbenchError as exc:
                    print(f"!! {exc}")
                    continue
                rx = re.compile(pattern, re.ASCII | (re.IGNORECASE if ignore_case else 0))
                hits = [i for i, t in enumerate(books.texts) if slug not in before[i] and rx.search(t)]
                right = sum(1 for i in hits if books.ids[i] in books.labels and slug in books.labels[books.ids[i]])
                wrong = sum(1 for i in hits if books.ids[i] in books.labels and slug not in books.labels[books.ids[i]])
                demo_hits = [d for d, f in zip(demo, demo_before) if slug not in f and rx.search(d["text"])]
                demo_wrong = sum(1 for d in demo_hits if slug not in d["labels"])
                print(f"{slug:30} new hits: labelled right {right} wrong {wrong}, unlabelled {len(hits) - right - wrong}, "
                      f"demo right {len(demo_hits) - demo_wrong} wrong {demo_wrong}  {pattern}")
            # Merging checks the whole rule against the editor's limit; say so here, before a merge fails.
            length = len("|".join([b["re"] for b in spec[slug]["branches"]] + patterns))
            if length > extraction.MAX_PATTERN_LENGTH:
                print(f"   note: {slug} with all its proposals would be {length} characters, over the editor's {extraction.MAX_PATTERN_LENGTH}: `merge` will refuse it")
    elif args.command == "misses":
        for i in labelled:
            truth = books.labels[books.ids[i]]
            if (args.arg in truth) != (args.arg in found[i]):
                kind = "MISSED" if args.arg in truth else "WRONG"
                print(f"-- {kind} {books.ids[i]} labels={sorted(truth)} found={sorted(found[i])}\n   {flat(books.texts[i])[:900]}")
    elif args.command == "grep":
        rx = re.compile(args.arg, re.IGNORECASE)
        hits = [i for i, t in enumerate(books.texts) if rx.search(t)]
        for i in hits[: args.limit]:
            m = rx.search(books.texts[i])
            print(f"-- {books.ids[i]} labels={label_of(i)} found={sorted(found[i])}\n   ...{flat(books.texts[i][max(0, m.start() - 150): m.end() + 150])}...")
        print(f"{len(hits)} problems match")
    elif args.command == "show":
        i = books.ids.index(args.arg)
        print(f"{books.texts[i]}\nlabels: {label_of(i)}\nfound: {sorted(found[i])}")
    elif args.command == "nothing":
        empty = [i for i in range(len(books.ids)) if not found[i]]
        for i in empty[: args.limit]:
            print(f"-- {books.ids[i]} labels={label_of(i)}\n   {flat(books.texts[i])[:600]}")
        print(f"{len(empty)} problems with no concept")
    elif args.command == "rule":
        rule = spec[args.arg]
        print(f"{args.arg}: ignore_case={bool(rule.get('ignore_case', True))}")
        for b in rule["branches"]:
            if (visible_new_book if new_book else visible)(b, args.name):
                print(f"   {b['re']}")
        for pattern in proposals.get(args.arg, []):
            print(f"   (proposed) {pattern}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
