"""Benchmark: the paper's Table 3 (7 schemes x 5 concepts x 100 rounds) on the demo course.

What it measures
    1. The full table with the rounds of each (concept, scheme) trained together, the round being
       a batch dimension of every weight (`concepts.neural.network.RoundNets`): wall time and the
       table itself (FN / FP per concept, averages, relative reduction against down-sampling).
    2. The same work one round at a time (R = 1 networks, the usual way). Running all 3,500
       trainings that way takes most of an hour, so by default it runs the first
       --sequential-rounds rounds of every (concept, scheme) and scales the time by
       rounds / sequential-rounds (marked "extrapolated"); --sequential-rounds 100 runs it all.
       The batched run's figures for those rounds are identical (tests/algorithms prove it).
    Word vectors: GloVe of dimension 300 trained on the bank (or GLOVE_PATH), before the clock
    starts, as the experiment task does once per experiment; the time is printed.

Inputs: problems/demo_course (286 problems with expert labels, the demo TA's 240 selected words).
Pure code only: no database or services. torch uses --threads threads (default 2: the target is
"under 10 minutes on 2 CPU cores").

How to run (from the project folder)
    .venv/bin/python benchmarks/nn_table3.py                  # full table + sampled one-by-one
    .venv/bin/python benchmarks/nn_table3.py --rounds 10      # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from concepts.neural.experiment import ExtractorInputs, Features, TrainConfig, concept_data, run_experiment, scheme_rounds, word_vector_table  # noqa: E402
from concepts.neural.schemes import SCHEMES  # noqa: E402
from embeddings.algorithms.text import tokenize  # noqa: E402
from problems.demo_course import DEMO_DIR, bank_files  # noqa: E402


def demo_inputs(dim: int) -> tuple[ExtractorInputs, float]:
    texts, labels = [], []
    for path in bank_files():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                texts.append(row["text"])
                labels.append(frozenset(row.get("labels") or []))
    tokens = [tokenize(t) for t in texts]
    words = frozenset(w.strip() for w in (DEMO_DIR / "selected_words.txt").read_text().split() if w.strip())
    started = time.perf_counter()
    vectors, width, source = word_vector_table(tokens, os.getenv("GLOVE_PATH") or None, dim=dim)
    seconds = time.perf_counter() - started
    return ExtractorInputs(tokens, labels, vectors, width, words, source), seconds


def pct(x: float | None) -> str:
    return "    —" if x is None else f"{100 * x:5.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--concepts", default="", help="comma-separated slugs (default: the 5 with the most expert labels)")
    parser.add_argument("--sequential-rounds", type=int, default=5, help="rounds per (concept, scheme) run one by one (default 5)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dim", type=int, default=300, help="word vector size when training GloVe on the bank")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    inputs, glove_s = demo_inputs(args.dim)
    counts = Counter(slug for labels in inputs.labels for slug in labels)
    concepts = [s for s in args.concepts.split(",") if s] or [s for s, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]]
    config = TrainConfig()
    print(f"demo course: {len(inputs.token_lists)} problems, concepts {', '.join(f'{c} ({counts[c]})' for c in concepts)}")
    print(f"word vectors: {inputs.word_vectors_source}, dim {inputs.dim}, {glove_s:.1f} s; torch threads {torch.get_num_threads()}; {config}")

    # run_experiment reports after each (concept, scheme), concept by concept: the gaps time each cell.
    marks: list[float] = []
    started = time.perf_counter()
    result = run_experiment(inputs, concepts, list(SCHEMES), args.rounds, args.seed, config, batched=True, on_progress=lambda _: marks.append(time.perf_counter()))
    batched_s = time.perf_counter() - started
    gaps = [b - a for a, b in zip([started] + marks, marks)]
    batched_by_scheme = {key: sum(gaps[c * len(SCHEMES) + k] for c in range(len(concepts))) for k, key in enumerate(SCHEMES)}
    trainings = len(concepts) * len(SCHEMES) * args.rounds
    print(f"\nTable 3 on the demo course ({args.rounds} rounds; cells FN / FP, mean over rounds; Δ = reduction against down-sampling)")
    print(f"{'scheme':<52}" + "".join(f"{c[:17]:>18}" for c in concepts) + f"{'FN':>8}{'FP':>8}{'ΔFN':>8}{'ΔFP':>8}")
    for key, row in result["schemes"].items():
        cells = "".join(f"{pct(row['concepts'][c]['fn'])}/{pct(row['concepts'][c]['fp'])}".rjust(18) for c in concepts)
        print(f"{row['label']:<52}{cells}{pct(row['fn']):>8}{pct(row['fp']):>8}{pct(row['fn_reduction']):>8}{pct(row['fp_reduction']):>8}")
    print(f"best scheme per concept: {result['best']}")

    sample = min(args.sequential_rounds, args.rounds)
    features = Features(inputs, config.min_count)
    data = concept_data(inputs, concepts, config.transfer_sources)
    sequential_by_scheme = dict.fromkeys(SCHEMES, 0.0)
    started = time.perf_counter()
    for concept in data:
        for key, scheme in SCHEMES.items():
            cell = time.perf_counter()
            scheme_rounds(inputs, features, concept, scheme, sample, args.seed, config, batched=False)
            sequential_by_scheme[key] += time.perf_counter() - cell
    sequential_sample_s = time.perf_counter() - started
    sequential_s = sequential_sample_s * args.rounds / sample
    how = "measured" if sample == args.rounds else f"extrapolated from {sample} rounds ({sequential_sample_s:.1f} s) x {args.rounds / sample:g}"
    print(f"\n{trainings} trainings ({len(SCHEMES)} schemes x {len(concepts)} concepts x {args.rounds} rounds)")
    print(f"  rounds batched together: {batched_s:8.1f} s  ({batched_s / 60:.1f} min; target < 10 min on 2 cores)")
    print(f"  one round at a time:     {sequential_s:8.1f} s  ({how})")
    print(f"  speed-up:                {sequential_s / batched_s:8.1f}x")
    print("\nper scheme, ms per round (5 concepts): batched / one at a time / speed-up")
    for key in SCHEMES:
        together = 1000 * batched_by_scheme[key] / (args.rounds * len(concepts))
        alone = 1000 * sequential_by_scheme[key] / (sample * len(concepts))
        print(f"  {key:<40}{together:8.1f}{alone:8.1f}{alone / together:7.1f}x")


if __name__ == "__main__":
    main()
