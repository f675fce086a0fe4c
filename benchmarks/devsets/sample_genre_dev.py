"""Draw the genre DEV samples: MATH counting & probability and TheoremQA, disjoint from their test splits.

The three dev books are statistics and probability textbooks; competition-style counting problems
(MATH) and theorem-driven questions (TheoremQA) are a genre the rules were never tuned on, and their
test splits (TEST_SETS.md) must stay untouched. These dev samples let rules be tuned on that genre
honestly: they are drawn from what the test splits did not take (``sample.txt`` and ``reserve.txt`` of
the collection's test folder), so a test problem can never be tuned on.

- math-counting-probability-dev: 100 problems, 20 per ``level``, from the ids outside the test
  sample and reserve.
- theoremqa-probability-statistics-dev: every id outside the test sample and reserve (45), shuffled.

Plain Python, reproducible (seed 27); reads only ``problems.jsonl`` under the shared data folder and the
test folders' id lists, writes ``benchmarks/devsets/<collection>-dev/sample.txt``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEED = 27
MATH_PER_LEVEL = 20

sys.path.insert(0, str(ROOT))
from benchmarks.devsets import GENRE_DEV_OF, shared_data_dir  # noqa: E402
from benchmarks.devsets.sample_test import read_jsonl, stratified  # noqa: E402


def test_ids(collection: str) -> set[str]:
    """Every id the test split of ``collection`` sampled or kept in reserve."""
    folder = HERE / collection
    return {line.strip() for name in ("sample.txt", "reserve.txt") if (folder / name).exists()
            for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()}


def draw(dev: str, write: bool = True) -> list[str]:
    collection = GENRE_DEV_OF[dev]
    taken = test_ids(collection)
    records = [r for r in read_jsonl(shared_data_dir() / collection / "problems.jsonl") if r["id"] not in taken]
    rng = random.Random(SEED)
    if collection == "math-counting-probability":
        levels = sorted({r["level"] for r in records})
        ids = stratified(records, "level", {level: MATH_PER_LEVEL for level in levels}, rng)
    else:
        ids = sorted(r["id"] for r in records)
        rng.shuffle(ids)
    if write:
        folder = HERE / dev
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "sample.txt").write_text("".join(i + "\n" for i in ids), encoding="utf-8")
        print(f"{dev}: {len(ids)} ids (outside the {len(taken)} test ids) -> {folder.relative_to(ROOT)}/sample.txt")
    return ids


def main() -> None:
    for dev in GENRE_DEV_OF:
        draw(dev)


if __name__ == "__main__":
    main()
