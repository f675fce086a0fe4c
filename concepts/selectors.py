"""Reads for concepts, rules, extraction runs and reports."""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter, OrderedDict
from collections.abc import Container
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Sum
from django.http import Http404

from concepts import extraction, mining, rule_analysis
from concepts.models import (
    Concept,
    ConceptRule,
    ConceptRuleVersion,
    ExtractedConcept,
    ExtractionRun,
    ExtractorReport,
    GroundTruthLabel,
    HeldOutProblem,
)
from problems.models import Problem

PREVIEW_SHOWN = 40  # matched problems rendered in the live panel; counts cover every problem
MISSED_SHOWN = 25  # FN and FP problems rendered in the live panel, each; their counts cover all
SUGGESTED_PHRASES = 25  # mined phrases listed under the suggested branches


def rule_writing_labels() -> QuerySet[GroundTruthLabel]:
    """The ground-truth labels rules may be written from: every label but those of the problems held
    out from rule writing (HeldOutProblem), which only ever measure the rules."""
    return GroundTruthLabel.objects.filter(problem__held_out__isnull=True)


def held_out_ids(collection: str = "") -> set[int]:
    """The problems held out from rule writing (of one collection)."""
    qs = HeldOutProblem.objects.all()
    if collection:
        qs = qs.filter(problem__collection=collection)
    return set(qs.values_list("problem_id", flat=True))


def held_out_labelled_count(collection: str = "") -> int:
    """How many labelled problems (of one collection) are held out from rule writing."""
    qs = GroundTruthLabel.objects.filter(problem__held_out__isnull=False)
    if collection:
        qs = qs.filter(problem__collection=collection)
    return qs.values("problem_id").distinct().count()


def concept_get(slug: str) -> Concept:
    concept = Concept.objects.select_related("module").filter(slug=slug).first()
    if concept is None:
        raise Http404("No such concept")
    return concept


def concept_list_with_rules() -> QuerySet[Concept]:
    return (
        Concept.objects.select_related("module", "rule")
        .annotate(labelled=Count("ground_truth_labels", distinct=True))
        .order_by("module__order", "slug")
    )


def rules_enabled() -> list[tuple[extraction.Rule, ConceptRule]]:
    rules = ConceptRule.objects.filter(enabled=True).select_related("concept").order_by("concept__slug")
    return [(extraction.Rule(r.concept.slug, r.pattern, r.ignore_case, r.statement_pattern), r) for r in rules]


def rule_versions(rule: ConceptRule) -> QuerySet[ConceptRuleVersion]:
    return rule.versions.select_related("author").order_by("-number")


@dataclass
class BankTexts:
    """The texts a preview runs on, with the ground truth it is judged against."""

    ids: list[int]
    texts: list[str]  # what the rules read of each problem: its statement, and its solution (rule_text_rows)
    titles: list[str]
    labelled: set[int]  # problems that have any ground-truth label, less the held-out ones (rule_writing_labels)
    key: str = ""  # changes whenever a problem or a label changes
    texts_key: str = ""  # changes whenever a problem changes (what the rules match depends on it alone)
    # Concept id -> the problems labelled with it (rule_writing_labels, every module): read with the
    # bank, so that a keystroke's preview does not query them (a 10,000-problem bank: 11 ms a query).
    truth_by_concept: dict[int, frozenset[int]] = field(default_factory=dict)

    @functools.cached_property
    def branch_memo(self) -> extraction.BranchMemo:
        """What each branch previewed over these texts matched, kept between keystrokes."""
        return extraction.BranchMemo(self.texts)

    @functools.cached_property
    def index(self) -> dict[int, int]:
        """Problem id -> its position in ``ids``."""
        return {pid: i for i, pid in enumerate(self.ids)}

    def truth(self, concept_id: int) -> set[int]:
        """The problems labelled with the concept, as rules may be written from (none held out)."""
        return set(self.truth_by_concept.get(concept_id, ()))


def rule_text_rows(problems: QuerySet[Problem], reads_solutions: bool | None = None, also: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """(id, what the rules read, *the fields named in ``also``) for each problem of ``problems``, in its
    order. What the rules read: the statement, then the solution where the problem has one and
    ``reads_solutions`` (by default ``settings.RULES_READ_SOLUTIONS``; ``extraction.rule_text``)."""
    reads = settings.RULES_READ_SOLUTIONS if reads_solutions is None else reads_solutions
    return [
        (pid, extraction.rule_text(text, solution if reads else None), *rest)
        for pid, text, solution, *rest in problems.values_list("id", "text", "solution", *also)
    ]


def _bank_key(module_ids: list[int]) -> tuple[str, str]:
    """Keys of the bank with its labels, and of its texts alone."""
    qs = Problem.objects.all()
    if module_ids:
        qs = qs.filter(module_id__in=module_ids)
    # Counts apart from the maxima: each maximum reads one end of an index, and a count alone can be
    # read off an index; together the three made PostgreSQL read every row of the table (10,000
    # problems: 7.5 ms, against 2 ms apart), on every keystroke of the rule editor.
    state = {"n": qs.count(), **qs.aggregate(last=Max("updated_at"), top=Max("id"))}
    # The sums of what a label or held-out mark refers to: the admin's change form edits one in place
    # (same id, same count), and the bank holds each concept's labels (BankTexts.truth_by_concept).
    # The sum of their products too: two labels that swap concepts keep both sums, not it. The sums
    # read every row (26,000 labels: 7 ms, against 4.5 ms for the count alone), so the highest id is
    # taken in the same pass.
    labels = GroundTruthLabel.objects.aggregate(
        n=Count("id"), top=Max("id"), concepts=Sum("concept_id"), problems=Sum("problem_id"), pairs=Sum(F("concept_id") * F("problem_id"))
    )
    held_out = HeldOutProblem.objects.aggregate(n=Count("id"), top=Max("id"), problems=Sum("problem_id"))
    texts = json.dumps([sorted(module_ids), state, settings.RULES_READ_SOLUTIONS], default=str)
    raw = json.dumps([texts, labels, held_out], default=str)
    return "bank-texts:" + hashlib.sha1(raw.encode()).hexdigest(), "bank-only-texts:" + hashlib.sha1(texts.encode()).hexdigest()


# Per-process memory, not Django's cache: LocMemCache pickles, and unpickling ten thousand texts on
# every keystroke cost more than matching them. A few recent banks (whole, or some modules) are kept.
_BANK_MEMO: OrderedDict[str, BankTexts] = OrderedDict()
_BANK_MEMO_SIZE = 4


def bank_texts(module_ids: list[int] | None = None) -> BankTexts:
    """What the rules read of every problem (of some modules), cached until a problem or a label changes."""
    module_ids = sorted(module_ids or [])
    key, texts_key = _bank_key(module_ids)
    found = _BANK_MEMO.get(key)
    if found is not None:
        _BANK_MEMO.move_to_end(key)
        return found
    qs = Problem.objects.order_by("id")
    if module_ids:
        qs = qs.filter(module_id__in=module_ids)
    rows = rule_text_rows(qs, also=("title",))
    by_concept: dict[int, set[int]] = {}
    for concept_id, problem_id in rule_writing_labels().values_list("concept_id", "problem_id"):
        by_concept.setdefault(concept_id, set()).add(problem_id)
    labelled = set().union(*by_concept.values())
    truth = {concept_id: frozenset(ids) for concept_id, ids in by_concept.items()}
    texts = BankTexts([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], labelled, key, texts_key, truth)
    _BANK_MEMO[key] = texts
    while len(_BANK_MEMO) > _BANK_MEMO_SIZE:
        _BANK_MEMO.popitem(last=False)
    return texts


@dataclass
class PreviewRow:
    problem_id: int
    title: str
    text: str
    spans: list[tuple[int, int]]
    verdict: str  # "tp", "fp" or "unlabelled"


@dataclass(frozen=True)
class BranchStat:
    """One top-level branch of a previewed pattern (a line of the editor's box), over the bank."""

    number: int  # from 1, in the order of its box's non-blank lines
    text: str
    matched: int
    tp: int  # labelled problems of the concept it matches
    fp: int  # labelled problems without the concept it matches
    only_tp: int  # of its TP, those no other branch matches
    wrong: tuple[tuple[int, str], ...] = ()  # (id, title) of the first few problems it matches wrongly
    in_statement: bool = False  # a line of the statement-only box
    # Of its right and wrong matches, those it makes in a solution only: a line wrong mostly there
    # reads a solution's working as a statement's footprint, and belongs in the statement-only box.
    right_in_solution: int = 0
    wrong_in_solution: int = 0
    # Where the line misfires on solutions: the rule's two patterns with it moved to the statement-only box.
    moved: tuple[str, str] | None = None

    @property
    def more_wrong_than_right(self) -> bool:
        return self.fp > self.tp

    @property
    def misfires_on_solutions(self) -> bool:
        """Moving the line to the statement-only box would take away more wrong matches than right ones."""
        return self.wrong_in_solution > self.right_in_solution


@dataclass
class RulePreview:
    error: str = ""
    position: int | None = None
    in_statement: bool = False  # the error is in the statement-only pattern
    matched: int = 0
    total: int = 0
    rows: list[PreviewRow] = field(default_factory=list)
    stats: extraction.ConceptStats | None = None
    newly_matched: list[tuple[int, str, bool | None]] = field(default_factory=list)  # (id, title, right? None: unlabelled)
    no_longer_matched: list[tuple[int, str, bool | None]] = field(default_factory=list)
    engine: str = ""
    # The labelled problems of the concept the pattern misses (FN), and its matches labelled without
    # the concept (FP): every id, and the first few rendered.
    missed_ids: list[int] = field(default_factory=list)
    missed: list[PreviewRow] = field(default_factory=list)
    false_positive_ids: list[int] = field(default_factory=list)
    false_positives: list[PreviewRow] = field(default_factory=list)
    # Each branch's share, for a pattern of two or more branches that RE2 runs (else empty).
    branches: list[BranchStat] = field(default_factory=list)

    @property
    def branches_more_wrong(self) -> int:
        return sum(b.more_wrong_than_right for b in self.branches)

    @property
    def branches_matching_nothing(self) -> int:
        return sum(b.matched == 0 for b in self.branches)

    @property
    def branches_misfiring_on_solutions(self) -> int:
        return sum(b.misfires_on_solutions for b in self.branches)


def _matching_ids(pattern: str, ignore_case: bool, bank: BankTexts, statement_pattern: str = "") -> tuple[extraction.CompiledRules, set[int]]:
    compiled, found = extraction.matching(
        pattern, ignore_case, bank.texts, budget=settings.RULE_FALLBACK_BUDGET_SECONDS, statement_pattern=statement_pattern,
        memo=bank.branch_memo,
    )
    return compiled, {bank.ids[i] for i in found}


def _moved_to_statement(pattern: str, statement_pattern: str, line: BranchStat) -> tuple[str, str] | None:
    """The rule's two patterns with ``line`` of the first box moved to the end of the second; None
    where the line is not that branch of the pattern (a pattern matched whole)."""
    lines = extraction.top_level_branches(pattern)
    if line.in_statement or not 1 <= line.number <= len(lines) or lines[line.number - 1] != line.text:
        return None
    del lines[line.number - 1]
    return "|".join(lines), mining.append_branch(statement_pattern, line.text)


def _branch_stats(matches: extraction.BranchMatches, bank: BankTexts, truth: set[int]) -> list[BranchStat]:
    """What each branch matches, right and wrong by the labels, what it alone finds, and how much of
    it is in solutions only."""

    def verdict(i: int) -> bool | None:
        pid = bank.ids[i]
        return True if pid in truth else False if pid in bank.labelled else None

    counts = rule_analysis.line_counts(matches.by_branch, verdict)
    anywhere = len(matches.branches) - matches.statement_branches  # the statement-only box's lines follow
    # Only a line of the first box that goes wrong somewhere is worth moving: its labelled matches.
    judged = [
        [i for i in hits if bank.ids[i] in bank.labelled] if k < anywhere and c.fp else []
        for k, (hits, c) in enumerate(zip(matches.by_branch, counts))
    ]
    in_solution_only = matches.in_solution_only(bank.texts, judged)
    stats = []
    lines = rule_analysis.box_lines(len(matches.branches), anywhere)
    for (number, in_statement), text, hits, c, in_solution in zip(lines, matches.branches, matches.by_branch, counts, in_solution_only):
        right_in_solution = sum(1 for i in in_solution if bank.ids[i] in truth)
        stats.append(BranchStat(
            number=number, text=text, matched=len(hits), tp=c.tp, fp=c.fp, only_tp=c.only_tp,
            wrong=tuple((bank.ids[i], bank.titles[i]) for i in c.wrong), in_statement=in_statement,
            right_in_solution=right_in_solution, wrong_in_solution=len(in_solution) - right_in_solution,
        ))
    return stats


def rule_preview(
    *, concept: Concept, pattern: str, ignore_case: bool, module_ids: list[int] | None = None, statement_pattern: str = ""
) -> RulePreview:
    """What a rule would match over the bank (``pattern`` anywhere it reads, ``statement_pattern`` in
    the statements), judged against the concept's ground truth."""
    result = RulePreview()
    try:
        engines = extraction.check_rule(pattern, statement_pattern, ignore_case)
        result.engine = extraction.ENGINE_BACKTRACKING if extraction.ENGINE_BACKTRACKING in engines else extraction.ENGINE_RE2
        bank = bank_texts(module_ids)
        matches = extraction.branch_matching(
            pattern, ignore_case, bank.texts, budget=settings.RULE_FALLBACK_BUDGET_SECONDS, statement_pattern=statement_pattern,
            memo=bank.branch_memo,
        )
        compiled, found = matches.compiled, {bank.ids[i] for i in matches.found}
    except extraction.RuleError as exc:
        result.error, result.position, result.in_statement = exc.message, exc.position, exc.in_statement
        return result
    except extraction.RuleBudgetExceeded as exc:
        result.error = (
            f"the pattern used up its time budget of {exc.seconds:g}s after {exc.texts_done} of {len(bank.texts)} problems: "
            "RE2 cannot run it (backreferences, lookaround), and it backtracks too slowly to run over the bank"
        )
        return result
    except extraction.RuleTimeout as exc:
        result.error = f"the pattern took longer than {exc.seconds:g}s on one problem (catastrophic backtracking)"
        return result
    truth = bank.truth(concept.pk)
    result.total, result.matched = len(bank.ids), len(found)
    if len(matches.branches) > 1:
        result.branches = [
            replace(b, moved=_moved_to_statement(pattern, statement_pattern, b)) if b.misfires_on_solutions else b
            for b in _branch_stats(matches, bank, truth)
        ]
    predicted_labelled = {pid for pid in found if pid in bank.labelled}
    in_bank_truth = truth & set(bank.ids)
    tp = len(predicted_labelled & in_bank_truth)
    fp = len(predicted_labelled - in_bank_truth)
    fn = len(in_bank_truth - predicted_labelled)
    result.stats = extraction.ConceptStats(tp=tp, fp=fp, fn=fn, tn=len(bank.labelled & set(bank.ids)) - tp - fp - fn)
    index = bank.index
    result.missed_ids = sorted(in_bank_truth - predicted_labelled)
    for pid in result.missed_ids[:MISSED_SHOWN]:
        i = index[pid]
        result.missed.append(PreviewRow(pid, bank.titles[i], bank.texts[i], [], "fn"))
    result.false_positive_ids = sorted(predicted_labelled - in_bank_truth)
    for pid in result.false_positive_ids[:MISSED_SHOWN]:
        i = index[pid]
        spans = extraction.match_spans(bank.texts[i], compiled, "preview")
        result.false_positives.append(PreviewRow(pid, bank.titles[i], bank.texts[i], spans, "fp"))
    ordered = sorted(found, key=lambda pid: (pid not in truth, pid))
    for pid in ordered[:PREVIEW_SHOWN]:
        i = index[pid]
        verdict = "tp" if pid in truth else ("fp" if pid in bank.labelled else "unlabelled")
        # Spans only for the rows shown: a broad pattern may match thousands of problems.
        try:
            spans = extraction.match_spans(bank.texts[i], compiled, "preview")
        except extraction.RuleTimeout:  # the budget ran out on the highlighting: show the row unmarked
            spans = []
        result.rows.append(PreviewRow(pid, bank.titles[i], bank.texts[i], spans, verdict))
    saved = getattr(concept, "rule", None) if hasattr(concept, "rule") else None
    if saved is not None:
        # The saved rule's matches only change with the rule or the bank: cache them between keystrokes.
        saved_key = f"{bank.key}:rule:{saved.pk}:{saved.version}"
        before = cache.get(saved_key)
        if before is None:
            try:
                before = _matching_ids(saved.pattern, saved.ignore_case, bank, saved.statement_pattern)[1]
            except (extraction.RuleError, extraction.RuleTimeout):
                before = set()
            cache.set(saved_key, before, 600)
        now = set(found)
        title = {pid: bank.titles[index[pid]] for pid in before | now}
        # Right or wrong by the labels; None for a problem without them (bank.labelled leaves out the held-out ones too).
        result.newly_matched = [(pid, title[pid], pid in truth if pid in bank.labelled else None) for pid in sorted(now - before)]
        result.no_longer_matched = [(pid, title[pid], pid not in truth if pid in bank.labelled else None) for pid in sorted(before - now)]
    return result


# --- rule authoring: mined phrases and suggested branches ----------------------------------------


def concept_hints(concept: Concept) -> frozenset[str]:
    """Stems of the concept's own words (slug, name, description), less words most concepts share."""
    def words(slug: str, name: str, description: str) -> str:
        return " ".join((slug.replace("-", " "), name, description))

    others = [words(*row) for row in Concept.objects.values_list("slug", "name", "description")]
    return mining.hint_stems(words(concept.slug, concept.name, concept.description), others)


@dataclass
class PhraseRow:
    text: str
    branch: str
    fn_recovered: int
    fp_added: int
    positives: int
    negatives: int
    unlabelled: int
    precision: float
    appended: str  # the pattern with the branch appended: what the "Append" link previews
    fits: bool  # the appended pattern is within the length limit
    recovered: list[tuple[int, str]]  # (problem id, title) of the FN it recovers, the first few
    recovered_ids: list[int] = field(default_factory=list)
    false_positive_ids: list[int] = field(default_factory=list)
    fn_left: int | None = None  # for a suggestion: the FN left once it and those before it are appended
    alternatives: list[tuple[str, str, str]] = field(default_factory=list)  # (text, branch, appended) of the same effect


@dataclass
class RuleSuggestions:
    error: str = ""
    pattern: str = ""
    positives: int = 0
    negatives: int = 0
    missed: int = 0
    suggestions: list[PhraseRow] = field(default_factory=list)
    phrases: list[PhraseRow] = field(default_factory=list)


_MINING_MEMO: OrderedDict[tuple, RuleSuggestions] = OrderedDict()
_MINING_MEMO_SIZE = 32


def rule_suggestions(
    *, concept: Concept, pattern: str, ignore_case: bool, module_ids: list[int] | None = None, statement_pattern: str = ""
) -> RuleSuggestions:
    """Phrases of the problems the rule misses that would recover them (concepts.mining), each as a
    branch to append to its pattern, judged on the concept's labelled problems; the greedy few first."""
    bank = bank_texts(module_ids)
    key = (bank.key, concept.pk, concept.name, concept.description, pattern, ignore_case, statement_pattern)
    found_memo = _MINING_MEMO.get(key)
    if found_memo is not None:
        _MINING_MEMO.move_to_end(key)
        return found_memo
    result = RuleSuggestions(pattern=pattern)
    matched = [False] * len(bank.ids)
    if pattern.strip() or statement_pattern.strip():
        try:
            extraction.check_rule(pattern, statement_pattern, ignore_case)
            # The preview just matched these lines: their matches come from the bank's memo.
            for i in extraction.matching(pattern, ignore_case, bank.texts, statement_pattern=statement_pattern, memo=bank.branch_memo)[1]:
                matched[i] = True
        except extraction.RuleError as exc:
            result.error = exc.message
            return result
        except extraction.RuleTimeout as exc:
            result.error = f"the pattern took longer than {exc.seconds:g}s on one problem (catastrophic backtracking)"
            return result
    truth = bank.truth(concept.pk)
    labels = [(pid in truth) if pid in bank.labelled else None for pid in bank.ids]
    mined = mining.mine(
        bank.texts, labels, matched, ignore_case=ignore_case, limit=SUGGESTED_PHRASES, hints=concept_hints(concept)
    )
    result.positives, result.negatives, result.missed = mined.positives, mined.negatives, mined.missed

    def row(phrase: mining.Phrase, fn_left: int | None = None) -> PhraseRow:
        appended = mining.append_branch(pattern, phrase.branch)
        return PhraseRow(
            text=phrase.text, branch=phrase.branch, fn_recovered=phrase.fn_recovered, fp_added=phrase.fp_added,
            positives=phrase.positives, negatives=phrase.negatives, unlabelled=phrase.unlabelled,
            precision=phrase.precision, appended=appended, fits=len(appended) <= extraction.MAX_PATTERN_LENGTH,
            recovered=[(bank.ids[i], bank.titles[i]) for i in phrase.recovered[:5]],
            recovered_ids=[bank.ids[i] for i in phrase.recovered],
            false_positive_ids=[bank.ids[i] for i in phrase.false_positives],
            fn_left=fn_left,
            alternatives=[
                (text, branch, mining.append_branch(pattern, branch))
                for text, branch in phrase.alternatives
                if len(mining.append_branch(pattern, branch)) <= extraction.MAX_PATTERN_LENGTH
            ],
        )

    result.suggestions = [row(s.phrase, s.fn_left) for s in mined.suggestions]
    result.phrases = [row(p) for p in mined.phrases]
    _MINING_MEMO[key] = result
    while len(_MINING_MEMO) > _MINING_MEMO_SIZE:
        _MINING_MEMO.popitem(last=False)
    return result


# --- rule analysis (per rule and overall) ----------------------------------------------------------


@dataclass
class RulesAnalysis:
    analysis: rule_analysis.Analysis
    ids: list[int]  # problem id of each analysed problem (the analysis speaks in indices)
    titles: list[str]
    collection: str = ""
    error: str = ""
    lines: list[rule_analysis.LineFigures] = field(default_factory=list)  # every line of every RE2 rule, on the labelled
    texts: list[str] = field(default_factory=list, repr=False)  # each analysed problem's text
    ignore_case: dict[str, bool] = field(default_factory=dict)  # per rule, as matched
    held_out: frozenset[int] = frozenset()  # problems held out from rule writing: counted, never listed
    _in_context: dict[tuple[str, int, bool], list[tuple[int, str, rule_analysis.Snippet | None]]] = field(default_factory=dict, repr=False)
    _position: dict[int, int] = field(default_factory=dict, repr=False)  # problem id -> index, built when first needed

    @property
    def no_concept_ids(self) -> list[int]:
        """The problems no rule matches, to label and write rules from: never a held-out one."""
        return [self.ids[i] for i in self.analysis.no_concept if self.ids[i] not in self.held_out]

    @property
    def lines_to_look_at(self) -> list[rule_analysis.LineFigures]:
        return rule_analysis.lines_to_look_at(self.lines)

    def wrong_in_context(self, line: rule_analysis.LineFigures) -> list[tuple[int, str, rule_analysis.Snippet | None]]:
        """(id, title, the wording it matched) of each of the line's first wrong matches; worked out
        for the lines a page shows, once per analysis."""
        key = (line.slug, line.number, line.in_statement)
        if key not in self._in_context:
            if not self._position:
                self._position.update((pid, k) for k, pid in enumerate(self.ids))
            shown = [self._position[pid] for pid in line.wrong if pid in self._position]
            # A statement-only line matched the statement: show the wording there, not a solution's.
            texts = [extraction.statement_of(self.texts[k]) if line.in_statement else self.texts[k] for k in shown]
            snippets = rule_analysis.line_snippets(line.text, self.ignore_case.get(line.slug, True), texts)
            self._in_context[key] = [(self.ids[k], self.titles[k], snippet) for k, snippet in zip(shown, snippets)]
        return self._in_context[key]


_ANALYSIS_MEMO: OrderedDict[str, RulesAnalysis] = OrderedDict()
_ANALYSIS_MEMO_SIZE = 4


def _rules_key() -> str:
    rows = list(ConceptRule.objects.filter(enabled=True).order_by("pk").values_list("pk", "version"))
    return hashlib.sha1(json.dumps(rows).encode()).hexdigest()


@dataclass
class _BankMatches:
    """Which problems of the whole bank each enabled rule matches, and the rule version it was for."""

    bank_key: str
    versions: dict[str, tuple[int, int]]  # slug -> (rule id, version)
    matches: dict[str, list[int]]  # slug -> indices into bank_texts()
    rules: list[extraction.Rule] = field(default_factory=list)  # the enabled rules, as matched


_BANK_MATCHES: dict[str, _BankMatches] = {}
# Past this many changed rules, one pass of every rule (extract_many) is cheaper than matching the
# changed rules one by one (~20 ms each over 10,000 problems, against ~0.5 s for all 130 cold).
_INCREMENTAL_MAX = 8


def _bank_matches(bank: BankTexts) -> _BankMatches:
    """Every enabled rule's matches over the bank. After a rule is saved only that rule is matched
    again, so the analysis and the "No rule matches" queue stay quick while a TA edits rules.
    Raises RuleError / RuleTimeout."""
    enabled = rules_enabled()
    versions = {rule.slug: (row.pk, row.version) for rule, row in enabled}
    known = _BANK_MATCHES.get(bank.texts_key)  # a label saved changes no match: the texts' key alone
    changed = [rule for rule, _ in enabled if known is None or known.versions.get(rule.slug) != versions[rule.slug]]
    if known is not None and len(changed) <= _INCREMENTAL_MAX:
        matches = {slug: found for slug, found in known.matches.items() if slug in versions}
        for rule in changed:
            matches[rule.slug] = extraction.matching(
                rule.pattern, rule.ignore_case, bank.texts, statement_pattern=rule.statement_pattern, slug=rule.slug
            )[1]
    else:
        predicted = extraction.extract_many(bank.texts, extraction.compile_rules([rule for rule, _ in enabled]))
        matches = {slug: [] for slug in versions}
        for i, found in enumerate(predicted):
            for slug in found:
                matches[slug].append(i)
    result = _BankMatches(bank.texts_key, versions, matches, [rule for rule, _ in enabled])
    _BANK_MATCHES.clear()  # the whole bank only: an older bank's matches are of no further use
    _BANK_MATCHES[bank.texts_key] = result
    return result


def no_rule_problem_ids() -> list[int]:
    """The problems no enabled rule matches now (empty when a rule cannot run over the bank)."""
    bank = bank_texts()
    try:
        matches = _bank_matches(bank)
    except (extraction.RuleError, extraction.RuleTimeout):
        return []
    covered = set().union(*matches.matches.values())
    return [pid for i, pid in enumerate(bank.ids) if i not in covered]


# Which problems each line of each rule version matches, for one bank's texts: after a rule is saved
# only its lines are matched again, and a new label matches nothing again (all 130 rules' lines cost
# 0.2 s at 10,000 problems).
_LINE_HITS: dict[str, dict[str, tuple[tuple[int, int], rule_analysis.BranchHits | None]]] = {}


def _rule_lines(
    bank: BankTexts, matches: _BankMatches, truth: list[set[str] | None], scope: Container[int] | None = None
) -> list[rule_analysis.LineFigures]:
    """Every line of every enabled rule judged against `truth` (per problem of the bank, None when
    unlabelled or outside the collection), with the problems in `scope` (indices; None: the whole
    bank) it matches."""
    known = _LINE_HITS.get(bank.texts_key, {})
    hits = {slug: kept for slug, kept in known.items() if slug in matches.versions}
    for rule in matches.rules:  # the rules exactly as matched
        version = matches.versions[rule.slug]
        if rule.slug not in hits or hits[rule.slug][0] != version:
            hits[rule.slug] = (version, rule_analysis.branch_hits(rule, bank.texts, matches.matches.get(rule.slug, [])))
    _LINE_HITS.clear()  # the whole bank only: an older bank's hits are of no further use
    _LINE_HITS[bank.texts_key] = hits
    figures: list[rule_analysis.LineFigures] = []
    for rule in matches.rules:
        rule_hits = hits[rule.slug][1]
        if rule_hits is not None:  # None: a rule on the backtracking engine, not split into lines
            # Its wrong matches as problem ids (the analysis page links to them).
            figures += [replace(f, wrong=tuple(bank.ids[i] for i in f.wrong)) for f in rule_analysis.line_figures(rule_hits, truth, scope)]
    return figures


def rules_analysis(*, collection: str = "") -> RulesAnalysis:
    """Every enabled rule over the bank (or one collection), analysed Snorkel-style against the
    ground truth; kept until a problem, a label or a rule changes."""
    bank = bank_texts()
    key = f"{bank.key}:{_rules_key()}:{collection}"
    found = _ANALYSIS_MEMO.get(key)
    if found is not None:
        _ANALYSIS_MEMO.move_to_end(key)
        return found
    if collection:
        wanted = set(Problem.objects.filter(collection=collection).values_list("id", flat=True))
        chosen = [i for i, pid in enumerate(bank.ids) if pid in wanted]
    else:
        chosen = list(range(len(bank.ids)))
    ids = [bank.ids[i] for i in chosen]
    titles = [bank.titles[i] for i in chosen]
    labels: dict[int, set[str]] = {}
    for pid, slug in rule_writing_labels().values_list("problem_id", "concept__slug"):
        labels.setdefault(pid, set()).add(slug)
    truth = [labels.get(pid) for pid in ids]
    try:
        matches = _bank_matches(bank)
    except (extraction.RuleError, extraction.RuleTimeout) as exc:
        if isinstance(exc, extraction.RuleTimeout):
            where = f"problem {bank.ids[exc.text_index]}" if exc.text_index < len(bank.ids) else "a problem"
            error = f"rule {exc.slug!r} took longer than {exc.seconds:g}s on {where}"
        else:
            error = str(exc)
        return RulesAnalysis(rule_analysis.analyse([], [set() for _ in ids], truth), ids, titles, collection, error=error)
    position = {i: k for k, i in enumerate(chosen)}
    predicted: list[set[str]] = [set() for _ in chosen]
    for slug, found_in in matches.matches.items():
        for i in found_in:
            k = position.get(i)
            if k is not None:
                predicted[k].add(slug)
    modules = dict(Concept.objects.filter(module__isnull=False).values_list("slug", "module__name"))
    analysis = rule_analysis.analyse(sorted(matches.versions), predicted, truth, groups=modules)
    truth_in_bank: list[set[str] | None] = [None] * len(bank.ids)
    for k, i in enumerate(chosen):
        truth_in_bank[i] = truth[k]
    lines = _rule_lines(bank, matches, truth_in_bank, set(chosen) if collection else None)
    result = RulesAnalysis(
        analysis, ids, titles, collection, lines=lines, texts=[bank.texts[i] for i in chosen],
        ignore_case={rule.slug: rule.ignore_case for rule in matches.rules}, held_out=frozenset(held_out_ids(collection)),
    )
    _ANALYSIS_MEMO[key] = result
    while len(_ANALYSIS_MEMO) > _ANALYSIS_MEMO_SIZE:
        _ANALYSIS_MEMO.popitem(last=False)
    return result


def extraction_run_latest() -> ExtractionRun | None:
    return ExtractionRun.objects.order_by("-id").first()


def extraction_run_get(pk: int) -> ExtractionRun:
    run = ExtractionRun.objects.filter(pk=pk).first()
    if run is None:
        raise Http404("No such extraction run")
    return run


def extracted_for_problem(problem: Problem) -> list[str]:
    run = ExtractionRun.objects.filter(status="done", source="rules").order_by("-id").first()
    if run is None:
        return []
    return list(
        ExtractedConcept.objects.filter(run=run, problem=problem).order_by("concept__slug").values_list("concept__slug", flat=True)
    )


def report_get(pk: int) -> ExtractorReport:
    report = ExtractorReport.objects.filter(pk=pk).first()
    if report is None:
        raise Http404("No such report")
    return report


def report_history(limit: int = 50, source: str = "rules") -> list[ExtractorReport]:
    # The held-out reports measure other problems: a line through both would jump between them.
    return list(ExtractorReport.objects.filter(status="done", source=source, held_out=False).order_by("-id")[:limit])[::-1]


def labelled_problems(collection: str = "", held_out: bool | None = None) -> tuple[list[int], list[str], list[set[str]]]:
    """Problems with ground-truth labels (of one collection): ids, what the rules read of them
    (``rule_text_rows``) and label sets. ``held_out``:
    True, only the problems held out from rule writing; False, only the others; None, every one."""
    labels: dict[int, set[str]] = {}
    qs = GroundTruthLabel.objects.all()
    if held_out is not None:
        qs = qs.filter(problem__held_out__isnull=not held_out)
    if collection:
        qs = qs.filter(problem__collection=collection)
    for pid, slug in qs.values_list("problem_id", "concept__slug"):
        labels.setdefault(pid, set()).add(slug)
    ids = sorted(labels)
    texts = dict(rule_text_rows(Problem.objects.filter(id__in=ids))) if ids else {}
    return ids, [texts[i] for i in ids], [labels[i] for i in ids]


def report_problems(
    *, concept: Concept, kind: str, collection: str = "", source: str = "rules"
) -> list[tuple[Problem, str, list[tuple[int, int]]]]:
    """The FP or FN problems of one concept under the current rules (or the latest hybrid run), each with
    what the rules read of it (statement and solution, ``rule_text_rows``) and the rule's spans in that
    text where the rule matched; never a problem held out from rule writing."""
    ids, texts, truth = labelled_problems(collection, held_out=False)
    rules = [rule for rule, _ in rules_enabled()]
    compiled = extraction.compile_rules(rules, budget=settings.RULE_FALLBACK_BUDGET_SECONDS)
    if source == "hybrid":
        run = ExtractionRun.objects.filter(status="done", source="hybrid").order_by("-id").first()
        found: dict[int, set[str]] = {pid: set() for pid in ids}
        if run is not None:
            for pid, slug_found in ExtractedConcept.objects.filter(run=run, problem_id__in=ids).values_list("problem_id", "concept__slug"):
                found[pid].add(slug_found)
        predicted = [found[pid] for pid in ids]
    else:
        predicted = extraction.extract_many(texts, compiled)
    slug = concept.slug
    if kind == "fp":
        chosen = [i for i, (p, t) in enumerate(zip(predicted, truth)) if slug in p and slug not in t]
    else:
        chosen = [i for i, (p, t) in enumerate(zip(predicted, truth)) if slug not in p and slug in t]
    problems = Problem.objects.in_bulk([ids[i] for i in chosen])
    out = []
    for i in chosen:
        spans = extraction.match_spans(texts[i], compiled, slug) if slug in compiled.single else []
        out.append((problems[ids[i]], texts[i], spans))
    return out


# --- expert labels ------------------------------------------------------------------------------

LABEL_QUEUES = {
    "mine": "Not yet labelled by me",
    "unlabelled": "Unlabelled",
    "disagreement": "Annotators disagree",
    "rules": "Rules and labels disagree",
    "neural": "Neural extractor suggests or disagrees",
    "norule": "No rule matches",
    "heldout": "Held out from rule writing",
}
# Queues made of what the extractors found: a problem held out from rule writing is never in them,
# so nobody writing rules or labels is shown the extractors' view of it.
_EXTRACTOR_QUEUES = ("rules", "neural", "norule")


def _label_sets_by_problem(problem_ids: list[int] | None = None) -> dict[int, dict[int, set[str]]]:
    from concepts.models import LabelSet

    qs = LabelSet.concepts.through.objects.select_related(None)
    if problem_ids is not None:
        qs = qs.filter(labelset__problem_id__in=problem_ids)
    out: dict[int, dict[int, set[str]]] = {}
    for pid, annotator, slug in qs.values_list("labelset__problem_id", "labelset__annotator_id", "concept__slug"):
        out.setdefault(pid, {}).setdefault(annotator, set()).add(slug)
    return out


def _label_queue(*, queue: str, user: Any, collection: str = "") -> QuerySet[Problem]:
    """The problems of a labelling queue, unordered (ordering and counting are the caller's); with
    ``collection``, only that collection's (a course that has just imported a book labels that book)."""
    from concepts.models import LabelResolution, LabelSet

    problems = Problem.objects.filter(collection=collection) if collection else Problem.objects.all()
    if queue in _EXTRACTOR_QUEUES:
        problems = problems.filter(held_out__isnull=True)
    if queue == "heldout":
        return problems.filter(held_out__isnull=False)
    if queue == "mine":
        return problems.exclude(label_sets__annotator=user)
    if queue == "unlabelled":
        return problems.filter(ground_truth_labels__isnull=True, label_sets__isnull=True)
    if queue == "disagreement":
        resolved = set(LabelResolution.objects.values_list("problem_id", flat=True))
        several = set(LabelSet.objects.values("problem_id").annotate(n=Count("id")).filter(n__gte=2).values_list("problem_id", flat=True))
        sets = _label_sets_by_problem(sorted(several - resolved))
        disputed = {pid for pid, by in sets.items() if len({frozenset(s) for s in by.values()}) > 1}
        return problems.filter(id__in=disputed)
    if queue == "rules":
        # Labelled problems whose concepts in the latest extraction run differ from their ground truth:
        # a label the run missed, or a concept it found that is not a label. One query: the bank's
        # labels and extractions are never read into Python.
        run = ExtractionRun.objects.filter(status="done", source="rules").order_by("-id").first()
        if run is None:
            return problems.none()
        truth = GroundTruthLabel.objects.filter(problem_id=OuterRef("pk"))
        missed = truth.filter(~Exists(ExtractedConcept.objects.filter(run=run, problem_id=OuterRef("problem_id"), concept_id=OuterRef("concept_id"))))
        extra = ExtractedConcept.objects.filter(run=run, problem_id=OuterRef("pk")).filter(
            ~Exists(GroundTruthLabel.objects.filter(problem_id=OuterRef("problem_id"), concept_id=OuterRef("concept_id")))
        )
        return problems.filter(Exists(truth)).filter(Exists(missed) | Exists(extra))
    if queue == "neural":
        return problems.filter(id__in=neural_queue_ids())
    if queue == "norule":
        # The current enabled rules, not the latest extraction run: a TA who just wrote a rule sees
        # its problems leave the queue at once (each rule's matches are kept; a saved rule alone is
        # matched again).
        return problems.filter(id__in=no_rule_problem_ids())
    raise Http404("No such queue")


def label_queue_ids(*, queue: str, user: Any, collection: str = "") -> list[int]:
    """Problem ids in a labelling queue (of one collection, if given), in bank order."""
    problems = _label_queue(queue=queue, user=user, collection=collection)
    return list(problems.order_by("module__order", "collection", "source_id").values_list("id", flat=True))


def label_queue_counts(user: Any, collection: str = "") -> dict[str, int]:
    return {queue: _label_queue(queue=queue, user=user, collection=collection).count() for queue in LABEL_QUEUES}


@dataclass
class LabelPage:
    mine: list[str]
    truth: list[str]
    suggestions: list[str]  # from the rule extractor, not yet in my labels
    neural: list[tuple[str, float]]  # (slug, probability) from the latest neural experiment, not yet in my labels
    others: dict[str, list[str]]  # annotator username -> slugs (shown to head TAs only)
    resolution: list[str] | None
    mine_version: int = 0  # versions the page sends back, so a stale save is refused (services.LabelsConflict)
    resolution_version: int = 0
    held_out: HeldOutProblem | None = None  # kept out of rule writing: the page shows no extractor suggestions

    @property
    def agreed(self) -> list[str]:
        """The concepts every other annotator chose (where a head TA's resolution starts)."""
        sets = [set(slugs) for slugs in self.others.values()]
        return sorted(set.intersection(*sets)) if sets else []

    @property
    def comparison(self) -> list[tuple[str, list[bool], bool]]:
        """(concept, chosen by each annotator in `others` order, all agree) for every concept any chose;
        disagreements first, so the head TA sees them at the top."""
        sets = [set(slugs) for slugs in self.others.values()]
        every = sorted(set().union(*sets)) if sets else []
        rows = [(slug, [slug in s for s in sets], all(slug in s for s in sets)) for slug in every]
        return sorted(rows, key=lambda row: (row[2], row[0]))

    @property
    def resolution_start(self) -> list[str]:
        """What a head TA's form starts from: the resolution if there is one, else the concepts every
        annotator agrees on (the head TA's own labels included, if any)."""
        if self.resolution is not None:
            return self.resolution
        sets = [set(slugs) for slugs in self.others.values()] + ([set(self.mine)] if self.mine else [])
        return sorted(set.intersection(*sets)) if sets else []


def label_page(*, problem: Problem, user: Any, show_others: bool) -> LabelPage:
    from concepts.models import LabelResolution, LabelSet

    sets = LabelSet.objects.filter(problem=problem).select_related("annotator").prefetch_related("concepts")
    mine: list[str] = []
    mine_version = 0
    others: dict[str, list[str]] = {}
    for label_set in sets:
        slugs = sorted(c.slug for c in label_set.concepts.all())
        if label_set.annotator_id == user.pk:
            mine, mine_version = slugs, label_set.version
        elif show_others:
            others[label_set.annotator.get_username()] = slugs
    truth = sorted(GroundTruthLabel.objects.filter(problem=problem).values_list("concept__slug", flat=True))
    resolution = LabelResolution.objects.filter(problem=problem).first()
    held_out = HeldOutProblem.objects.select_related("marked_by").filter(problem=problem).first()
    # A held-out problem is labelled the way LABELLING.md asks of every measured label: before seeing
    # what any extractor finds in it.
    suggested = [] if held_out else [s for s in extracted_for_problem(problem) if s not in mine]
    neural = [] if held_out else [(slug, p) for slug, p in neural_for_problem(problem) if slug not in mine]
    return LabelPage(
        held_out=held_out,
        mine=mine,
        truth=truth,
        suggestions=suggested,
        neural=neural,
        others=others,
        resolution=sorted(resolution.concepts.values_list("slug", flat=True)) if resolution else None,
        mine_version=mine_version,
        resolution_version=resolution.version if resolution else 0,
    )


def concepts_for_picker() -> list[dict[str, str]]:
    return [
        {"slug": slug, "name": name, "module": module or "", "description": description}
        for slug, name, module, description in Concept.objects.order_by("module__order", "slug").values_list(
            "slug", "name", "module__name", "description"
        )
    ]


def labels_agreement_table() -> tuple[list[Any], int, int]:
    """Per-concept agreement over problems labelled by several annotators; (rows, problems, annotators)."""
    from concepts.agreement import label_agreement
    from concepts.models import LabelSet

    sets = _label_sets_by_problem()
    shared = {p: by for p, by in sets.items() if len(by) >= 2}
    annotators = len(set(LabelSet.objects.values_list("annotator_id", flat=True)))
    slugs = list(Concept.objects.order_by("module__order", "slug").values_list("slug", flat=True))
    rows = label_agreement(shared, slugs)
    return rows, len(shared), annotators


# --- word selection -----------------------------------------------------------------------------

_VOCAB_MEMO: dict[str, list[tuple[str, int]]] = {}


def bank_vocabulary() -> list[tuple[str, int]]:
    """(word, count) over every problem's tokens, most frequent first; recomputed when the bank changes."""
    from embeddings.algorithms.text import tokenize, word_counts  # pure code shared with the text baselines

    bank = bank_texts()
    if bank.key not in _VOCAB_MEMO:
        counts = word_counts(tokenize(t) for t in bank.texts)
        _VOCAB_MEMO.clear()
        _VOCAB_MEMO[bank.key] = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return _VOCAB_MEMO[bank.key]


def selected_words() -> set[str]:
    from concepts.models import SelectedWord

    return set(SelectedWord.objects.values_list("word", flat=True))


# --- the neural extractor -------------------------------------------------------------------------

# NeuralSuggestion rows worth a labeller's look (NeuralSuggestion.disagrees is DISAGREES for one row).
SUGGESTS_FOR_UNLABELLED = Q(in_labels__isnull=True, predicted=True)
DISAGREES = (Q(in_labels__isnull=False) & ~Q(predicted=F("in_labels"))) | ~Q(predicted=F("in_rules"))


def neural_experiment_get(pk: int) -> Any:
    from concepts.models import NeuralExperiment

    experiment = NeuralExperiment.objects.select_related("created_by").filter(pk=pk).first()
    if experiment is None:
        raise Http404("No such experiment")
    return experiment


def neural_experiment_latest_done() -> Any:
    from concepts.models import JobStatus, NeuralExperiment

    return NeuralExperiment.objects.filter(status=JobStatus.DONE, suggest=True).order_by("-id").first()


def concept_positive_counts() -> list[tuple[str, int]]:
    """(slug, labelled problems that have it) for every concept with a label, most labelled first."""
    rows = GroundTruthLabel.objects.values_list("concept__slug").annotate(n=Count("problem", distinct=True))
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def neural_suggestion_lists(experiment: Any, limit: int = 200) -> dict[str, Any]:
    """An experiment's suggestions for unlabelled problems, and the problems where its extractors
    disagree with the labels or the rules (extractor's confidence first). Never a problem held out from
    rule writing: its row would show the suggestions its labelling page hides, and the rules' misses
    and false matches on it that the report drill-downs hide (as the "neural" queue leaves it out)."""
    qs = experiment.suggestions.filter(problem__held_out__isnull=True).select_related("problem", "concept")
    unlabelled = qs.filter(SUGGESTS_FOR_UNLABELLED).order_by("-probability")
    disagree = qs.filter(DISAGREES).order_by("-probability")
    return {
        "unlabelled": list(unlabelled[:limit]),
        "unlabelled_count": unlabelled.count(),
        "disagree": list(disagree[:limit]),
        "disagree_count": disagree.count(),
    }


def neural_queue_ids() -> set[int]:
    """Problems the latest experiment's extractors have something for a labeller about."""
    experiment = neural_experiment_latest_done()
    if experiment is None:
        return set()
    return set(experiment.suggestions.filter(SUGGESTS_FOR_UNLABELLED | DISAGREES).values_list("problem_id", flat=True))


def neural_for_problem(problem: Problem) -> list[tuple[str, float]]:
    """(slug, probability) the latest experiment's extractors find in this problem."""
    experiment = neural_experiment_latest_done()
    if experiment is None:
        return []
    qs = experiment.suggestions.filter(problem=problem, predicted=True).order_by("-probability")
    return list(qs.values_list("concept__slug", "probability"))


def neural_results(experiment: Any) -> dict[str, Any]:
    """An experiment's results with schemes and concepts in the order asked for (jsonb keeps no key order)."""
    results = dict(experiment.results or {})
    if not results:
        return results
    schemes = results.get("schemes", {})
    concepts = [s for s in experiment.concepts if s in results.get("concepts", {})]
    results["concepts"] = {s: results["concepts"][s] for s in concepts}
    results["best"] = {s: results["best"][s] for s in concepts if s in results.get("best", {})}
    results["schemes"] = {
        key: {**schemes[key], "concepts": {s: schemes[key]["concepts"][s] for s in concepts}}
        for key in experiment.schemes
        if key in schemes
    }
    return results
