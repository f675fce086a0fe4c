"""Benchmark: which learned extractor the hybrid concept source uses, and why.

What it measures
    On the dev bank (the demo course plus every problem of the three dev books, 2,670 problems, 715
    labelled; benchmarks/devsets/), for each concept with at least --min-positives labelled
    positives, R rounds of the paper's Table 3 protocol: a stratified random split holding out 20%
    of the positives and of the negatives, a model trained on the rest, FN and FP ratios on the
    held-out problems. Rounds are paired: every model sees the same splits.
      - network: the paper's Table 3 network (mean word embedding -> 60 -> 60 -> 1, GloVe trained on
        the bank as the starting embedding) with the down-sampling scheme, the best scheme on our
        demo course by FN + FP (README, Table 3), threshold 0.5 (concepts/neural/);
      - logistic-lsa: the hybrid source's model (concepts/learned.py: logistic regression on a
        256-dimensional LSA of TF-IDF, class-balanced), threshold 0.5 like the network, all
        concepts of a round fitted at once.
    Prints the FN and FP averaged over concepts and rounds, per book of the held-out problems, and
    each model's training time.

How to run (from the project folder; pure code, no database)
    .venv/bin/python benchmarks/hybrid_extractor.py [--rounds 5] [--min-positives 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from benchmarks.devset_table1 import load_bank  # noqa: E402
from concepts import learned  # noqa: E402
from concepts.neural.experiment import ExtractorInputs, Features, TrainConfig, concept_data, scheme_rounds, word_vector_table  # noqa: E402
from concepts.neural.schemes import SCHEMES, split_round  # noqa: E402
from concepts.neural.experiment import _key  # noqa: E402  (the paired splits' seeds)
from embeddings.algorithms.text import lsa_vectors, tokenize  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-positives", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    reason = devsets.missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    torch.set_num_threads(1)
    bank = load_bank()
    labels = [frozenset(lab) if lab else None for lab in bank.labels]
    counts: dict[str, int] = {}
    for lab in labels:
        for slug in lab or ():
            counts[slug] = counts.get(slug, 0) + 1
    slugs = sorted(s for s, n in counts.items() if n >= args.min_positives)
    print(f"dev bank: {len(bank.texts)} problems, {sum(1 for lab in labels if lab)} labelled; "
          f"{len(slugs)} concepts with >= {args.min_positives} positives; {args.rounds} paired rounds each")

    started = time.monotonic()
    tokens = [tokenize(t) for t in bank.texts]
    vectors, dim, source = word_vector_table(tokens, None, dim=300, seed=args.seed)
    inputs = ExtractorInputs(tokens, labels, vectors, dim, word_vectors_source=source)
    features = Features(inputs, TrainConfig().min_count)
    data = concept_data(inputs, slugs, TrainConfig().transfer_sources)
    print(f"word vectors ({source}, {dim}-d) and bags of words: {time.monotonic() - started:.1f} s")

    results: dict[str, dict[str, list[float]]] = {"network": {"fn": [], "fp": []}, "logistic-lsa": {"fn": [], "fp": []}}
    seconds = {"network": 0.0, "logistic-lsa": 0.0}
    config = TrainConfig()
    started = time.monotonic()
    for d in data:
        fns, fps = scheme_rounds(inputs, features, d, SCHEMES["down-sampling"], args.rounds, args.seed, config)
        results["network"]["fn"].append(float(np.mean(fns)))
        results["network"]["fp"].append(float(np.mean(fps)))
    seconds["network"] = time.monotonic() - started

    started = time.monotonic()
    x = lsa_vectors(bank.texts, dim=learned.LearnedConfig().dim)
    labelled = np.array([i for i, lab in enumerate(labels) if lab], dtype=np.int64)
    y = np.array([[s in labels[i] for s in slugs] for i in labelled], dtype=np.float32)  # type: ignore[operator]
    row_of = {int(i): k for k, i in enumerate(labelled)}
    per_concept: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in slugs}
    for r in range(args.rounds):
        # The same split as the network's round r, concept by concept: one model per concept and round.
        for j, d in enumerate(data):
            split = split_round(d.positives, d.negatives, np.random.default_rng(_key(args.seed, d.slug, r, "split")), config.test_fraction)
            train = np.concatenate([split.train_pos, split.train_neg])
            model = learned.LogisticConcepts().fit(x[train], y[[row_of[int(i)] for i in train]][:, [j]])
            p_pos = model.predict_proba(x[split.test_pos])[:, 0]
            p_neg = model.predict_proba(x[split.test_neg])[:, 0]
            per_concept[d.slug][0].append(float((p_pos < 0.5).mean()))
            per_concept[d.slug][1].append(float((p_neg >= 0.5).mean()))
    for s in slugs:
        results["logistic-lsa"]["fn"].append(float(np.mean(per_concept[s][0])))
        results["logistic-lsa"]["fp"].append(float(np.mean(per_concept[s][1])))
    seconds["logistic-lsa"] = time.monotonic() - started

    print(f"\n{'model':14} {'FN':>7} {'FP':>7} {'FN+FP':>7} {'seconds':>8}")
    for name, r in results.items():
        fn, fp = np.mean(r["fn"]), np.mean(r["fp"])
        print(f"{name:14} {100 * fn:6.1f}% {100 * fp:6.1f}% {100 * (fn + fp):6.1f}% {seconds[name]:8.1f}")
    print("\nper concept (FN / FP %): network | logistic-lsa")
    for k, s in enumerate(slugs):
        n, lr = results["network"], results["logistic-lsa"]
        print(f"  {s:32} {counts[s]:4d}  {100 * n['fn'][k]:5.1f} / {100 * n['fp'][k]:5.1f}  |  {100 * lr['fn'][k]:5.1f} / {100 * lr['fp'][k]:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
