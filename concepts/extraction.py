"""Rule-based concept extraction: the abstraction step of Prob2Vec. Pure: no Django imports.

A rule maps a concept slug to a pattern in Python `re` syntax. Rules are matched with ASCII
character classes (`\\w` is `[A-Za-z0-9_]`), the semantics RE2 and Python's `re.ASCII` share,
so both engines give identical answers.

Speed and safety: every pattern RE2 accepts is matched by RE2, in linear time, so no pattern can
backtrack catastrophically. The few patterns RE2 refuses (backreferences, lookaround) run on the
`regex` module under a hard per-text time limit; a timeout is reported, never waited out.

Each text is read by a few `re2.Set`s, not one. A rule is split at its top-level `|` into
branches (it matches a text exactly when one of its branches does). The branches without a gap
join one set, one entry per rule. A gap is a repetition that runs across words, like the
same-sentence `[^.?]*` in `\\bwithout\\b[^.?]*\\breplacement\\b`: in a set with everything
else it keeps a DFA state alive to the end of its sentence for every combination of such branches
under way, and the DFA's states (each built on first use) multiply. So the branches with a gap are
matched apart, in `GAPPED_SETS` small sets of their own. Results are those of matching each whole
pattern, the same whatever the split; a pattern the scanner below is not sure of is matched whole,
with the branches that have a gap.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import re2
import regex

# A rule's longest pattern. It was 2,000 characters until stop 29, when three starter rules
# (`binomial-distribution`, `nchoosek`, `counting-principle`) stood within 50 of it and 8 of 18
# authors of the new-book passes ran into it: a TA could not append a branch to the rules that most
# needed one. RE2 matches in linear time whatever the length; what a longer rule costs is measured
# by `benchmarks/extract.py` (the live preview of a rule 100 characters short of the limit). Past about
# 4,000 characters that preview no longer answers within its 100 ms on a 10,000-problem bank: the
# cold DFA of a new pattern is built on every keystroke (stop 29: 9,000 characters took 170 ms at p95).
MAX_PATTERN_LENGTH = 4_000
DEFAULT_TIMEOUT = 0.25  # seconds per text for a fallback (backtracking) pattern
# Seconds a fallback pattern may spend over all the texts of one pass (a preview, a save's check, an
# extraction run): under the per-text limit, a pattern that takes 0.08 s on every problem would still
# take 22 s over 286 problems, and hours over a large bank.
DEFAULT_BUDGET = 2.0

ENGINE_RE2 = "re2"
ENGINE_BACKTRACKING = "regex"


# What the rules read of a problem with a solution: its statement, then this heading and the solution
# (README, "Rules read the solution"). A heading, not a bare blank line, so that the rule preview and
# the report's lists show where the solution starts; no starter rule matches it.
SOLUTION_HEADING = "Solution:"


def rule_text(text: str, solution: str | None = None) -> str:
    """The text the rules (and the hybrid source's learned half) read of one problem: the statement,
    then, where the problem has a solution, ``SOLUTION_HEADING`` and the solution. A labeller reads the
    solution too (LABELLING.md), and a solution often names what the statement leaves to the solver."""
    if solution is None or not solution.strip():
        return text
    return f"{text}\n\n{SOLUTION_HEADING} {solution}"


_SOLUTION_START = f"\n\n{SOLUTION_HEADING} "


def statement_of(text: str) -> str:
    """The statement of a rule text (``rule_text``): everything before the solution's heading. No
    problem of the public collections has that heading in its statement."""
    return text.partition(_SOLUTION_START)[0]


@dataclass(frozen=True)
class Rule:
    """A concept's rule. ``pattern`` is matched in everything the rules read of a problem (its
    statement and solution); ``statement_pattern`` in the statement alone: the branches whose
    footprint is a statement's, and in a solution is only the working (``\\binom{10}{3} = 120``
    computed, not asked for). README "Where a branch reads". Either may be empty, not both."""

    slug: str
    pattern: str
    ignore_case: bool = True
    statement_pattern: str = ""

    @classmethod
    def of(cls, slug: str, spec: dict) -> "Rule":
        """The rule of a spec as ``rules.json``'s loader and the API give it: {pattern, ignore_case[, statement_pattern]}."""
        return cls(slug, str(spec.get("pattern") or ""), bool(spec.get("ignore_case", True)), str(spec.get("statement_pattern") or ""))


class RuleError(ValueError):
    """A pattern that cannot be used, with the engine's message and the position (0-based) if known."""

    def __init__(self, message: str, position: int | None = None, slug: str = "", in_statement: bool = False):
        self.message = message
        self.position = position
        self.slug = slug
        self.in_statement = in_statement  # the error is in the rule's statement-only pattern
        where = f" at position {position}" if position is not None else ""
        prefix = f"{slug}: " if slug else ""
        super().__init__(f"{prefix}{message}{where}")

    def in_statement_pattern(self) -> "RuleError":
        """The same error, found in a rule's statement-only pattern: its message says so."""
        return RuleError(f"statement-only pattern: {self.message}", self.position, slug=self.slug, in_statement=True)


class RuleTimeout(RuntimeError):
    def __init__(self, slug: str, text_index: int, seconds: float, what: str = "text"):
        self.slug, self.text_index, self.seconds = slug, text_index, seconds
        super().__init__(
            f"rule {slug!r} took longer than {seconds:g}s on {what} {text_index} (catastrophic backtracking?)"
        )


class RuleBudgetExceeded(RuleTimeout):
    """A fallback rule used up its time budget over the texts of one pass."""

    def __init__(self, slug: str, texts_done: int, budget: float):
        self.slug, self.text_index, self.seconds, self.texts_done = slug, texts_done, budget, texts_done
        RuntimeError.__init__(
            self,
            f"rule {slug!r} used up its time budget of {budget:g}s over the bank after {texts_done} problem(s): "
            "a pattern RE2 cannot run (backreferences, lookaround) backtracks, and this one is too slow; simplify it",
        )


def _re2_options(max_mem: int = 64 << 20) -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return options


# The set's lazily built DFA caches states across texts; with a small budget it keeps throwing its
# cache away and falls to a few thousand problems/s. Memory is only taken as states are built.
SET_MAX_MEM = 1 << 30
GAPPED_SETS = 2  # sets that the rules' branches with a gap are spread over
# Sets that the branches without a gap are spread over. A set's lazy DFA builds a state for each new
# combination of partial matches it meets; with 1,500 branches in one set those combinations multiply
# and building states costs more than reading the text (100,000 problems: 1.07 s in one set, 0.95 s
# in two; three or more add more reading than they save).
MAIN_SETS = 2


def _flagged(pattern: str, ignore_case: bool) -> str:
    return f"(?i:{pattern})" if ignore_case else f"(?:{pattern})"


def check_pattern(pattern: str, ignore_case: bool = True) -> str:
    """Validate a pattern; return the engine that will run it. Raise RuleError if unusable."""
    return _checked(pattern, ignore_case)


def check_rule(pattern: str, statement_pattern: str = "", ignore_case: bool = True) -> set[str]:
    """Validate a rule's two patterns (either may be empty, not both); the engines that will run
    them. An error in the statement-only pattern says so."""
    if not pattern and not statement_pattern:
        raise RuleError("the pattern is empty")
    engines = {check_pattern(pattern, ignore_case)} if pattern else set()
    if statement_pattern:
        try:
            engines.add(check_pattern(statement_pattern, ignore_case))
        except RuleError as exc:
            raise exc.in_statement_pattern() from None
    return engines


@functools.lru_cache(maxsize=256)
def _checked(pattern: str, ignore_case: bool) -> str:
    # Cached: a preview checks the pattern and then matches it (which checks it again), and an
    # unchanged pattern is checked again on each save, preview and extraction run. Errors are not cached.
    if not pattern or not pattern.strip():
        raise RuleError("the pattern is empty")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RuleError(f"the pattern is longer than {MAX_PATTERN_LENGTH:,} characters")
    if _matches_empty(pattern, ignore_case):
        # A pattern matching the empty string matches every problem: surely a mistake (e.g. `a|`).
        raise RuleError("the pattern matches the empty string, so it would match every problem")
    try:
        _re2_compiled(pattern, ignore_case)
        return ENGINE_RE2
    except re2.error:
        return ENGINE_BACKTRACKING


# Where a pattern's top-level branches cannot be checked one by one: a flag group that applies to the
# whole pattern, and anything naming or numbering a group (a backreference, a conditional, a named
# group, whose name two branches may share), which only means something in the whole.
_CHECK_WHOLE = re.compile(r"\\[1-9]|\(\?P[<=]|\(\?\(|\(\?[aiLmsux]+\)")


def _matches_empty(pattern: str, ignore_case: bool) -> bool:
    """Whether the pattern (Python `re` syntax) matches the empty string; RuleError where `re` refuses it.

    The editor sends the whole pattern on every keystroke, and `re` takes 3-10 ms to compile one of
    1,000-4,000 characters, most of a preview's budget. Its branches are checked one by one instead,
    each compiled once (cached), so a keystroke compiles only the line it changed. A pattern compiles
    exactly when each of its top-level branches does, and matches the empty string exactly when one
    of them does, except where `_CHECK_WHOLE` finds something that spans branches.

    Where a branch is refused, the whole pattern is checked instead, for the whole pattern's answer:
    `re` reads the whole pattern before it compiles any of it, so a later branch's syntax error comes
    before an earlier one's compile error (`(?<=a+)x|*`: "nothing to repeat", not the look-behind's);
    and the scanner reads neither comments nor verbose mode, so a `|` in `(?#...)` or after a `#` of
    `(?x:...)` may look top-level to it and cut a branch `re` takes whole (`(?x:a#)\n|b#(\n)`)."""
    bars = _top_level_bars(pattern)
    if not bars or _CHECK_WHOLE.search(pattern):
        return _branch_matches_empty(pattern, ignore_case)
    empty, start = False, 0
    for end in [*bars, len(pattern)]:
        try:
            empty = _branch_matches_empty(pattern[start:end], ignore_case) or empty
        except RuleError:
            return _branch_matches_empty(pattern, ignore_case)
        start = end + 1
    return empty


@functools.lru_cache(maxsize=4096)
def _branch_matches_empty(branch: str, ignore_case: bool) -> bool:
    try:
        return re.compile(branch, re.ASCII | (re.IGNORECASE if ignore_case else 0)).match("") is not None
    except re.error as exc:
        raise RuleError(exc.msg, exc.pos) from None
    except (ValueError, OverflowError) as exc:  # `(?u)` against the rules' ASCII flag; `a{4294967296}`
        raise RuleError(str(exc)) from None


@functools.lru_cache(maxsize=8)
def _re2_compiled(pattern: str, ignore_case: bool) -> object:
    """The whole pattern compiled by RE2 (re2.error where RE2 refuses it): kept, so that a preview's check
    and its highlighting share one compile. Its groups do not capture: what it is used for needs only
    where a match starts and ends, which RE2 finds with its DFA, and a preview highlights 65 problems a
    keystroke with it (3,900 characters of rule: 49 -> 33 µs a problem). RE2 takes or refuses a pattern
    the same either way: group names are still read, and backreferences refused. Few are kept: each
    holds the DFA states its matching built (about 1.2 MB after highlighting the demo bank), and what
    a keystroke needs again is its own pattern, within the one request."""
    options = _re2_options()
    options.never_capture = True
    return re2.compile(_flagged(pattern, ignore_case), options)


# --- Splitting a rule into branches, with or without a gap ---------------------------------------
#
# Only the pattern's text is read, by a small scanner of Python `re` syntax. A top-level `|` splits
# a pattern into branches, and a rule matches a text exactly when one of its branches does, so the
# branches may be matched in different sets. Anything the scanner does not fully understand raises
# _Unsure, and the pattern is then kept whole, as one branch counted as having a gap: matched whole
# in the small sets, where a gap it may hide cannot multiply the big set's states.

_QUANTIFIER = re.compile(r"[*+?]|\{(\d+)(,(\d*))?\}")
# Groups the scanner may look into: plain, non-capturing, named, and scoped flags without `x`
# (verbose mode would make whitespace and `#` mean something else). Lookaround, comments,
# conditionals, atomic groups and global flags such as `(?i)` are not matched: unsure.
_GROUP_OPENING = re.compile(r"\((?:\?(?:P<\w+>|[aiLmsu]*(?:-[ims]+)?:))?")
# A repetition runs across words (a gap) when it can match all of one of these.
_ACROSS_WORDS = ("ab cd", " ab cd", "ab cd ")


class _Unsure(Exception):
    pass


@dataclass(frozen=True)
class _Item:
    """One item of a concatenation: an atom and its quantifier."""

    atom: str
    quantifier: str
    inner: str | None = None  # for a group: what is between its opening and its `)`

    @property
    def repeated(self) -> bool:
        q = _QUANTIFIER.match(self.quantifier)
        if not q or q.group(0) == "?":
            return False
        if q.group(0) in ("*", "+") or (q.group(2) and not q.group(3)):
            return True
        return int(q.group(3) or q.group(1)) > 1


def _end_of_escape(p: str, i: int) -> int:
    if i + 1 >= len(p):
        raise _Unsure("a trailing backslash")
    c = p[i + 1]
    if c in "uUNpPQE":
        raise _Unsure(f"the escape \\{c}")
    if c == "x":
        return i + 4
    if c.isdigit():
        j = i + 2
        while j < min(len(p), i + 4) and p[j].isdigit():
            j += 1
        return j
    return i + 2


def _end_of_class(p: str, i: int) -> int:
    j = i + 1
    j += p[j : j + 1] == "^"
    j += p[j : j + 1] == "]"
    while j < len(p) and p[j] != "]":
        if p[j] == "\\":
            j = _end_of_escape(p, j)
        elif p[j] == "[":
            raise _Unsure("a [ inside a class")  # POSIX classes differ between the engines
        else:
            j += 1
    if j >= len(p):
        raise _Unsure("an unterminated class")
    return j + 1


def _end_of_group(p: str, i: int) -> int:
    depth, j = 0, i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j = _end_of_escape(p, j)
            continue
        if c == "[":
            j = _end_of_class(p, j)
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        j += 1
        if depth == 0:
            return j
    raise _Unsure("an unbalanced group")


def _alternatives(p: str) -> list[tuple[str, list[_Item]]]:
    """The top-level alternatives of `p`: each one's text and the items of its concatenation."""
    out: list[tuple[int, list[_Item]]] = [(0, [])]
    ends: list[int] = []
    i = 0
    while i < len(p):
        c, inner = p[i], None
        if c == "|":
            ends.append(i)
            out.append((i + 1, []))
            i += 1
            continue
        if c == "\\":
            j = _end_of_escape(p, i)
        elif c == "[":
            j = _end_of_class(p, i)
        elif c == "(":
            m = _GROUP_OPENING.match(p, i)
            if m is None or (m.group(0) == "(" and p[i + 1 : i + 2] == "?"):
                raise _Unsure(f"the group at {i}")
            j = _end_of_group(p, i)
            inner = p[m.end() : j - 1]
        elif c in ")*+?" or (c == "{" and _QUANTIFIER.match(p, i)):
            raise _Unsure(f"{c!r} at {i}")
        else:
            j = i + 1  # a literal, `.`, `^`, `$`, or a brace that is no quantifier
        q = _QUANTIFIER.match(p, j)
        k = q.end() if q else j
        if q and p[k : k + 1] == "?":
            k += 1  # lazy: matches the same texts
        if q and (p[k : k + 1] == "+" or _QUANTIFIER.match(p, k)):
            raise _Unsure(f"the quantifier at {j}")
        out[-1][1].append(_Item(p[i:j], p[j:k], inner))
        i = k
    ends.append(len(p))
    return [(p[start:end], items) for (start, items), end in zip(out, ends)]


def _runs_across_words(atom: str) -> bool:
    try:
        repeated = re.compile(f"(?:{atom})*", re.ASCII)
    except re.error:
        return True
    return any(repeated.fullmatch(s) for s in _ACROSS_WORDS)


def _has_gap(items: list[_Item]) -> bool:
    """Whether some repetition, here or inside a group at any depth, can run across words:
    `[^.?]*`, `(?:[^.?]|\\.\\d)*`, `[\\w ]+`, `( \\w+)*`; not `\\s*`, `\\w+` or `\\d+`."""
    for item in items:
        if item.repeated and _runs_across_words(item.atom):
            return True
        if item.inner is not None and any(_has_gap(alt) for _, alt in _alternatives(item.inner)):
            return True
    return False


@dataclass(frozen=True)
class Branch:
    """A top-level alternative of a rule, and whether it has a gap (see _has_gap)."""

    text: str
    gapped: bool


def split_branches(pattern: str) -> list[Branch]:
    """A pattern's top-level alternatives, each marked gapped or not; the whole pattern as one
    gapped branch when the scanner is not sure of it."""
    try:
        return [Branch(text, _has_gap(items)) for text, items in _alternatives(pattern)]
    except (_Unsure, re.error, RecursionError):
        return [Branch(pattern, True)]


# --- The editor's form of a pattern: one branch per line ------------------------------------------
#
# A rule written for real text has dozens of branches; on one line it is a wall of 2,000 characters
# nobody can read or diff. The editor shows each top-level branch on a line of its own and joins
# the lines with `|` on the way back. What is stored, matched and exchanged (API, rules.json) stays
# the one-line pattern.


@functools.lru_cache(maxsize=256)
def _top_level_bars(pattern: str) -> tuple[int, ...] | None:
    """Where the pattern's top-level `|`s are; None if its brackets do not balance. Only escapes,
    classes and parentheses are read, so this works for any syntax, lookaround included. Cached: a
    preview splits the pattern it is sent several times (checking, matching, each line's share)."""
    bars, depth, i = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = i + 1
            j += pattern[j : j + 1] == "^"
            j += pattern[j : j + 1] == "]"
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            if j >= len(pattern):
                return None
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif c == "|" and depth == 0:
            bars.append(i)
        i += 1
    return tuple(bars) if depth == 0 else None


def top_level_branches(pattern: str) -> list[str]:
    """The pattern's top-level alternatives as written (joined with `|` they are the pattern); the
    whole pattern as one when its brackets do not balance."""
    bars = _top_level_bars(pattern)
    if not bars:
        return [pattern]
    starts, ends = [0] + [b + 1 for b in bars], [*bars, len(pattern)]
    return [pattern[s:e] for s, e in zip(starts, ends)]


def pattern_lines(pattern: str) -> str:
    """The pattern as the editor shows it: its top-level branches one per line, so that
    `join_lines(pattern_lines(p)) == p`. A pattern that would not come back the same (an empty
    branch, a line break of its own, brackets that do not balance) is shown as it is."""
    branches = top_level_branches(pattern)
    if "\n" in pattern or "\r" in pattern or any(not branch.strip() for branch in branches):
        return pattern
    return "\n".join(branches)


def _typed_lines(text: str) -> list[tuple[int, str]]:
    """The editor's non-blank lines with their line numbers (from 1), line endings removed."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [(number, line) for number, line in enumerate(lines, 1) if line.strip()]


def join_lines(text: str) -> str:
    """The pattern typed in the editor: its non-blank lines, each a branch, joined with `|`.
    A one-line pattern comes back unchanged (a literal line break in a rule is written `\\n`)."""
    return "|".join(line for _, line in _typed_lines(text))


def where_in_lines(text: str, position: int) -> tuple[int, int] | None:
    """The (line, column) from 1 and 0 of a position in `join_lines(text)`, for errors; None when
    the text is one line (the position then reads as it is)."""
    lines = _typed_lines(text)
    if len(lines) < 2:
        return None
    start = 0
    for number, line in lines:
        if position <= start + len(line):
            return number, position - start
        start += len(line) + 1  # the `|` that joined the next line
    return lines[-1][0], len(lines[-1][1])


def check_lines(text: str, ignore_case: bool = True) -> None:
    """Raise RuleError naming the line when a line typed in the editor is not a pattern on its own
    (`(a` on one line and `b)` on the next would otherwise join into one group, not two branches)."""
    lines = _typed_lines(text)
    if len(lines) < 2:
        return
    for number, line in lines:
        try:
            re.compile(line, re.ASCII | (re.IGNORECASE if ignore_case else 0))
        except re.error as exc:
            raise RuleError(f"line {number}, column {(exc.pos or 0) + 1}: {exc.msg}") from None
        if re.compile(line, re.ASCII).match(""):
            raise RuleError(f"line {number}: this branch matches the empty string, so the rule would match every problem")


# --- Compiling and matching ---------------------------------------------------------------------


@dataclass
class CompiledRules:
    """All enabled rules, compiled once. Build with `compile_rules`."""

    slugs: list[str]
    engines: dict[str, str]
    set_slugs: list[str]  # the rules RE2 runs
    single: dict[str, object] = field(default_factory=dict)  # slug -> compiled pattern for spans
    fallback: list[tuple[str, object]] = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    budget: float | None = DEFAULT_BUDGET  # seconds per fallback rule over everything this object matches
    # (set, entry -> slug): each RE2 rule's branches without a gap, one entry per rule, over MAIN_SETS sets
    plain_sets: list[tuple[re2.Set, list[str]]] = field(default_factory=list)
    gapped_sets: list[tuple[re2.Set, list[str]]] = field(default_factory=list)  # branches with a gap
    # The rules' statement-only patterns (Rule.statement_pattern), compiled alike; None: there are none.
    statement: "CompiledRules | None" = None

    def __post_init__(self) -> None:
        sets = self.plain_sets + self.gapped_sets
        # Each set's Match, given the text's UTF-8 once for all sets, with its entry -> slug lookup.
        self._sets = [(_raw_match(s), slugs.__getitem__) for s, slugs in sets]
        self._spent: dict[str, float] = {}  # seconds each fallback rule has used of its budget
        self._texts: dict[str, int] = {}  # texts each fallback rule has read

    def run_fallback(self, slug: str, call: Callable[[float], object], text_index: int) -> object:
        """`call(timeout)` for the fallback rule `slug`, within the per-text limit and what is left of
        the rule's budget; RuleTimeout or RuleBudgetExceeded when it runs out."""
        spent = self._spent.get(slug, 0.0)
        left = None if self.budget is None else self.budget - spent
        if left is not None and left <= 0:
            raise RuleBudgetExceeded(slug, self._texts.get(slug, 0), self.budget or 0.0)
        timeout = self.timeout if left is None else min(self.timeout, left)
        started = time.perf_counter()
        try:
            return call(timeout)
        except TimeoutError:
            if left is not None and left <= self.timeout:
                raise RuleBudgetExceeded(slug, self._texts.get(slug, 0), self.budget or 0.0) from None
            raise RuleTimeout(slug, text_index, self.timeout) from None
        finally:
            self._spent[slug] = spent + time.perf_counter() - started
            self._texts[slug] = self._texts.get(slug, 0) + 1


def _raw_match(compiled: re2.Set) -> object:
    """The set's Match as a bare C call (bytes in, list of entries out); the wrapper's otherwise."""
    inner = getattr(compiled, "_set", None)
    return inner.Match if inner is not None and hasattr(inner, "Match") else compiled.Match


def _compile_single(rule: Rule, engine: str) -> object:
    if engine == ENGINE_RE2:
        return _re2_compiled(rule.pattern, rule.ignore_case)
    flags = regex.ASCII | regex.V0 | (regex.IGNORECASE if rule.ignore_case else 0)
    return regex.compile(rule.pattern, flags)


def _set_of(entries: list[tuple[str, str]], max_mem: int = SET_MAX_MEM) -> re2.Set:
    """A search set of (slug, pattern) entries, in order."""
    compiled = re2.Set.SearchSet(_re2_options(max_mem))
    for slug, pattern in entries:
        try:
            compiled.Add(pattern)
        except re2.error:
            raise RuleError("RE2 refused the pattern in a set", slug=slug) from None
    compiled.Compile()
    return compiled


def compile_rules(
    rules: Iterable[Rule], timeout: float = DEFAULT_TIMEOUT, budget: float | None = DEFAULT_BUDGET, *, spread: bool = True
) -> CompiledRules:
    """Compile rules; raise RuleError (naming the rule) for the first unusable one.

    A fallback rule may take `timeout` seconds on one text and `budget` seconds over all the texts the
    returned object matches (None: no budget); compile afresh for each pass over the bank. With
    ``spread`` False every RE2 rule goes whole into one set: for a few dozen branches one set reads
    faster than several, each of which costs a call per text."""
    rules = list(rules)
    # The statement-only patterns: compiled as rules of their own, matched in the statements. They are
    # few (42 branches of 31 starter rules), so in one set: at stop 42 `benchmarks/extract.py --solutions`
    # took 1.84-1.92 s against 2.15-2.16 s with them in three sets (min of 3, run in turn).
    statement_rules = [Rule(r.slug, r.statement_pattern, r.ignore_case) for r in rules if r.statement_pattern]
    try:
        statement = compile_rules(statement_rules, timeout, budget, spread=False) if statement_rules else None
    except RuleError as exc:
        raise exc.in_statement_pattern() from None
    engines: dict[str, str] = {}
    single: dict[str, object] = {}
    set_slugs: list[str] = []
    fallback: list[tuple[str, object]] = []
    plain: list[tuple[str, str]] = []  # (slug, its branches without a gap, as one pattern)
    gapped: list[tuple[str, str]] = []  # (slug, its branches with a gap, as one pattern)
    for rule in rules:
        if not rule.pattern and rule.statement_pattern:
            continue  # a rule whose every branch reads the statement alone
        try:
            engine = check_pattern(rule.pattern, rule.ignore_case)
        except RuleError as exc:
            raise RuleError(exc.message, exc.position, slug=rule.slug) from None
        engines[rule.slug] = engine
        single[rule.slug] = _compile_single(rule, engine)
        if engine != ENGINE_RE2:
            fallback.append((rule.slug, single[rule.slug]))
            continue
        set_slugs.append(rule.slug)
        if not spread:  # the whole pattern, into the one set built below (gapped_sets, whatever it holds)
            gapped.append((rule.slug, _flagged(rule.pattern, rule.ignore_case)))
            continue
        branches = split_branches(rule.pattern)
        # The branches of each kind, rejoined: the two parts together are the whole pattern.
        for entries, kind in ((plain, False), (gapped, True)):
            alternatives = [b.text for b in branches if b.gapped == kind]
            if alternatives:
                entries.append((rule.slug, _flagged("|".join(alternatives), rule.ignore_case)))
    # The rules' branches with a gap, in a few sets of their own: in one set with everything else,
    # or all together, the DFA's states multiply (each gap keeps a state alive to its sentence's end).
    # The branches without one are spread over MAIN_SETS sets for the same reason.
    def sets_of(entries: list[tuple[str, str]], count: int) -> list[tuple[re2.Set, list[str]]]:
        groups = [entries[i::count] for i in range(count)]
        return [(_set_of(group), [slug for slug, _ in group]) for group in groups if group]

    return CompiledRules(
        slugs=[r.slug for r in rules],
        engines=engines,
        set_slugs=set_slugs,
        single=single,
        fallback=fallback,
        timeout=timeout,
        budget=budget,
        plain_sets=sets_of(plain, MAIN_SETS),
        gapped_sets=sets_of(gapped, GAPPED_SETS if spread else 1),
        statement=statement,
    )


def _fallbacks(text: str, compiled: CompiledRules, text_index: int, found: set[str]) -> None:
    for slug, pattern in compiled.fallback:
        search = pattern.search  # type: ignore[attr-defined]
        if compiled.run_fallback(slug, lambda timeout: search(text, timeout=timeout), text_index):
            found.add(slug)


def extract(text: str, compiled: CompiledRules, text_index: int = 0) -> set[str]:
    """The set of concept slugs whose rule matches `text`. Raises RuleTimeout for a runaway fallback rule."""
    found: set[str] = set()
    if compiled._sets:
        data = text.encode()  # once, for every set
        for match, slug_of in compiled._sets:
            hits = match(data)
            if hits:
                found.update(map(slug_of, hits))
    _fallbacks(text, compiled, text_index, found)
    if compiled.statement is not None:
        found |= extract(statement_of(text), compiled.statement, text_index)
    return found


def extract_many(texts: Sequence[str], compiled: CompiledRules) -> list[set[str]]:
    """`extract` of each text, with the same results, faster over many texts: each set runs over
    all of them in turn, one C call a text. (Batches of 2,048 to 65,536 texts were slower, not
    faster: 0.83-0.90 s against 0.82 s for the demo rules over 100,000 problems.)"""
    found_all: list[set[str]] = [set() for _ in texts]
    if compiled._sets:
        datas = [text.encode() for text in texts]
        for match, slug_of in compiled._sets:
            for found, hits in zip(found_all, map(match, datas)):
                if hits:
                    found.update(map(slug_of, hits))
    if compiled.fallback:
        for i, text in enumerate(texts):
            _fallbacks(text, compiled, i, found_all[i])
    if compiled.statement is not None:
        for found, in_statement in zip(found_all, extract_many([statement_of(text) for text in texts], compiled.statement)):
            found |= in_statement
    return found_all


def first_matches(pattern: str, ignore_case: bool, texts: Sequence[str]) -> list[tuple[int, int] | None]:
    """Per text, the span of the first match of an RE2 pattern (None: no match), compiled once.
    Raises RuleError for a pattern RE2 cannot run alone, which would backtrack: this is for short
    searches, as highlighting one line of a rule in a few problems, with no time limit to keep."""
    if check_pattern(pattern, ignore_case) != ENGINE_RE2:
        raise RuleError("not an RE2 pattern")
    search = _compile_single(Rule("line", pattern, ignore_case), ENGINE_RE2).search  # type: ignore[attr-defined]
    return [found.span() if found else None for found in map(search, texts)]


def match_spans(text: str, compiled: CompiledRules, slug: str, limit: int = 50) -> list[tuple[int, int]]:
    """Character spans where the rule of `slug` matches `text` (for highlighting): its pattern's
    anywhere, its statement-only pattern's in the statement (the same offsets: the statement starts
    the text)."""
    spans = _spans(text, compiled, slug, limit) if slug in compiled.single else []
    if compiled.statement is not None and slug in compiled.statement.single:
        spans = sorted(set(spans) | set(_spans(statement_of(text), compiled.statement, slug, limit)))[:limit]
    return spans


def _spans(text: str, compiled: CompiledRules, slug: str, limit: int) -> list[tuple[int, int]]:
    pattern = compiled.single[slug]

    def spans_within(timeout: float | None) -> list[tuple[int, int]]:
        spans = []
        for m in pattern.finditer(text, **({} if timeout is None else {"timeout": timeout})):  # type: ignore[attr-defined]
            if m.end() > m.start():
                spans.append(m.span())
            if len(spans) >= limit:
                break
        return spans

    if compiled.engines[slug] == ENGINE_BACKTRACKING:
        return compiled.run_fallback(slug, spans_within, 0)  # type: ignore[return-value]
    return spans_within(None)


@dataclass(frozen=True)
class PreviewMatch:
    index: int
    spans: list[tuple[int, int]]


_LEADING_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


@dataclass
class BranchMatches:
    """What one rule's patterns match over some texts, and which of their top-level branches matched each.

    `by_branch[b]` lists the indices of the texts branch `b` matches. The branches of the pattern come
    first, then the last `statement_branches` of them, those of the statement-only pattern (matched in
    each text's statement). A pattern RE2 cannot take apart (leading flags, a branch it refuses alone)
    is one branch, the whole pattern; one on the backtracking engine has none."""

    compiled: CompiledRules  # the rule as slug "preview", for spans
    found: list[int]
    branches: list[str] = field(default_factory=list)
    by_branch: list[list[int]] = field(default_factory=list)
    statement_branches: int = 0
    # The RE2 set of the pattern's branches (bytes in, matching branches out); None when it has none.
    match: Callable[[bytes], object] | None = field(default=None, repr=False)

    def in_solution_only(self, texts: Sequence[str], hits: Sequence[Sequence[int]]) -> list[list[int]]:
        """For each branch, those of its ``hits`` (indices into ``texts``, the texts matched) where it
        matches only in the solution: not in the text before the solution's heading. The statements
        of the hit texts that have a solution are read once, by the set the texts were matched with
        (warm: nothing is compiled again); the statement-only box's branches are given none."""
        with_solution = sorted({i for found in hits for i in found if _SOLUTION_START in texts[i]})
        anywhere = len(self.branches) - self.statement_branches
        if not with_solution or self.match is None:
            return [[] for _ in hits]
        in_statement: list[set[int]] = [set() for _ in range(anywhere)]
        for i in with_solution:
            for b in self.match(statement_of(texts[i]).encode()) or ():  # type: ignore[attr-defined]
                in_statement[b].add(i)
        has_solution = set(with_solution)
        return [
            [i for i in found if i in has_solution and i not in in_statement[b]] if b < anywhere else []
            for b, found in enumerate(hits)
        ]


class BranchMemo:
    """Which of some texts each branch matched, kept from one preview to the next.

    The rule editor previews the whole pattern on every keystroke, and a keystroke changes one line
    (one branch) of it: the other lines' matches are read from here, and only the changed line is
    matched over the texts (a 3,900-character rule over 10,000 problems: one branch's pass instead of
    60 branches'). The texts must not change under a memo: its owner keeps one per version of its
    bank (concepts.selectors.BankTexts). Each text's UTF-8 is encoded once, too."""

    SIZE = 2048  # branches kept, the least recently used dropped first
    HITS = 2_000_000  # matches kept in all (4 bytes each), however broad the branches

    def __init__(self, texts: Sequence[str]):
        self.texts = texts
        self.data = [text.encode() for text in texts]
        self._found: OrderedDict[tuple[str, bool], array] = OrderedDict()
        self._hits = 0
        self._statements: BranchMemo | None = None
        # A threaded server previews for two TAs at once over one bank's memo: what is kept is read
        # and changed under the lock (the matching itself runs outside it).
        self._lock = threading.Lock()

    def statements(self) -> "BranchMemo":
        """The memo of the texts' statements (what a statement-only pattern reads)."""
        with self._lock:
            if self._statements is None:
                self._statements = BranchMemo([statement_of(text) for text in self.texts])
            return self._statements

    def by_branch(self, branches: Sequence[str], ignore_case: bool, slug: str) -> list[list[int]]:
        """For each of ``branches`` (RE2 patterns), the indices of the texts it matches. Raises RuleError
        where RE2 refuses a branch alone; nothing is kept then."""
        known: dict[str, array] = {}
        with self._lock:
            for branch in branches:
                found = self._found.get((branch, ignore_case))
                if found is not None:
                    self._found.move_to_end((branch, ignore_case))
                    known[branch] = found
        todo = [b for b in dict.fromkeys(branches) if b not in known]
        if todo:
            match = _raw_match(_set_of([(slug, _flagged(b, ignore_case)) for b in todo], _re2_options().max_mem))
            hits: list[array] = [array("I") for _ in todo]
            for i, data in enumerate(self.data):
                for b in match(data) or ():
                    hits[b].append(i)
            with self._lock:
                for branch, found in zip(todo, hits):
                    known[branch] = found
                    old = self._found.pop((branch, ignore_case), None)  # another request's pass, the same
                    self._hits += len(found) - (len(old) if old is not None else 0)
                    self._found[(branch, ignore_case)] = found
                # Over the bounds, the least recently used go first; this pattern's own branches stay.
                while len(self._found) > max(self.SIZE, len(known)) or (self._hits > self.HITS and len(self._found) > len(known)):
                    self._hits -= len(self._found.popitem(last=False)[1])
        return [list(known[b]) for b in branches]


def _lazy_set(entries: list[tuple[str, str]]) -> Callable[[bytes], object]:
    """A set's Match, compiled on its first call: matches read from a BranchMemo need the set only to
    read statements (BranchMatches.in_solution_only), and a bank without solutions never does."""
    built: list[Callable[[bytes], object]] = []

    def match(data: bytes) -> object:
        if not built:
            built.append(_raw_match(_set_of(entries, _re2_options().max_mem)))  # type: ignore[arg-type]
        return built[0](data)

    return match


def _branch_matching(pattern: str, ignore_case: bool, memo: BranchMemo, timeout: float, budget: float | None, slug: str = "preview") -> BranchMatches:
    rule = Rule(slug, pattern, ignore_case)
    engine = check_pattern(pattern, ignore_case)
    if engine != ENGINE_RE2:
        compiled = compile_rules([rule], timeout=timeout, budget=budget)
        return BranchMatches(compiled, [i for i, text in enumerate(memo.texts) if extract(text, compiled, i)])
    # The preview runs on every keystroke, so nothing else is built: not the gap split and the sets
    # of `compile_rules` (a third of the time of a 4,000-character rule), only the pattern for spans.
    compiled = CompiledRules(
        slugs=[slug], engines={slug: engine}, set_slugs=[slug], single={slug: _compile_single(rule, engine)}, timeout=timeout, budget=budget,
    )
    # One rule alone has no other rules' states to multiply: the branches the memo lacks go in one set,
    # whose Match (a single C call a text) says which branches matched, for 0-15% more time than the
    # whole pattern. Flags at the very start apply to every branch (`(?i)a|b`): such a pattern is matched whole.
    branches = [pattern] if _LEADING_FLAGS.match(pattern) else top_level_branches(pattern)
    try:
        by_branch = memo.by_branch(branches, ignore_case, slug)
    except RuleError:  # a branch RE2 takes only inside the whole (a group reference across branches)
        branches = [pattern]
        by_branch = memo.by_branch(branches, ignore_case, slug)
    found = sorted(set().union(*by_branch))
    return BranchMatches(compiled, found, branches, by_branch, match=_lazy_set([(slug, _flagged(b, ignore_case)) for b in branches]))


def branch_matching(
    pattern: str, ignore_case: bool, texts: Sequence[str], timeout: float = DEFAULT_TIMEOUT, budget: float | None = DEFAULT_BUDGET,
    statement_pattern: str = "", slug: str = "preview", memo: BranchMemo | None = None,
) -> BranchMatches:
    """The texts a rule matches (``pattern`` anywhere, ``statement_pattern`` in the statement), and
    which of its branches matched each. Raises as `matching`; an error in the statement-only pattern
    says so. ``slug``: the rule's name in the compiled rule and in errors (a saved rule's own, so a
    timeout names it; "preview" for the text in the editor). ``memo``: a BranchMemo of ``texts``, whose
    branches' matches are reused (the live preview's, between keystrokes); without one, a memo of this
    call alone."""
    if memo is None:
        memo = BranchMemo(texts)
    elif len(memo.texts) != len(texts):
        raise ValueError("the memo was made for other texts")
    if not statement_pattern:
        return _branch_matching(pattern, ignore_case, memo, timeout, budget, slug)
    try:
        in_statement = _branch_matching(statement_pattern, ignore_case, memo.statements(), timeout, budget, slug)
    except RuleError as exc:
        raise exc.in_statement_pattern() from None
    if not pattern:
        compiled = CompiledRules(slugs=[slug], engines={}, set_slugs=[], timeout=timeout, budget=budget, statement=in_statement.compiled)
        return BranchMatches(compiled, in_statement.found, in_statement.branches, in_statement.by_branch, len(in_statement.branches))
    anywhere = _branch_matching(pattern, ignore_case, memo, timeout, budget, slug)
    anywhere.compiled.statement = in_statement.compiled
    return BranchMatches(
        anywhere.compiled,
        sorted(set(anywhere.found) | set(in_statement.found)),
        anywhere.branches + in_statement.branches,
        anywhere.by_branch + in_statement.by_branch,
        len(in_statement.branches),
        match=anywhere.match,
    )


def matching(
    pattern: str, ignore_case: bool, texts: Sequence[str], timeout: float = DEFAULT_TIMEOUT, budget: float | None = DEFAULT_BUDGET,
    statement_pattern: str = "", slug: str = "preview", memo: BranchMemo | None = None,
) -> tuple[CompiledRules, list[int]]:
    """Indices of the texts a rule matches, and the compiled rule (named ``slug``) for spans."""
    result = branch_matching(pattern, ignore_case, texts, timeout, budget, statement_pattern, slug, memo)
    return result.compiled, result.found


def preview(
    pattern: str, ignore_case: bool, texts: Sequence[str], timeout: float = DEFAULT_TIMEOUT, budget: float | None = DEFAULT_BUDGET,
    statement_pattern: str = "",
) -> list[PreviewMatch]:
    """Which of `texts` a rule matches, with spans. Raises RuleError / RuleTimeout (or its
    RuleBudgetExceeded)."""
    compiled, found = matching(pattern, ignore_case, texts, timeout, budget, statement_pattern)
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

    def total(self, kind: str) -> int:
        """TP, FP or FN (``kind`` "tp", "fp", "fn") summed over concepts."""
        return sum(getattr(s, kind) for s in self.concepts.values())

    @property
    def micro_recall(self) -> float | None:
        """Of all labelled concepts, the share found (pooled over concepts)."""
        tp, fn = self.total("tp"), self.total("fn")
        return tp / (tp + fn) if tp + fn else None

    @property
    def micro_precision(self) -> float | None:
        """Of all concepts found, the share the labels hold. Per-concept FP rates stay small even when
        many found concepts are wrong (each concept has many negatives)."""
        tp, fp = self.total("tp"), self.total("fp")
        return tp / (tp + fp) if tp + fp else None

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
