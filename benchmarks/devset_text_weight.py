"""Benchmark: the fallback's text weight where the rules never saw the text (the `unseen` source).

What it measures
    Prob2Vec and concept overlap on the dev books' `unseen` concept sets (each book through the rules
    without its own branches, benchmarks/devset_table1.py) and on expert labels, with the fallback's
    text weight at 0.1-0.5 and its text vectors from the bank's LSA (the app's) or from MiniLM. Triplet
    accuracy per dev book and their mean. It asks whether a new course, whose rules miss most
    concepts, would be better served by leaning more on text. The test splits are in the bank (so the
    figures match `devset_table1.py --test-splits`) but are never printed here: nothing is chosen on them.

How to run (from the project folder; pure code, no database; MiniLM vectors cached in benchmarks/out/)
    .venv/bin/python benchmarks/devset_text_weight.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from benchmarks.devset_table1 import load_bank, minilm_vectors, source_sets  # noqa: E402
from embeddings.algorithms.methods import BankData, embed  # noqa: E402  (pure)
from embeddings.algorithms.metrics import triplet_correct  # noqa: E402
from embeddings.algorithms.text import lsa_vectors  # noqa: E402

WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5)
DEV = ("openstax", "openintro", "gs")


def main() -> int:
    for collections in (devsets.BOOKS, devsets.TEST_SETS):
        reason = devsets.missing_reason(collections=collections)
        if reason:
            print(f"skipped: {reason}")
            return 0
    bank = load_bank(test_splits=True)
    sets, _ = source_sets(bank)
    texts = {"lsa": lsa_vectors(bank.texts, dim=128), "minilm": minilm_vectors(bank.texts)}
    print("minilm alone: " + " ".join(f"{b} {100 * triplet_correct(texts['minilm'], bank.triplets[b]).mean():.1f}" for b in DEV))
    for method in ("prob2vec", "onehot"):
        for text_name, text in texts.items():
            for source in ("unseen", "labels"):
                for weight in WEIGHTS:
                    data = BankData(sets[source], len(bank.slugs), texts=bank.texts, text_vectors=text, extracted=source != "labels")
                    vectors = embed(method, data, {"text_weight": weight}).vectors
                    accuracy = {b: 100 * float(triplet_correct(vectors, bank.triplets[b]).mean()) for b in DEV}
                    print(f"{method:8} text {text_name:6} {source:6} weight {weight:.1f} | mean {np.mean(list(accuracy.values())):5.1f} | "
                          + " ".join(f"{b} {a:5.1f}" for b, a in accuracy.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
