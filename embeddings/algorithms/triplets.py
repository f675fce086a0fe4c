"""Triplet bookkeeping: vote tallies and contradictions. Pure: no Django imports.

A triplet (A, B, C) states sim(A, B) > sim(A, C). Triplets sharing an anchor form a directed graph
on the other problems (B -> C). A cycle in it (B > C, C > D, D > B) is a contradiction: the
statements cannot all hold, so each triplet on the cycle is flagged for the head TA.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Hashable, Sequence


@dataclass(frozen=True)
class Tally:
    positive: int
    negative: int
    cant_tell: int

    @property
    def total(self) -> int:
        return self.positive + self.negative + self.cant_tell

    @property
    def majority(self) -> str | None:
        """"positive" or "negative" when strictly more votes say so than anything else, else None."""
        counts = {"positive": self.positive, "negative": self.negative, "cant_tell": self.cant_tell}
        best = max(counts.values())
        winners = [k for k, v in counts.items() if v == best]
        if best == 0 or len(winners) > 1 or winners[0] == "cant_tell":
            return None
        return winners[0]

    @property
    def agreement(self) -> float | None:
        """Share of votes for the most chosen answer."""
        return max(self.positive, self.negative, self.cant_tell) / self.total if self.total else None


def tally(choices: Sequence[str]) -> Tally:
    c = Counter(choices)
    return Tally(c["positive"], c["negative"], c["cant_tell"])


def find_contradictions(triplets: Sequence[tuple[Hashable, Hashable, Hashable]]) -> set[int]:
    """Indices of the triplets that lie on a cycle of closer-than statements about one anchor."""
    by_anchor: dict[Hashable, list[int]] = defaultdict(list)
    for i, (anchor, _, _) in enumerate(triplets):
        by_anchor[anchor].append(i)
    flagged: set[int] = set()
    for indices in by_anchor.values():
        edges: dict[Hashable, set[Hashable]] = defaultdict(set)
        for i in indices:
            _, pos, neg = triplets[i]
            edges[pos].add(neg)
        # An edge B -> C lies on a cycle exactly when B is reachable from C.
        reach_cache: dict[Hashable, set[Hashable]] = {}

        def reachable(start: Hashable) -> set[Hashable]:
            if start not in reach_cache:
                seen, stack = set(), [start]
                while stack:
                    node = stack.pop()
                    for nxt in edges.get(node, ()):
                        if nxt not in seen:
                            seen.add(nxt)
                            stack.append(nxt)
                reach_cache[start] = seen
            return reach_cache[start]

        for i in indices:
            _, pos, neg = triplets[i]
            if pos in reachable(neg):
                flagged.add(i)
    return flagged
