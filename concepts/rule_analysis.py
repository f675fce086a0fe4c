"""How a set of rules behaves on a bank (Snorkel's labelling-function analysis, for concept rules),
and what changed between two versions of one rule. Pure: no Django imports.

Per rule: coverage (the share of the bank it matches), overlaps (its matches where another rule
matches too), conflicts (its matches where a rule of a concept it is never labelled together with
matches too: two test concepts firing on one problem), and TP/FP/FN on the labelled problems.
Overall: the share of the bank with no concept at all, with overlaps, with conflicts.

Concepts overlap all the time (a binomial problem is also a counting problem), so an overlap is no
fault. A conflict is judged by the course's dictionary and its labels: two concepts of one module
that each label at least ``min_positives`` problems but never the same one are alternatives (a
paired or a two-sample test, a Poisson or a binomial model), and a problem both rules match is one
where at least one of them is wrong. (Across modules, "never labelled together" is mostly chance:
with a few labels each, most pairs of a 130-concept dictionary never meet.)
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Container, Mapping, Sequence

from concepts.extraction import ENGINE_RE2, ConceptStats, Rule, RuleError, branch_matching, check_rule, first_matches, pattern_lines

MIN_POSITIVES = 3  # labelled positives each concept needs before "never labelled together" means anything
EXAMPLES = 5  # problems kept per conflicting pair


@dataclass(frozen=True, kw_only=True)
class RuleFigures(ConceptStats):
    """A rule's TP/FP/FN/TN and rates against the labels (ConceptStats), and how it sits in the bank."""

    slug: str
    matched: int  # problems of the bank the rule matches
    coverage: float  # matched / problems
    overlaps: int  # of its matches, those another rule matches too
    conflicts: int  # of its matches, those a conflicting rule matches too
    positives: int  # labelled problems that have the concept

    @property
    def precision(self) -> float | None:
        """Snorkel's empirical accuracy: of its labelled matches, the share that are right."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def overlap_share(self) -> float | None:
        return self.overlaps / self.matched if self.matched else None


@dataclass(frozen=True)
class Conflict:
    """Two concepts never labelled together whose rules match the same problems."""

    a: str
    b: str
    count: int  # problems both rules match
    examples: tuple[int, ...]  # indices of the first few
    a_positives: int
    b_positives: int


@dataclass
class Analysis:
    problems: int
    labelled: int
    rules: list[RuleFigures] = field(default_factory=list)
    no_concept: tuple[int, ...] = ()  # indices of the problems no rule matches
    overlapping: int = 0  # problems two or more rules match
    conflicting: int = 0  # problems with a conflicting pair
    conflicts: list[Conflict] = field(default_factory=list)
    concepts_per_problem: float = 0.0

    @property
    def no_concept_share(self) -> float | None:
        return len(self.no_concept) / self.problems if self.problems else None

    @property
    def covered_share(self) -> float | None:
        return 1 - len(self.no_concept) / self.problems if self.problems else None

    @property
    def overlap_share(self) -> float | None:
        return self.overlapping / self.problems if self.problems else None

    @property
    def conflict_share(self) -> float | None:
        return self.conflicting / self.problems if self.problems else None

    def _mean(self, values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return sum(present) / len(present) if present else None

    @property
    def fp_rate(self) -> float | None:
        """Average over rules, as the extractor report computes it."""
        return self._mean([r.fp_rate for r in self.rules])

    @property
    def fn_rate(self) -> float | None:
        return self._mean([r.fn_rate for r in self.rules])


def analyse(
    slugs: Sequence[str],
    predicted: Sequence[set[str]],
    truth: Sequence[set[str] | None],
    *,
    min_positives: int = MIN_POSITIVES,
    groups: Mapping[str, str] | None = None,
) -> Analysis:
    """Analyse rules over a bank.

    Parameters
    ----------
    slugs : sequence of str
        The concepts that have an (enabled) rule.
    predicted : sequence of set of str, shape (n_problems,)
        The concepts the rules find in each problem (``extraction.extract_many``).
    truth : sequence of (set of str or None), shape (n_problems,)
        Each problem's ground-truth concepts; None for a problem nobody labelled.
    min_positives : int
        Labelled positives each of two concepts needs before their never being labelled together
        makes their rules' joint matches conflicts.
    groups : mapping of str to str, optional
        Each concept's module: only two concepts of one module can be alternatives. None: any two.
    """
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} problems")
    n = len(predicted)
    labelled = [t for t in truth if t is not None]
    positives = Counter(c for t in labelled for c in t)
    together = {pair for t in labelled for pair in combinations(sorted(t), 2)}  # (a, b) with a < b
    alternatives = {s for s in slugs if positives[s] >= min_positives}

    def one_group(a: str, b: str) -> bool:
        return groups is None or (groups.get(a) is not None and groups.get(a) == groups.get(b))

    cofire: dict[tuple[str, str], list[int]] = {}
    matched: Counter[str] = Counter()
    overlaps: Counter[str] = Counter()
    in_conflict: Counter[str] = Counter()
    result = Analysis(problems=n, labelled=len(labelled))
    no_concept = []
    found_total = 0
    for i, found in enumerate(predicted):
        found_total += len(found)
        if not found:
            no_concept.append(i)
            continue
        matched.update(found)
        if len(found) < 2:
            continue
        result.overlapping += 1
        overlaps.update(found)
        clashing: set[str] = set()
        for pair in combinations(sorted(found & alternatives), 2):
            if pair not in together and one_group(*pair):
                cofire.setdefault(pair, []).append(i)
                clashing.update(pair)
        if clashing:
            result.conflicting += 1
            in_conflict.update(clashing)
    result.no_concept = tuple(no_concept)
    result.concepts_per_problem = found_total / n if n else 0.0

    # One pass over the labelled problems for every rule's TP, FP and FN (a pass per rule is
    # rules x problems: 1.3 million steps for 130 rules over 10,000 problems).
    tp_of: Counter[str] = Counter()
    fp_of: Counter[str] = Counter()
    fn_of: Counter[str] = Counter()
    ruled = set(slugs)
    for found, t in zip(predicted, truth):
        if t is None:
            continue
        tp_of.update(found & t)
        fp_of.update(found - t)
        fn_of.update((t - found) & ruled)
    for slug in slugs:
        tp, fp, fn = tp_of[slug], fp_of[slug], fn_of[slug]
        result.rules.append(
            RuleFigures(
                slug=slug, matched=matched[slug], coverage=matched[slug] / n if n else 0.0,
                overlaps=overlaps[slug], conflicts=in_conflict[slug], positives=positives[slug],
                tp=tp, fp=fp, fn=fn, tn=len(labelled) - tp - fp - fn,
            )
        )
    result.conflicts = sorted(
        (
            Conflict(a=a, b=b, count=len(ids), examples=tuple(ids[:EXAMPLES]), a_positives=positives[a], b_positives=positives[b])
            for (a, b), ids in cofire.items()
        ),
        key=lambda c: (-c.count, c.a, c.b),
    )
    return result


# --- each line of a rule on the labelled problems -------------------------------------------------


@dataclass(frozen=True)
class LineFigures:
    """One line of a rule (a top-level branch, as the editor's box shows it) on the labelled problems."""

    slug: str
    number: int  # from 1, in the order of its box (the pattern, or the statement-only pattern)
    text: str
    tp: int  # labelled problems of the concept it matches
    fp: int  # labelled problems without the concept it matches
    only_tp: int  # of its TP, those no other line of the rule matches (what deleting it would cost)
    wrong: tuple[int, ...] = ()  # the first WRONG_EXAMPLES problems it matches wrongly (indices, or ids once mapped)
    matched: int = 0  # problems in scope it matches, labelled or not: the concepts deleting it takes away
    in_statement: bool = False  # a line of the statement-only pattern, matched in the statements

    @property
    def more_wrong_than_right(self) -> bool:
        return self.fp > self.tp


WRONG_EXAMPLES = 5  # wrong matches kept per line: what a TA reads before narrowing it


@dataclass(frozen=True)
class LineCount:
    """One branch's matches judged by the labels."""

    tp: int
    fp: int
    only_tp: int  # of its TP, those no other branch matches
    wrong: tuple[int, ...]  # the first WRONG_EXAMPLES texts it matches that are labelled without the concept


def line_counts(by_branch: Sequence[Sequence[int]], verdict: Callable[[int], bool | None]) -> list[LineCount]:
    """Each branch's counts, given the texts each branch matches and each text's verdict: True when
    it is labelled with the concept, False when labelled without it, None when nobody labelled it."""
    branches_per_text = Counter(i for hits in by_branch for i in hits)
    counts = []
    for hits in by_branch:
        verdicts = [verdict(i) for i in hits]
        wrong = [i for i, v in zip(hits, verdicts) if v is False]
        counts.append(LineCount(
            tp=sum(v is True for v in verdicts),
            fp=len(wrong),
            only_tp=sum(v is True and branches_per_text[i] == 1 for i, v in zip(hits, verdicts)),
            wrong=tuple(wrong[:WRONG_EXAMPLES]),
        ))
    return counts


@dataclass(frozen=True)
class BranchHits:
    """Which texts each line (top-level branch) of one rule matches."""

    slug: str
    branches: list[str]
    by_branch: list[list[int]]  # per branch, indices into the texts
    statement_branches: int = 0  # the last ones are the statement-only pattern's


def branch_hits(rule: Rule, texts: Sequence[str], where: Sequence[int]) -> BranchHits | None:
    """The texts at `where` (indices into `texts`) that each line of `rule` matches; None for a rule
    on the backtracking engine, whose lines an RE2 set cannot tell apart.

    Give as `where` the texts the whole rule matches: a line matches a subset of them, so nothing
    else needs reading (the work grows with the matches, not with rules x bank)."""
    if check_rule(rule.pattern, rule.statement_pattern, rule.ignore_case) != {ENGINE_RE2}:
        return None
    where = list(where)
    matches = branch_matching(rule.pattern, rule.ignore_case, [texts[i] for i in where], statement_pattern=rule.statement_pattern)
    return BranchHits(rule.slug, matches.branches, [[where[k] for k in hits] for hits in matches.by_branch], matches.statement_branches)


def line_figures(hits: BranchHits, truth: Sequence[set[str] | None], scope: Container[int] | None = None) -> list[LineFigures]:
    """Each line of a rule judged against `truth` (per text: its concepts, None when unlabelled or
    out of scope), with the texts in `scope` it matches (every text when None). A rule none of whose
    matches is labelled has no figures."""
    if not any(truth[i] is not None for branch in hits.by_branch for i in branch):
        return []

    def verdict(i: int) -> bool | None:
        labels = truth[i]
        return None if labels is None else hits.slug in labels

    counts = line_counts(hits.by_branch, verdict)
    anywhere = len(hits.branches) - hits.statement_branches
    return [
        LineFigures(slug=hits.slug, number=number, text=text, tp=c.tp, fp=c.fp, only_tp=c.only_tp, wrong=c.wrong,
                    matched=len(branch) if scope is None else sum(1 for i in branch if i in scope), in_statement=in_statement)
        for (number, in_statement), text, c, branch in zip(box_lines(len(hits.branches), anywhere), hits.branches, counts, hits.by_branch)
    ]


def box_lines(branches: int, anywhere: int) -> list[tuple[int, bool]]:
    """(line number in its box, from 1; whether the box is the statement-only one) of each of a rule's
    ``branches`` branches, the first ``anywhere`` of them the pattern's, the rest the statement-only
    pattern's (as ``branch_matching`` lists them)."""
    return [(k + 1, False) if k < anywhere else (k - anywhere + 1, True) for k in range(branches)]


@dataclass(frozen=True)
class Snippet:
    """Where a line matches a problem, with some text either side (whitespace collapsed)."""

    before: str
    match: str
    after: str
    cut_before: bool  # text left out before `before`
    cut_after: bool


def line_snippets(line: str, ignore_case: bool, texts: Sequence[str], width: int = 40) -> list[Snippet | None]:
    """Per text, the wording one line of a rule matches there, with up to `width` characters either
    side: what a TA reads to narrow the line. None where the line does not match alone, and for
    every text where RE2 cannot run it alone (a group reference across lines)."""
    try:
        spans = first_matches(line, ignore_case, texts)
    except RuleError:
        return [None] * len(texts)
    return [None if span is None else _snippet(text, *span, width) for text, span in zip(texts, spans)]


def _snippet(text: str, start: int, end: int, width: int) -> Snippet:
    def squeeze(part: str) -> str:
        return " ".join(part.split())

    before, after = text[max(0, start - width) : start], text[end : end + width]
    # Keep the space at the seams (" the sample mean of"): squeeze drops it at the ends.
    lead = " " if before[-1:].isspace() else ""
    trail = " " if after[:1].isspace() else ""
    return Snippet(
        before=squeeze(before) + lead if squeeze(before) else "",
        match=squeeze(text[start:end]),
        after=trail + squeeze(after) if squeeze(after) else "",
        cut_before=start > width,
        cut_after=end + width < len(text),
    )


def lines_to_look_at(figures: Sequence[LineFigures]) -> list[LineFigures]:
    """The lines more often wrong than right, the most lopsided first."""
    wrong = [f for f in figures if f.more_wrong_than_right]
    return sorted(wrong, key=lambda f: (f.tp - f.fp, -f.fp, f.slug, f.number))


# --- what changed between two versions of a rule --------------------------------------------------


@dataclass(frozen=True)
class DiffLine:
    kind: str  # " " (both), "-" (only the older), "+" (only the newer)
    text: str


# The line before a rule's statement-only branches where a rule is shown as lines (history, diffs).
STATEMENT_ONLY_HEADING = "[in the statement only:]"


def branch_lines(pattern: str, statement_pattern: str = "") -> list[str]:
    """A rule's patterns as lines to compare: one per top-level branch (a long rule is one line
    otherwise, and a diff of it says nothing), the statement-only branches under a heading of their
    own, so that moving a branch there reads as a move."""
    lines = pattern_lines(pattern).splitlines() if pattern else []
    if statement_pattern:
        lines += [STATEMENT_ONLY_HEADING, *pattern_lines(statement_pattern).splitlines()]
    return lines


def rule_lines(pattern: str, ignore_case: bool, enabled: bool, statement_pattern: str = "") -> list[str]:
    """A rule as lines to compare (``branch_lines``), then its flags."""
    return branch_lines(pattern, statement_pattern) + [f"[ignore case: {'yes' if ignore_case else 'no'}]", f"[enabled: {'yes' if enabled else 'no'}]"]


def version_diff(old: tuple[str, bool, bool, str], new: tuple[str, bool, bool, str]) -> list[DiffLine]:
    """Every line of both versions (pattern, ignore case, enabled, statement-only pattern), marked kept, removed or added."""
    a, b = rule_lines(*old), rule_lines(*new)
    out: list[DiffLine] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(DiffLine(" ", line) for line in a[i1:i2])
            continue
        out.extend(DiffLine("-", line) for line in a[i1:i2])
        out.extend(DiffLine("+", line) for line in b[j1:j2])
    return out
