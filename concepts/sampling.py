"""Drawing problems to hold out from rule writing. Pure: plain Python, no Django.

A held-out set measures the rules on a collection's other problems, so it should look like them:
drawn at random, spread over the modules in proportion to their size (as the dev books' samples
were drawn over chapters, ``benchmarks/devsets/sample.py``), and reproducible from a seed.
"""

from __future__ import annotations

import random
from typing import Hashable, Mapping, Sequence


def proportional_counts(sizes: Mapping[Hashable, int], count: int) -> dict[Hashable, int]:
    """How many to draw from each group: ``count`` shared in proportion to the sizes (largest
    remainders, ties to the larger group, then the first named), never more than a group holds."""
    total = sum(sizes.values())
    count = min(count, total)
    if count <= 0:
        return {group: 0 for group in sizes}
    exact = {group: count * size / total for group, size in sizes.items()}
    out = {group: int(share) for group, share in exact.items()}
    order = list(sizes)
    by_remainder = sorted(order, key=lambda g: (-(exact[g] - out[g]), -sizes[g], order.index(g)))
    for group in by_remainder[: count - sum(out.values())]:
        out[group] += 1
    return out


def stratified_sample(groups: Mapping[Hashable, Sequence[int]], count: int, seed: int = 0) -> list[int]:
    """``count`` ids drawn at random, spread over the groups in proportion to their sizes; sorted.
    The same groups, count and seed give the same ids."""
    rng = random.Random(seed)
    per_group = proportional_counts({group: len(ids) for group, ids in groups.items()}, count)
    drawn: list[int] = []
    for group in sorted(groups, key=str):  # a fixed order, whatever order the caller built them in
        drawn += rng.sample(sorted(groups[group]), per_group[group])
    return sorted(drawn)
