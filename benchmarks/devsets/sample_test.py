"""Draw the two TEST samples (TheoremQA probability/statistics, MATH counting & probability).

Plain Python, reproducible (seed 26). Reads only ``problems.jsonl`` under the shared data folder
(``$PROB2VEC_SHARED_DATA``, else ``../shared/data`` beside the project) and writes
``benchmarks/devsets/<collection>/sample.txt``: one problem id per line, in a random order.

- theoremqa-probability-statistics: 70 problems stratified over ``module``, proportional to the
  module sizes but at least 8 per module (largest-remainder rounding).
- math-counting-probability: 70 problems stratified over ``level``, 14 per level.

It also writes ``reserve.txt``: up to 30 further ids of the same collection (not in the sample),
drawn by the same random generator after the sample, in a random order. Labelling runs through
``sample.txt`` first and continues into ``reserve.txt`` only when too many sampled problems had to be
skipped (the reserve is not stratified).

These are test splits: label them, never tune on them.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEED = 26
TOTAL = 70
MIN_PER_STRATUM = 8
RESERVE = 30

sys.path.insert(0, str(ROOT))
from benchmarks.devsets import shared_data_dir  # noqa: E402  (plain Python: $PROB2VEC_SHARED_DATA or ../shared/data)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def proportional_quota(sizes: dict[str, int], total: int, minimum: int) -> dict[str, int]:
    """Proportional allocation with a floor: strata whose share is under ``minimum`` get ``minimum``
    (or their whole size), the rest is split proportionally by largest remainder."""
    fixed: dict[str, int] = {}
    while True:
        free = {k: n for k, n in sizes.items() if k not in fixed}
        left = total - sum(fixed.values())
        pool = sum(free.values())
        low = {k for k, n in free.items() if n * left / pool < minimum}
        if not low:
            break
        for k in low:
            fixed[k] = min(minimum, sizes[k])
    shares = {k: n * left / pool for k, n in free.items()}
    quota = {k: int(s) for k, s in shares.items()}
    for k in sorted(shares, key=lambda k: (-(shares[k] - quota[k]), k))[: left - sum(quota.values())]:
        quota[k] += 1
    quota.update(fixed)
    return {k: min(q, sizes[k]) for k, q in quota.items()}


def stratified(records: list[dict], key: str, quota: dict[str, int], rng: random.Random) -> list[str]:
    chosen: list[str] = []
    for stratum in sorted(quota):
        ids = sorted(r["id"] for r in records if r[key] == stratum)
        chosen += rng.sample(ids, quota[stratum])
    rng.shuffle(chosen)
    return chosen


def draw(collection: str, key: str, quota_of, write: bool = True) -> tuple[list[str], list[str]]:
    """The sample and the reserve of one collection; ``write`` saves them as sample.txt / reserve.txt."""
    records = read_jsonl(shared_data_dir() / collection / "problems.jsonl")
    sizes: dict[str, int] = {}
    for r in records:
        sizes[r[key]] = sizes.get(r[key], 0) + 1
    quota = quota_of(sizes)
    rng = random.Random(SEED)
    ids = stratified(records, key, quota, rng)
    taken = set(ids)
    reserve = rng.sample(sorted(r["id"] for r in records if r["id"] not in taken), RESERVE)
    if not write:
        return ids, reserve
    folder = HERE / collection
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sample.txt").write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    (folder / "reserve.txt").write_text("".join(i + "\n" for i in reserve), encoding="utf-8")
    print(f"{collection}: {len(ids)} sampled + {len(reserve)} reserve ids -> {folder.relative_to(ROOT)}/"
          f"  quota {dict(sorted(quota.items()))}")
    return ids, reserve


# collection -> (stratum field, quota from the strata sizes)
DESIGN = {
    "theoremqa-probability-statistics": ("module", lambda sizes: proportional_quota(sizes, TOTAL, MIN_PER_STRATUM)),
    "math-counting-probability": ("level", lambda sizes: {level: TOTAL // len(sizes) for level in sizes}),
}


def main() -> None:
    for collection, (key, quota_of) in DESIGN.items():
        draw(collection, key, quota_of)


if __name__ == "__main__":
    main()
