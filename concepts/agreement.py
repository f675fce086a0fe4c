"""Inter-annotator agreement on concept labels. Pure: no Django imports.

For each concept, every problem labelled by two or more annotators is a unit whose values are the
annotators' yes/no decisions on that concept. Krippendorff's alpha (nominal) handles any number of
annotators and problems that only some of them labelled; for exactly two annotators on the same
problems it is close to Cohen's kappa, which we also give for two annotators.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Hashable, Mapping, Sequence


def krippendorff_alpha_nominal(units: Sequence[Sequence[Hashable]]) -> float | None:
    """Alpha for nominal data; `units` lists each unit's values (one per annotator who rated it).

    Units with fewer than two values carry no pairing information and are skipped. Returns None
    when no unit is pairable or when every value is the same (no variation: alpha is undefined).
    """
    coincidence: Counter[tuple[Hashable, Hashable]] = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, j in combinations(range(m), 2):
            a, b = values[i], values[j]
            coincidence[(a, b)] += 1 / (m - 1)
            coincidence[(b, a)] += 1 / (m - 1)
    n_c: Counter[Hashable] = Counter()
    for (a, _), w in coincidence.items():
        n_c[a] += w
    n = sum(n_c.values())
    if n <= 1:
        return None
    observed = sum(w for (a, b), w in coincidence.items() if a != b)
    expected = sum(n_c[a] * n_c[b] for a in n_c for b in n_c if a != b) / (n - 1)
    if expected == 0:
        return None
    return 1 - observed / expected


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters over the same items; None when chance agreement is total."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class ConceptAgreement:
    concept: str
    problems: int  # problems labelled by at least two annotators
    positives: int  # (annotator, problem) decisions that include the concept
    alpha: float | None
    kappa: float | None  # only when the same two annotators labelled every such problem


def label_agreement(label_sets: Mapping[Hashable, Mapping[Hashable, set[str]]], concepts: Sequence[str]) -> list[ConceptAgreement]:
    """Per-concept agreement. `label_sets[problem][annotator]` is that annotator's set of slugs."""
    shared = {p: sets for p, sets in label_sets.items() if len(sets) >= 2}
    # Kappa compares two raters: the same two annotators on every shared problem, each always on the
    # same side (not in whichever order a problem's label sets happen to come).
    raters = {frozenset(sets) for sets in shared.values()}
    pair = sorted(next(iter(raters)), key=str) if len(raters) == 1 and len(next(iter(raters))) == 2 else None
    out = []
    for slug in concepts:
        units = [[slug in s for s in sets.values()] for sets in shared.values()]
        kappa = (
            cohen_kappa([slug in sets[pair[0]] for sets in shared.values()], [slug in sets[pair[1]] for sets in shared.values()])
            if pair else None
        )
        positives = sum(sum(u) for u in units)
        out.append(ConceptAgreement(slug, len(units), positives, krippendorff_alpha_nominal(units), kappa))
    return out
