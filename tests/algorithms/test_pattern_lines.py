"""The editor's form of a pattern: one top-level branch per line, joined with `|` when saved (pure)."""

from __future__ import annotations

import json
import re

import pytest

from concepts import extraction
from concepts.extraction import RuleError, check_lines, join_lines, pattern_lines, split_branches, where_in_lines
from problems.demo_course import bank_files, demo_rules


def test_every_starter_rule_comes_back_the_same_through_the_editor() -> None:
    for slug, spec in demo_rules().items():
        pattern = str(spec["pattern"])
        lines = pattern_lines(pattern)
        assert join_lines(lines) == pattern, slug
        branches = split_branches(pattern)
        if len(branches) > 1:  # the scanner split it: the editor shows the same branches, one a line
            assert lines.split("\n") == [b.text for b in branches], slug
        check_lines(lines)  # each line is a pattern on its own


def test_branches_are_split_at_the_top_level_only() -> None:
    assert pattern_lines(r"\bbinom|(choose|pick)s?|[|]x|\|y|(?<!a)b") == "\\bbinom\n(choose|pick)s?\n[|]x\n\\|y\n(?<!a)b"
    assert pattern_lines(r"[\]|]z|w") == "[\\]|]z\nw"  # a `]` escaped in a class does not close it


@pytest.mark.parametrize(
    "pattern",
    [
        "one branch",
        "a||b",  # an empty branch would be dropped as a blank line
        "a|  |b",
        "a|(b",  # brackets that do not balance
        "a)|b",
        "a|[b",
        "a\nb|c",  # a line break of its own (written by the API): shown as it is
    ],
)
def test_a_pattern_that_would_not_come_back_the_same_is_shown_as_it_is(pattern: str) -> None:
    assert pattern_lines(pattern) == pattern


def test_typed_lines_join_with_bars_blank_lines_and_line_endings_dropped() -> None:
    assert join_lines("\\bbinom\r\n\r\n  \n\\bchoose\\b\r\n") == r"\bbinom|\bchoose\b"
    assert join_lines("a|b") == "a|b"  # one line: as typed
    assert join_lines(" a \nb") == " a |b"  # spaces inside a line are the pattern's own
    assert join_lines("") == ""


def test_a_line_that_is_not_a_pattern_on_its_own_is_named_with_its_column() -> None:
    # Joined, `\b(a|b)\b` would compile: one group across two lines, not the two branches the box shows.
    with pytest.raises(RuleError, match=r"^line 1, column 3: missing \), unterminated subpattern"):
        check_lines("\\b(a\nb)\\b")
    with pytest.raises(RuleError, match=r"^line 3, column 2: unbalanced parenthesis"):
        check_lines("a\n\nb)")
    with pytest.raises(RuleError, match=r"^line 2: this branch matches the empty string"):
        check_lines("a\nx?")
    check_lines("(unclosed")  # one line: the whole pattern's check says it, with its position
    check_lines("a\nb")


def test_an_error_in_the_joined_pattern_is_placed_on_its_line() -> None:
    typed = "abc\n\nde(?i)f\nxyz"
    joined = join_lines(typed)
    with pytest.raises(re.error) as error:
        re.compile(joined)
    assert joined[error.value.pos :].startswith("(?i)")
    assert where_in_lines(typed, error.value.pos) == (3, 2)  # blank line 2 is not part of the pattern
    assert where_in_lines(typed, 0) == (1, 0) and where_in_lines(typed, len(joined)) == (4, 3)
    assert where_in_lines("one line", 4) is None


def test_the_limit_is_on_the_saved_pattern_and_says_how_long_it_may_be() -> None:
    fits = "|".join(rf"\bw{i:04d}\b" for i in range(1000))[: extraction.MAX_PATTERN_LENGTH].rstrip("|\\b")
    assert len(fits) > 2000 and extraction.check_pattern(fits) == extraction.ENGINE_RE2
    with pytest.raises(RuleError, match="longer than 4,000 characters"):
        extraction.check_pattern("x" * (extraction.MAX_PATTERN_LENGTH + 1))


# --- which branch matched: the preview's per-line table ---------------------------------------------


def _demo_texts() -> list[str]:
    return [json.loads(line)["text"] for path in bank_files() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_matching_by_branch_finds_what_the_whole_pattern_finds_for_every_starter_rule() -> None:
    texts = _demo_texts()
    for slug, spec in demo_rules().items():
        pattern, ignore_case = str(spec["pattern"]), bool(spec["ignore_case"])
        result = extraction.branch_matching(pattern, ignore_case, texts)
        whole = extraction.compile_rules([extraction.Rule(slug, pattern, ignore_case)])
        assert result.found == [i for i, text in enumerate(texts) if extraction.extract(text, whole)], slug
        assert result.branches == extraction.top_level_branches(pattern), slug
        assert sorted({i for hits in result.by_branch for i in hits}) == result.found, slug
        for branch, hits in zip(result.branches, result.by_branch):  # each branch's own matches
            alone = re.compile(branch, re.ASCII | (re.IGNORECASE if ignore_case else 0))
            assert hits == [i for i, text in enumerate(texts) if alone.search(text)], (slug, branch)


def test_patterns_whose_branches_cannot_run_alone_are_matched_whole() -> None:
    texts = ["Binom and choose", "nothing here", "choose"]
    # Flags at the start apply to every branch: split, `Choose` would lose them.
    flagged = extraction.branch_matching("(?i)Binom|Choose", False, texts)
    assert flagged.found == [0, 2] and flagged.branches == ["(?i)Binom|Choose"]
    # A backreference runs on the backtracking engine: matches, no branches.
    backtracking = extraction.branch_matching(r"(choose)|\1x", True, texts)
    assert backtracking.found == [0, 2] and backtracking.branches == [] and backtracking.by_branch == []
    split = extraction.branch_matching(r"\bbinom\b|\bchoose\b", True, texts)
    assert split.by_branch == [[0], [0, 2]] and extraction.matching(r"\bbinom\b|\bchoose\b", True, texts)[1] == [0, 2]
