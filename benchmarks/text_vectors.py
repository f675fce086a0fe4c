"""Benchmark: what the fallback's text vectors cost, all-MiniLM-L6-v2 against the LSA.

What it measures (pure code, no database)
    The texts are the dev books' problems from ../shared/data (or $PROB2VEC_SHARED_DATA) when
    present, else the demo course's problems repeated; the first --problems of them.
      - MiniLM: loading the model once (cold, in this process), then encoding the texts in the
        batches a rebuild uses (text.MINILM_BATCH, 256): problems per second.
        This is the cost of a first rebuild, or of the texts a rebuild finds new or edited; cached
        texts cost a database read instead.
      - LSA (`text.lsa_vectors`, 128 dimensions, the `fallback_text = "lsa"` alternative) on the
        same texts, for comparison.

How to run (from the project folder)
    .venv/bin/python benchmarks/text_vectors.py [--problems 2000] [--threads N]

No target: the figures size the first rebuild of a bank (README, "No problem without a vector").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from problems.demo_course import bank_files  # noqa: E402  (pure)

def texts_for(n: int) -> tuple[list[str], str]:
    if not devsets.missing_reason():
        texts = [r.get("text") or "" for book in devsets.BOOKS for r in devsets.book_problems(book)]
        return texts[:n], f"the dev books' problems ({min(n, len(texts))} of {len(texts)})"
    demo = [json.loads(line)["text"] for path in bank_files() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return (demo * (n // len(demo) + 1))[:n], f"the demo course's {len(demo)} problems, repeated (../shared/data absent)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args(argv)
    import torch

    from embeddings.algorithms.text import MINILM_BATCH as BATCH
    from embeddings.algorithms.text import _minilm_model, lsa_vectors, minilm_embeddings

    if args.threads:
        torch.set_num_threads(args.threads)
    texts, what = texts_for(args.problems)
    print(f"texts: {what}; {sum(map(len, texts)) / max(len(texts), 1):.0f} characters on average; "
          f"torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    started = time.perf_counter()
    _minilm_model("cpu")
    print(f"MiniLM model load (cold): {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        minilm_embeddings(texts[start : start + BATCH])
    seconds = time.perf_counter() - started
    print(f"MiniLM encoding, batches of {BATCH}: {len(texts)} problems in {seconds:.1f} s = {len(texts) / seconds:.1f} problems/s "
          f"(100,000 problems: ~{100_000 / (len(texts) / seconds) / 60:.0f} min)")
    started = time.perf_counter()
    lsa_vectors(texts, dim=128)
    seconds = time.perf_counter() - started
    print(f"LSA, 128 dimensions: {len(texts)} problems in {seconds:.2f} s = {len(texts) / seconds:.0f} problems/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
