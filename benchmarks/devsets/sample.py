"""Draw the dev-set samples: problems of three public books, stratified over chapters and sections.

Why this way
    The dev sets measure concept extraction and embeddings on text nobody on the team wrote. A sample
    stratified over the books' chapters (our modules for triplets) and, within a chapter, spread
    round-robin over its sections keeps every topic represented instead of the largest chapters.
    More problems are drawn than are labelled: the labelling guide leaves out problems that cannot
    be answered from their record (a figure or an earlier exercise that is not in the text), and the
    annotators decide that while labelling.

A **second sample** (``--second``, stop 33) draws more problems of a book from those the first
sample did not take, the same way with another seed. Its problems are in no triplet, so rules
written from their misses were never written from the triplets the book is judged on.

A **third sample** (``--third``, stop 34) draws more again, from the problems neither earlier sample
took: labelled problems for writing rules and training the learned extractor, as a course team that
labels more of its bank would have. The second samples stay the yardstick that nothing is written from.

How to run (from the project folder; prints the ids, one per line, with the book's folder name)
    .venv/bin/python benchmarks/devsets/sample.py [--shared ../shared/data] [--second | --third] [--write]

The ids it printed are committed as ``<book>/sample.txt``; the sample never changes unless this
script does. Plain Python, no Django.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# Problems drawn per chapter, and the seed. OpenStax loses the most to "[link]" references.
PER_CHAPTER = {
    "openstax-introductory-statistics-2e": 17,
    "openintro-statistics-4e": 15,
    "grinstead-snell-probability": 11,
}
SEED = 14
# Second samples: book -> (problems per chapter, seed), written to ``<book>-2/sample.txt``.
SECOND_SAMPLE = {
    "openstax-introductory-statistics-2e": (6, 15),
    "openintro-statistics-4e": (8, 15),
    "grinstead-snell-probability": (8, 15),
}
# Third samples: book -> (problems per chapter, seed), written to ``<book>-3/sample.txt``.
THIRD_SAMPLE = {
    "openstax-introductory-statistics-2e": (6, 16),
    "openintro-statistics-4e": (8, 16),
    "grinstead-snell-probability": (8, 16),
}
# The overlap labelled by a second annotator: the first of each book's sample (a random order).
SECOND_ANNOTATOR = 25


def chapter_of(record: dict) -> str:
    return record.get("chapter") or record["module"].split(" ", 1)[0].split(".")[0]


def sample_book(records: list[dict], per_chapter: int, seed: int) -> list[str]:
    """Ids of ``per_chapter`` problems of each chapter, round-robin over its sections, in a random order."""
    rng = random.Random(seed)
    by_chapter: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        by_chapter[chapter_of(record)][record["module"]].append(record["id"])
    picked: list[str] = []
    for chapter in sorted(by_chapter):
        sections = [list(ids) for _, ids in sorted(by_chapter[chapter].items())]
        for ids in sections:
            rng.shuffle(ids)
        rng.shuffle(sections)
        chosen: list[str] = []
        while len(chosen) < per_chapter and any(sections):
            for ids in sections:
                if ids and len(chosen) < per_chapter:
                    chosen.append(ids.pop())
        picked.extend(chosen)
    rng.shuffle(picked)
    return picked


def read_records(shared: Path, book: str) -> list[dict]:
    with (shared / book / "problems.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def second_sample(book: str, shared: Path) -> list[str]:
    """The book's second sample: drawn like the first, from the problems the first did not take."""
    first = set((HERE / book / "sample.txt").read_text(encoding="utf-8").split())
    per_chapter, seed = SECOND_SAMPLE[book]
    return sample_book([r for r in read_records(shared, book) if r["id"] not in first], per_chapter, seed)


def third_sample(book: str, shared: Path) -> list[str]:
    """The book's third sample: drawn like the others, from the problems neither earlier sample took."""
    taken = set()
    for folder in (book, f"{book}-2"):
        taken |= set((HERE / folder / "sample.txt").read_text(encoding="utf-8").split())
    per_chapter, seed = THIRD_SAMPLE[book]
    # One OpenIntro record's id ends in a newline ("OI-5.15-\n"): it cannot be written one id per line.
    records = [r for r in read_records(shared, book) if r["id"] not in taken and r["id"] == r["id"].strip()]
    return sample_book(records, per_chapter, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--write", action="store_true", help="write <book>/sample.txt beside this script")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--second", action="store_true", help="the second samples (<book>-2/sample.txt)")
    which.add_argument("--third", action="store_true", help="the third samples (<book>-3/sample.txt)")
    args = parser.parse_args()
    if args.third:
        draws = {f"{book}-3": third_sample(book, args.shared) for book in THIRD_SAMPLE}
    elif args.second:
        draws = {f"{book}-2": second_sample(book, args.shared) for book in SECOND_SAMPLE}
    else:
        draws = {book: sample_book(read_records(args.shared, book), n, SEED) for book, n in PER_CHAPTER.items()}
    for folder, ids in draws.items():
        if args.write:
            out = HERE / folder / "sample.txt"
            out.parent.mkdir(exist_ok=True)
            out.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
        for problem_id in ids:
            print(f"{folder}\t{problem_id}")


if __name__ == "__main__":
    main()
