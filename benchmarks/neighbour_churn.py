"""Benchmark: how much the similar-problem lists move between rebuilds, one skip-gram against an ensemble.

What it measures
    On the dev bank of benchmarks/devset_table1.py (the demo course and the three dev books, 2,670
    problems), Prob2Vec with the app's defaults and fallback (embeddings.algorithms.methods.embed),
    for ``ensemble`` = 1 (the paper's single network) and the shipped ensemble:
      - **kept after an import**: the bank is rebuilt after 2% more problems arrive (``--rounds``
        random draws of which 2% are new); for every problem that was there before, the share of
        its top-5 similar problems among the old ones that stay the same. What a TA or student sees
        move although nothing about their problem changed;
      - **shared with another draw**: the same bank trained from other seeds (non-overlapping); the
        share of top-5 lists they share. What is left of the lists' movement is the bank itself.
    Both on expert labels and on rule concepts, with the seconds of one rebuild.

How to run (from the project folder; pure code, no database)
    .venv/bin/python benchmarks/neighbour_churn.py [--rounds 3] [--top 5]

Needs ../shared/data (or $PROB2VEC_SHARED_DATA) like devset_table1.py, and stops with a message
without it. MiniLM vectors come from the same cache in benchmarks/out/.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devset_table1, devsets  # noqa: E402
from embeddings.algorithms.fallback import unit_rows  # noqa: E402
from embeddings.algorithms.methods import METHODS, BankData, embed  # noqa: E402


def top_lists(vectors: np.ndarray, top: int) -> np.ndarray:
    u = unit_rows(vectors)
    sims = u @ u.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1, kind="stable")[:, :top]


def shared(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(a, b)]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="random draws of the 2%% new problems")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    bank = devset_table1.load_bank()
    sets, _ = devset_table1.source_sets(bank)
    text = devset_table1.minilm_vectors(bank.texts)
    shipped = int(METHODS["prob2vec"].defaults["ensemble"])
    n = len(bank.texts)
    print(f"bank: {n} problems; Prob2Vec defaults {METHODS['prob2vec'].defaults}")
    print(f"{'source':7} {'ensemble':>8} {'kept after +2% problems':>24} {'shared with another draw':>25} {'s per rebuild':>14}")
    for source in ("labels", "rules"):
        for members in sorted({1, shipped}):
            def vectors(rows: np.ndarray, seed: int) -> np.ndarray:
                data = BankData([sets[source][i] for i in rows], len(bank.slugs), texts=[bank.texts[i] for i in rows], text_vectors=text[rows],
                                extracted=source != "labels")
                return embed("prob2vec", data, {"ensemble": members, "seed": seed}).vectors

            everyone = np.arange(n)
            started = time.perf_counter()
            full = vectors(everyone, 0)
            seconds = time.perf_counter() - started
            other = top_lists(vectors(everyone, 1000), args.top)
            kept = []
            rng = np.random.default_rng(0)
            for _ in range(args.rounds):
                before = np.sort(rng.choice(n, int(round(0.98 * n)), replace=False))
                # The old problems' lists among the old problems, before and after the new ones arrived.
                kept.append(shared(top_lists(vectors(before, 0), args.top), top_lists(full[before], args.top)))
            print(f"{source:7} {members:>8} {100 * np.mean(kept):23.1f}% {100 * shared(top_lists(full, args.top), other):24.1f}% {seconds:14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
