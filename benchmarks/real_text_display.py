"""Benchmark: does real textbook text read well once imported? Titles and pages (problems/latex_html.py).

What it measures
    Each public collection in ../shared/data (every problems.jsonl: real textbook exercises nobody here
    wrote) parsed as `import_problems` parses it (`bank_io.parse_jsonl`), which titles a problem
    without a title from its text with `distinct_titles`. Printed per collection: problems, the
    problems whose title another problem of the collection also has, and empty titles; then the same
    two figures with each problem titled alone (`title_from_text`: its first sentence, which is what
    the import gave before stop 32), and a few titles that differ. A title in the file is kept either
    way (OpenIntro's exercises have theirs).

    Then the problem pages: the problems whose rendered text (`latex_to_html`) still shows LaTeX source
    outside math, a `\\command` that KaTeX never sees and the page prints as it is, with the commands
    seen most often. Math itself is KaTeX's: what it cannot typeset is not counted here.

How to run (from the project folder; pure code, no database)
    .venv/bin/python benchmarks/real_text_display.py [--examples N]
"""

from __future__ import annotations

import argparse
import json
import re
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.devsets import shared_data_dir  # noqa: E402
from problems.bank_io import parse_jsonl  # noqa: E402  (pure)
from problems.latex_html import _MATH, latex_to_html, title_from_text  # noqa: E402  (pure)

COMMAND = re.compile(r"\\[A-Za-z]+")


def source_shown(text: str) -> list[str]:
    """The LaTeX commands a problem's page prints as source: outside math and outside HTML tags."""
    page = re.sub(r"<[^>]*>", " ", latex_to_html(text))
    return [c for i, part in enumerate(_MATH.split(page)) if not i % 2 for c in COMMAND.findall(part)]


def in_shared_titles(titles: list[str]) -> int:
    counts = Counter(titles)
    return sum(n for n in counts.values() if n > 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=3, help="titles that changed, shown per collection")
    args = parser.parse_args(argv)
    files = sorted(shared_data_dir().glob("*/problems.jsonl"))
    if not files:
        print(f"skipped: no public collections at {shared_data_dir()} (set PROB2VEC_SHARED_DATA)")
        return 0
    print(f"{'collection':38} {'problems':>8} {'in shared titles':>17} {'empty':>6} | {'alone: shared':>13} {'empty':>6}")
    for path in files:
        parsed = parse_jsonl(path.read_bytes())
        if parsed.errors:
            print(f"{path.parent.name}: {len(parsed.errors)} bad line(s), first: {parsed.errors[0]}")
            continue
        titles = [r.title for r in parsed.records]
        given = [str(json.loads(raw).get("title") or "").strip() for raw in path.read_bytes().splitlines() if raw.strip()]
        alone = [g or title_from_text(r.text) for g, r in zip(given, parsed.records)]
        print(f"{path.parent.name:38} {len(titles):8} {in_shared_titles(titles):17} {titles.count(''):6} | "
              f"{in_shared_titles(alone):13} {alone.count(''):6}")
        changed = [i for i, (a, b) in enumerate(zip(alone, titles)) if a != b]
        for i in random.Random(0).sample(changed, min(args.examples, len(changed))):
            print(f"    {alone[i]!r}\n      -> {titles[i]!r}")
        shown = [source_shown(r.text) for r in parsed.records]
        common = Counter(c for each in shown for c in set(each)).most_common(6)
        print(f"    pages showing LaTeX source: {sum(1 for each in shown if each)} of {len(shown)}; most often: "
              + ", ".join(f"{c} ({n})" for c, n in common))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
