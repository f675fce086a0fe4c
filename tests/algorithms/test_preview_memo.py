"""The live preview's reuse between keystrokes (pure): a BranchMemo keeps what each branch matched, and
a pattern is checked by `re` one branch at a time, so a keystroke matches and compiles only the line
it changed. Results and errors are those of the whole pattern."""

from __future__ import annotations

import json
import re

import pytest

from concepts import extraction
from concepts.extraction import BranchMemo, RuleError
from problems.demo_course import bank_files, demo_rules


def _demo_texts() -> list[str]:
    return [
        extraction.rule_text(row["text"], row.get("solution"))
        for path in bank_files()
        for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


def _sets_compiled(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The entries of every RE2 set compiled from now on."""
    compiled: list[list[str]] = []
    real = extraction._set_of

    def recording(entries, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        compiled.append([pattern for _, pattern in entries])
        return real(entries, *args, **kwargs)

    monkeypatch.setattr(extraction, "_set_of", recording)
    return compiled


def test_with_a_memo_every_starter_rule_matches_as_without_one() -> None:
    texts = _demo_texts()
    memo = BranchMemo(texts)
    for slug, spec in demo_rules().items():
        pattern, ignore_case = str(spec["pattern"]), bool(spec["ignore_case"])
        statement = str(spec.get("statement_pattern") or "")
        plain = extraction.branch_matching(pattern, ignore_case, texts, statement_pattern=statement)
        for _ in range(2):  # the second time from the memo alone
            kept = extraction.branch_matching(pattern, ignore_case, texts, statement_pattern=statement, memo=memo)
            assert (kept.found, kept.branches, kept.by_branch) == (plain.found, plain.branches, plain.by_branch), slug
            assert kept.in_solution_only(texts, kept.by_branch) == plain.in_solution_only(texts, plain.by_branch), slug


def test_a_keystroke_matches_only_the_line_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["choose 3 of 5", "a binomial coefficient", "nothing", "Choose a committee"]
    memo = BranchMemo(texts)
    compiled = _sets_compiled(monkeypatch)
    first = extraction.branch_matching(r"\bchoose\b|\bbinomial\b", True, texts, memo=memo)
    assert first.found == [0, 1, 3] and first.by_branch == [[0, 3], [1]]
    assert compiled == [[r"(?i:\bchoose\b)", r"(?i:\bbinomial\b)"]]
    compiled.clear()
    typed = extraction.branch_matching(r"\bchoose\b|\bbinomial\b|\bcommittee", True, texts, memo=memo)
    assert typed.found == [0, 1, 3] and typed.by_branch == [[0, 3], [1], [3]]
    assert compiled == [[r"(?i:\bcommittee)"]]  # the two lines it had are read from the memo
    compiled.clear()
    # Case matters to what a branch matches: the same line without ignore_case is matched again.
    assert extraction.branch_matching(r"\bchoose\b", False, texts, memo=memo).found == [0]
    assert compiled == [[r"(?:\bchoose\b)"]]


def test_a_branch_re2_takes_only_inside_the_whole_is_matched_whole_with_a_memo() -> None:
    texts = ["ab ab", "ab", "b"]
    # RE2 refuses `\1` anyhow; a named group and its use are RE2-free only together: (?P<x>a)|(?P=x) is
    # not RE2 either. A leading flag keeps the pattern whole; an error is raised, never kept.
    memo = BranchMemo(texts)
    flagged = extraction.branch_matching("(?i)AB|zz", False, texts, memo=memo)
    assert flagged.branches == ["(?i)AB|zz"] and flagged.found == [0, 1]
    with pytest.raises(RuleError):
        extraction.branch_matching("a(", True, texts, memo=memo)
    assert extraction.branch_matching("b", True, texts, memo=memo).found == [0, 1, 2]


def test_the_memo_keeps_a_bounded_number_of_branches_and_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"word{i} common" for i in range(50)]
    memo = BranchMemo(texts)
    monkeypatch.setattr(BranchMemo, "SIZE", 3)
    for i in range(6):
        extraction.branch_matching(rf"\bword{i}\b", True, texts, memo=memo)
    assert len(memo._found) == 3  # the three most recent
    monkeypatch.setattr(BranchMemo, "HITS", 60)
    extraction.branch_matching(r"\bcommon\b", True, texts, memo=memo)  # 50 matches
    extraction.branch_matching(r"\bword|\bcommon\b", True, texts, memo=memo)  # 50 more, kept whatever the bound
    assert memo._hits == 100 and sorted(memo._found) == [(r"\bcommon\b", True), (r"\bword", True)]
    assert memo._hits == sum(len(found) for found in memo._found.values())
    # What was dropped is matched again, the same.
    assert extraction.branch_matching(r"\bword0\b", True, texts, memo=memo).found == [0]


def test_a_memo_is_refused_for_other_texts() -> None:
    with pytest.raises(ValueError, match="other texts"):
        extraction.branch_matching("a", True, ["a", "b"], memo=BranchMemo(["a"]))


# --- checking a pattern one branch at a time ------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        r"\bchoose\b|\bbi(nom|x|\bz",  # an unbalanced group: checked whole
        r"\bchoose\b|\bbinom{2,1}|x",  # an error in the second branch
        r"\bchoose\b|x|*y",  # nothing to repeat, in the third
        r"a|b|(?<=a+)c",  # look-behind of no fixed width
        r"(?P<n>a)|(?P<n>b)",  # a group name both branches define
        r"a|(?i)b",  # a global flag not at the start
        r"(?P<n>a)|(?P=m)",  # a reference to an unknown group
        r"(a)|\2",  # a reference to a group no branch has
        r"(?<=a+)x|*y",  # a compile error in the first branch, a syntax error (found first) in the second
        r"\bchoose\b|(?<=a|bc)x|\q",  # the same, the look-behind's in a middle branch
        "(?x:a#)|(\n)|*",  # a `|` in a verbose comment looks top-level to the scanner
    ],
)
def test_an_error_is_found_and_placed_as_in_the_whole_pattern(pattern: str) -> None:
    with pytest.raises(re.error) as whole:
        re.compile(pattern, re.ASCII | re.IGNORECASE)
    with pytest.raises(RuleError) as ours:
        extraction.check_pattern(pattern)
    assert (ours.value.message, ours.value.position) == (whole.value.msg, whole.value.pos)


@pytest.mark.parametrize(
    ("pattern", "empty"),
    [("a|b?", True), ("a||b", True), ("a|b", False), ("(?i)a|", True), ("x(?=y)|z*", True), (r"(a)|\1", False), ("a|(b|)", True)],
)
def test_a_pattern_matching_the_empty_string_is_refused_whichever_branch_does(pattern: str, empty: bool) -> None:
    assert (re.compile(pattern).match("") is not None) == empty
    if empty:
        with pytest.raises(RuleError, match="matches the empty string"):
            extraction.check_pattern(pattern)
    else:
        extraction.check_pattern(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "(?x:a#)\n|b#(\n)",  # verbose: `#)` is a comment, so the `|` is inside the group
        r"x(?#[)(a(?#])|b(?#())",  # comments with a `[` and a `(`: `x(a|b)` to `re`
        "(?x: \\bbinom  # ) | (  (a comment)\n | \\bchoose\\b)",
    ],
)
def test_a_pattern_re_takes_whole_is_taken_where_the_scanner_misreads_its_branches(pattern: str) -> None:
    """The scanner of top-level `|`s reads neither comments nor verbose mode: where it cuts a pattern
    at a `|` inside a group, the pieces are refused alone but the pattern is still checked as `re` reads it."""
    re.compile(pattern, re.ASCII | re.IGNORECASE)
    assert extraction._top_level_bars(pattern)  # the scanner does see a top-level `|`
    assert extraction.check_pattern(pattern) == extraction.ENGINE_BACKTRACKING


def test_a_keystroke_compiles_only_the_branch_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = re.compile
    monkeypatch.setattr(extraction.re, "compile", lambda pattern, flags=0: compiled.append(pattern) or real(pattern, flags))
    lines = [rf"\bkeystroke{i}\s+test\b" for i in range(20)]
    extraction.check_pattern("|".join(lines))
    assert compiled == lines
    compiled.clear()
    extraction.check_pattern("|".join([*lines, r"\bnew\s+line"]))
    assert compiled == [r"\bnew\s+line"]


def test_highlighting_without_capturing_groups_marks_what_re_marks_for_every_starter_rule() -> None:
    """The preview's pattern for spans captures nothing (RE2 finds a match's ends with its DFA alone):
    the marks are those of `re` over the demo bank, groups and all."""
    texts = _demo_texts()[:120]
    for slug, spec in demo_rules().items():
        pattern, ignore_case = str(spec["pattern"]), bool(spec["ignore_case"])
        compiled = extraction.compile_rules([extraction.Rule("preview", pattern, ignore_case)])
        plain = re.compile(pattern, re.ASCII | (re.IGNORECASE if ignore_case else 0))
        for text in texts:
            expected = [m.span() for m in plain.finditer(text) if m.end() > m.start()][:50]
            assert extraction.match_spans(text, compiled, "preview") == expected, slug


def test_one_memo_serves_previews_in_several_threads_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A threaded server previews for several TAs over one bank's memo: each gets what matching alone
    gives, and the memo's count of what it keeps stays true while lines come and go."""
    import sys
    import threading

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, to meet the races
    try:
        texts = [f"alpha{i % 7} beta{i % 5} gamma{i % 3}" for i in range(300)]
        memo = BranchMemo(texts)
        monkeypatch.setattr(BranchMemo, "SIZE", 4)
        monkeypatch.setattr(BranchMemo, "HITS", 200)
        patterns = [rf"\balpha{a}\b|\bbeta{b}\b|\bgamma{g}\b" for a in range(7) for b in range(5) for g in range(3)]
        expected = {p: extraction.branch_matching(p, True, texts).by_branch for p in patterns}
        errors: list[BaseException] = []

        def preview(offset: int) -> None:
            try:
                for k in range(120):
                    pattern = patterns[(offset * 37 + k * 11) % len(patterns)]
                    assert extraction.branch_matching(pattern, True, texts, memo=memo).by_branch == expected[pattern]
            except BaseException as error:  # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=preview, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert memo._hits == sum(len(found) for found in memo._found.values())


@pytest.mark.parametrize("pattern", ["(?u)binom", r"\bchoose\b|(?u)x", "a{4294967296}|b"])
def test_a_pattern_re_refuses_with_another_error_than_re_error_is_a_rule_error(pattern: str) -> None:
    """`re` refuses `(?u)` beside the rules' ASCII flag with a ValueError, and a repeat count past its
    limit with an OverflowError: each is a rule error with `re`'s message, not a crash of the preview."""
    with pytest.raises(RuleError) as refused:
        extraction.check_pattern(pattern)
    assert refused.value.message
