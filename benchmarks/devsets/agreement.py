"""Inter-annotator agreement on the dev sets' shared sample (two annotators, labelled independently).

Prints, per book and over all three (then the same for the two test collections, annotators
ta-test1 and ta-test2, for the audit of the dev labels, ta-audit-before and ta-audit, and for the books'
second samples, ta-second1 and ta-second2): problems both annotators labelled, problems where one skipped
and the other labelled, identical label sets, mean Jaccard similarity, Krippendorff's alpha (nominal)
pooled over every (problem, concept) decision, and the mean of per-concept alphas (the app's
agreement page: concepts.agreement.label_agreement). Then the disagreements, by id, with the
resolution that is in labels.jsonl.

How to run (from the project folder; plain Python, no data beyond the committed files)
    .venv/bin/python benchmarks/devsets/agreement.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import devsets  # noqa: E402
from concepts.agreement import krippendorff_alpha_nominal, label_agreement  # noqa: E402


def agreement(books: list[str], annotators: tuple[str, str] = ("ta-dev1", "ta-dev2")) -> dict[str, object]:
    one, two = annotators
    sets: dict[str, dict[str, set[str]]] = {}
    skip_mismatch = []
    for book in books:
        first, second = devsets.overlap(book, one), devsets.overlap(book, two)
        for pid in first:
            a, b = first[pid], second[pid]
            if (a is None) != (b is None):
                skip_mismatch.append(pid)
            elif a is not None and b is not None:
                sets[pid] = {one: set(a), two: set(b)}
    concepts = sorted({c for s in sets.values() for labels in s.values() for c in labels})
    per_concept = [a.alpha for a in label_agreement(sets, concepts) if a.alpha is not None]
    units = [[c in s[one], c in s[two]] for s in sets.values() for c in concepts]
    jaccard = [len(s[one] & s[two]) / len(s[one] | s[two]) for s in sets.values()]
    return {
        "both_labelled": len(sets),
        "skip_mismatch": skip_mismatch,
        "identical": sum(s[one] == s[two] for s in sets.values()),
        "mean_jaccard": sum(jaccard) / len(jaccard) if jaccard else None,
        "pooled_alpha": krippendorff_alpha_nominal(units),
        "mean_concept_alpha": sum(per_concept) / len(per_concept) if per_concept else None,
        "concepts": len(concepts),
        "disagreements": {pid: s for pid, s in sets.items() if s[one] != s[two]},
    }


def report(books: list[str], names: dict[str, str], annotators: tuple[str, str]) -> None:
    one, two = annotators
    rows = [(names[b], agreement([b], annotators)) for b in books] + [("all", agreement(books, annotators))]
    print(f"{'book':10} {'both':>5} {'skip≠':>6} {'same':>5} {'jaccard':>8} {'alpha':>7} {'concept α':>10}")
    for name, r in rows:
        print(f"{name:10} {r['both_labelled']:>5} {len(r['skip_mismatch']):>6} {r['identical']:>5} {r['mean_jaccard']:>8.3f} "
              f"{r['pooled_alpha']:>7.3f} {r['mean_concept_alpha']:>10.3f}")
    resolved = {pid: c for b in books for pid, c in devsets.labels(b).items()}
    skipped = {pid: why for b in books for pid, why in devsets.skipped(b).items()}
    everything = rows[-1][1]
    print("\ndisagreements and their resolution (labels.jsonl / skipped.jsonl):")
    for pid, s in everything["disagreements"].items():  # type: ignore[union-attr]
        print(f"  {pid}: {one} {sorted(s[one])} | {two} {sorted(s[two])} -> {resolved.get(pid) or 'skipped: ' + skipped.get(pid, '?')}")
    for pid in everything["skip_mismatch"]:  # type: ignore[union-attr]
        print(f"  {pid}: one annotator skipped -> {resolved.get(pid) or 'skipped: ' + skipped.get(pid, '?')}")


def main() -> int:
    report(list(devsets.BOOKS), devsets.BOOKS, ("ta-dev1", "ta-dev2"))
    print("\ntest collections (ta-test1 / ta-test2):")
    report(list(devsets.TEST_SETS), devsets.TEST_SETS, ("ta-test1", "ta-test2"))
    print("\naudit of stop 23 (the dev labels as they stood / a third annotator, blind; 33 random labelled problems"
          " and the 7 the precision pass flagged; README of benchmarks/devsets):")
    report(list(devsets.BOOKS), devsets.BOOKS, ("ta-audit-before", "ta-audit"))
    print("\nsecond samples of stop 33 (their annotators / a second annotator, blind; the first 24 draws of each):")
    report(list(devsets.SECOND_SAMPLES), devsets.SECOND_SAMPLES, ("ta-second1", "ta-second2"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
