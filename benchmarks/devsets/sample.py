"""Draw the dev-set samples: problems of three public books, stratified over chapters and sections.

Why this way
    The dev sets measure concept extraction and embeddings on text nobody on the team wrote. A sample
    stratified over the books' chapters (our modules for triplets) and, within a chapter, spread
    round-robin over its sections keeps every topic represented instead of the largest chapters.
    More problems are drawn than are labelled: the labelling guide leaves out problems that cannot
    be answered from their record (a figure or an earlier exercise that is not in the text), and the
    annotators decide that while labelling.

How to run (from the project folder; prints the ids, one per line, with the book's folder name)
    .venv/bin/python benchmarks/devsets/sample.py [--shared ../shared/data]

The ids it printed are committed as ``<book>/sample.txt``; the sample never changes unless this
script does. Plain Python, no Django.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Problems drawn per chapter, and the seed. OpenStax loses the most to "[link]" references.
PER_CHAPTER = {
    "openstax-introductory-statistics-2e": 17,
    "openintro-statistics-4e": 15,
    "grinstead-snell-probability": 11,
}
SEED = 14
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--write", action="store_true", help="write <book>/sample.txt beside this script")
    args = parser.parse_args()
    for book, per_chapter in PER_CHAPTER.items():
        path = args.shared / book / "problems.jsonl"
        with path.open(encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
        ids = sample_book(records, per_chapter, SEED)
        if args.write:
            out = Path(__file__).parent / book / "sample.txt"
            out.parent.mkdir(exist_ok=True)
            out.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
        for problem_id in ids:
            print(f"{book}\t{problem_id}")


if __name__ == "__main__":
    main()
