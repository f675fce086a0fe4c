"""Rule-based concept extraction: the abstraction step of Prob2Vec. Pure: no Django imports.

A rule maps a concept slug to a pattern in Python `re` syntax. Rules are matched with ASCII
character classes (`\\w` is `[A-Za-z0-9_]`), the semantics RE2 and Python's `re.ASCII` share,
so both engines give identical answers.

Speed and safety: every pattern RE2 accepts goes into one `re2.Set`, which finds all matching
rules of a text in a single linear-time pass, so no pattern can backtrack catastrophically. The
few patterns RE2 refuses (backreferences, lookaround) run on the `regex` module under a hard
per-text time limit; a timeout is reported, never waited out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import re2
import regex

MAX_PATTERN_LENGTH = 2000
DEFAULT_TIMEOUT = 0.25  # seconds per text for a fallback (backtracking) pattern

ENGINE_RE2 = "re2"
ENGINE_BACKTRACKING = "regex"


@dataclass(frozen=True)
class Rule:
    slug: str
    pattern: str
    ignore_case: bool = True


class RuleError(ValueError):
    """A pattern that cannot be used, with the engine's message and the position (0-based) if known."""

    def __init__(self, message: str, position: int | None = None, slug: str = ""):
        self.message = message
        self.position = position
        self.slug = slug
        where = f" at position {position}" if position is not None else ""
        prefix = f"{slug}: " if slug else ""
        super().__init__(f"{prefix}{message}{where}")


class RuleTimeout(RuntimeError):
    def __init__(self, slug: str, text_index: int, seconds: float):
        self.slug, self.text_index, self.seconds = slug, text_index, seconds
        super().__init__(
            f"rule {slug!r} took longer than {seconds:g}s on text {text_index} (catastrophic backtracking?)"
        )


def _re2_options(max_mem: int = 64 << 20) -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return options


# The set's lazily built DFA caches states across texts; with a small budget it keeps throwing its
# cache away and falls to a few thousand problems/s. Memory is only taken as states are built.
SET_MAX_MEM = 1 << 30


def _flagged(pattern: str, ignore_case: bool) -> str:
    return f"(?i:{pattern})" if ignore_case else f"(?:{pattern})"


def check_pattern(pattern: str, ignore_case: bool = True) -> str:
    """Validate a pattern; return the engine that will run it. Raise RuleError if unusable."""
    if not pattern or not pattern.strip():
        raise RuleError("the pattern is empty")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RuleError(f"the pattern is longer than {MAX_PATTERN_LENGTH} characters")
    try:
        compiled = re.compile(pattern, re.ASCII | (re.IGNORECASE if ignore_case else 0))
    except re.error as exc:
        raise RuleError(exc.msg, exc.pos) from None
    if compiled.match(""):
        # A pattern matching the empty string matches every problem: surely a mistake (e.g. `a|`).
        raise RuleError("the pattern matches the empty string, so it would match every problem")
    try:
        re2.compile(_flagged(pattern, ignore_case), _re2_options())
        return ENGINE_RE2
    except re2.error:
        return ENGINE_BACKTRACKING


@dataclass
class CompiledRules:
    """All enabled rules, compiled once. Build with `compile_rules`."""

    slugs: list[str]
    engines: dict[str, str]
    re2_set: re2.Set | None
    set_slugs: list[str]
    single: dict[str, object] = field(default_factory=dict)  # slug -> compiled pattern for spans
    fallback: list[tuple[str, object]] = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT


def _compile_single(rule: Rule, engine: str) -> object:
    if engine == ENGINE_RE2:
        return re2.compile(_flagged(rule.pattern, rule.ignore_case), _re2_options())
    flags = regex.ASCII | regex.V0 | (regex.IGNORECASE if rule.ignore_case else 0)
    return regex.compile(rule.pattern, flags)


def compile_rules(rules: Iterable[Rule], timeout: float = DEFAULT_TIMEOUT) -> CompiledRules:
    """Compile rules; raise RuleError (naming the rule) for the first unusable one."""
    rules = list(rules)
    engines: dict[str, str] = {}
    single: dict[str, object] = {}
    set_slugs: list[str] = []
    fallback: list[tuple[str, object]] = []
    re2_set = re2.Set.SearchSet(_re2_options(SET_MAX_MEM))
    for rule in rules:
        try:
            engine = check_pattern(rule.pattern, rule.ignore_case)
        except RuleError as exc:
            raise RuleError(exc.message, exc.position, slug=rule.slug) from None
        engines[rule.slug] = engine
        single[rule.slug] = _compile_single(rule, engine)
        if engine == ENGINE_RE2:
            if re2_set.Add(_flagged(rule.pattern, rule.ignore_case)) < 0:
                raise RuleError("RE2 refused the pattern in a set", slug=rule.slug)
            set_slugs.append(rule.slug)
        else:
            fallback.append((rule.slug, single[rule.slug]))
    if set_slugs:
        re2_set.Compile()
    return CompiledRules(
        slugs=[r.slug for r in rules],
        engines=engines,
        re2_set=re2_set if set_slugs else None,
        set_slugs=set_slugs,
        single=single,
        fallback=fallback,
        timeout=timeout,
    )


def extract(text: str, compiled: CompiledRules, text_index: int = 0) -> set[str]:
    """The set of concept slugs whose rule matches `text`. Raises RuleTimeout for a runaway fallback rule."""
    found: set[str] = set()
    if compiled.re2_set is not None:
        found.update(compiled.set_slugs[i] for i in compiled.re2_set.Match(text) or ())
    for slug, pattern in compiled.fallback:
        try:
            if pattern.search(text, timeout=compiled.timeout):  # type: ignore[attr-defined]
                found.add(slug)
        except TimeoutError:
            raise RuleTimeout(slug, text_index, compiled.timeout) from None
    return found


def extract_many(texts: Sequence[str], compiled: CompiledRules) -> list[set[str]]:
    return [extract(text, compiled, i) for i, text in enumerate(texts)]


def match_spans(text: str, compiled: CompiledRules, slug: str, limit: int = 50) -> list[tuple[int, int]]:
    """Character spans where the rule of `slug` matches `text` (for highlighting)."""
    pattern = compiled.single[slug]
    spans = []
    kwargs = {"timeout": compiled.timeout} if compiled.engines[slug] == ENGINE_BACKTRACKING else {}
    try:
        for m in pattern.finditer(text, **kwargs):  # type: ignore[attr-defined]
            if m.end() > m.start():
                spans.append(m.span())
            if len(spans) >= limit:
                break
    except TimeoutError:
        raise RuleTimeout(slug, 0, compiled.timeout) from None
    return spans


@dataclass(frozen=True)
class PreviewMatch:
    index: int
    spans: list[tuple[int, int]]


def matching(pattern: str, ignore_case: bool, texts: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> tuple[CompiledRules, list[int]]:
    """Indices of the texts one pattern matches, and the compiled pattern (slug "preview") for spans."""
    compiled = compile_rules([Rule("preview", pattern, ignore_case)], timeout=timeout)
    if compiled.re2_set is not None:
        # A one-rule set: its Match is a single C call, cheaper than the re2 module's search wrapper.
        match = compiled.re2_set.Match
        return compiled, [i for i, text in enumerate(texts) if match(text)]
    return compiled, [i for i, text in enumerate(texts) if extract(text, compiled, i)]


def preview(pattern: str, ignore_case: bool, texts: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> list[PreviewMatch]:
    """Which of `texts` one pattern matches, with spans. Raises RuleError / RuleTimeout."""
    compiled, found = matching(pattern, ignore_case, texts, timeout)
    return [PreviewMatch(i, match_spans(texts[i], compiled, "preview")) for i in found]


@dataclass(frozen=True)
class ConceptStats:
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def fp_rate(self) -> float | None:
        """FP / (FP + TN): the share of problems without the concept that the rule flags."""
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else None

    @property
    def fn_rate(self) -> float | None:
        """FN / (FN + TP): the share of problems with the concept that the rule misses."""
        return self.fn / (self.fn + self.tp) if self.fn + self.tp else None

    def as_dict(self) -> dict[str, float | int | None]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn, "fp_rate": self.fp_rate, "fn_rate": self.fn_rate}


@dataclass(frozen=True)
class Evaluation:
    problems: int
    concepts: dict[str, ConceptStats]

    def _mean(self, values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return sum(present) / len(present) if present else None

    @property
    def fp_rate(self) -> float | None:
        """Average over concepts (the paper's figure); concepts with no negatives are left out."""
        return self._mean([s.fp_rate for s in self.concepts.values()])

    @property
    def fn_rate(self) -> float | None:
        return self._mean([s.fn_rate for s in self.concepts.values()])

    def as_dict(self) -> dict[str, object]:
        return {
            "problems": self.problems,
            "average": {"fp_rate": self.fp_rate, "fn_rate": self.fn_rate},
            "concepts": {slug: s.as_dict() for slug, s in sorted(self.concepts.items())},
        }


def evaluate(predicted: Sequence[set[str]], truth: Sequence[set[str]], concepts: Iterable[str]) -> Evaluation:
    """Per-concept TP/FP/FN/TN of predicted concept sets against ground-truth sets, problem by problem."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} problems")
    n = len(truth)
    stats = {}
    for slug in concepts:
        tp = sum(1 for p, t in zip(predicted, truth) if slug in p and slug in t)
        fp = sum(1 for p, t in zip(predicted, truth) if slug in p and slug not in t)
        fn = sum(1 for p, t in zip(predicted, truth) if slug not in p and slug in t)
        stats[slug] = ConceptStats(tp=tp, fp=fp, fn=fn, tn=n - tp - fp - fn)
    return Evaluation(problems=n, concepts=stats)
