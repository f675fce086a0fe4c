"""Branches matched in the statement alone (Rule.statement_pattern): the engine, the live preview's
branch split, the rule analysis's lines and the rule's lines in a diff. Pure: no database."""

from __future__ import annotations

import pytest

from concepts import extraction, rule_analysis
from concepts.extraction import Rule, RuleError, compile_rules, extract, extract_many, match_spans, rule_text, statement_of
from problems.demo_course import join_branches

# nchoosek: "choose" wherever the rules read, `\binom` only where the statement asks for it.
NCHOOSEK = Rule("nchoosek", r"\bchoose\b", statement_pattern=r"\\binom")
TEXTS = [
    rule_text(r"Compute $\binom{5}{2}$.", "It is 10."),  # the statement asks for it
    rule_text("How many committees of 2 from 5?", r"$\binom{5}{2} = 10$."),  # only the working writes it
    rule_text("How many committees of 2 from 5?", "We choose 2 of 5: 10."),  # the solution names it
    r"Compute $\binom{5}{2}$.",  # no solution at all
]


def test_the_statement_is_the_text_before_the_solution_heading() -> None:
    assert statement_of(TEXTS[1]) == "How many committees of 2 from 5?"
    assert statement_of(TEXTS[3]) == TEXTS[3]
    assert statement_of("Solution: in the statement, no blank line before it") == "Solution: in the statement, no blank line before it"


def test_a_statement_only_branch_matches_the_statement_and_never_the_solution() -> None:
    compiled = compile_rules([NCHOOSEK, Rule("poisson", r"\bpoisson\b")])
    assert [extract(t, compiled) for t in TEXTS] == [{"nchoosek"}, set(), {"nchoosek"}, {"nchoosek"}]
    assert extract_many(TEXTS, compiled) == [extract(t, compiled, i) for i, t in enumerate(TEXTS)]
    # Read as one pattern, the branch would also take the working.
    whole = compile_rules([Rule("nchoosek", r"\bchoose\b|\\binom")])
    assert extract(TEXTS[1], whole) == {"nchoosek"}


def test_a_rule_may_be_all_statement_branches_and_its_spans_stay_in_the_statement() -> None:
    compiled = compile_rules([Rule("nchoosek", "", statement_pattern=r"\\binom")])
    assert extract_many(TEXTS, compiled) == [{"nchoosek"}, set(), set(), {"nchoosek"}]
    text = rule_text(r"Find $\binom{4}{2}$; we choose.", r"$\binom{4}{2} = 6$")
    both = compile_rules([NCHOOSEK])
    spans = match_spans(text, both, "nchoosek")
    assert [text[a:b] for a, b in spans] == [r"\binom", "choose"]  # not the solution's \binom
    assert all(b <= len(statement_of(text)) for _, b in spans)


def test_an_error_in_the_statement_pattern_says_so() -> None:
    with pytest.raises(RuleError) as caught:
        compile_rules([Rule("nchoosek", r"\bchoose\b", statement_pattern=r"\binom(")])
    assert caught.value.in_statement and caught.value.slug == "nchoosek"
    assert "statement-only pattern: missing )" in str(caught.value) and caught.value.position == 6
    with pytest.raises(RuleError, match="the pattern is empty"):
        extraction.check_rule("", "")
    with pytest.raises(RuleError) as caught:
        extraction.check_rule("a", "(b")
    assert caught.value.in_statement
    assert extraction.check_rule("a", r"(\w)\1") == {extraction.ENGINE_RE2, extraction.ENGINE_BACKTRACKING}


def test_the_preview_counts_each_box_and_marks_only_the_statement() -> None:
    matches = extraction.branch_matching(r"\bchoose\b|\bcommittees?\b", True, TEXTS, statement_pattern=r"\\binom")
    assert matches.found == [0, 1, 2, 3] and matches.statement_branches == 1
    assert matches.branches == [r"\bchoose\b", r"\bcommittees?\b", r"\\binom"]
    assert matches.by_branch == [[2], [1, 2], [0, 3]]  # \binom: not text 1, whose only \binom is in its solution
    only = extraction.branch_matching("", True, TEXTS, statement_pattern=r"\\binom")
    assert only.found == [0, 3] and only.branches == [r"\\binom"] and only.statement_branches == 1
    previewed = extraction.preview("", True, TEXTS[:2], statement_pattern=r"\\binom")
    assert [(m.index, [TEXTS[m.index][a:b] for a, b in m.spans]) for m in previewed] == [(0, [r"\binom"])]
    with pytest.raises(RuleError, match="statement-only pattern"):
        extraction.branch_matching("a", True, TEXTS, statement_pattern="(")


def test_the_analysis_numbers_each_box_from_one_and_says_which() -> None:
    rule = Rule("nchoosek", r"\bchoose\b|\bcommittees?\b", statement_pattern=r"\\binom")
    hits = rule_analysis.branch_hits(rule, TEXTS, range(len(TEXTS)))
    assert hits is not None and hits.statement_branches == 1
    truth = [{"nchoosek"}, set(), {"nchoosek"}, {"nchoosek"}]
    figures = rule_analysis.line_figures(hits, truth)
    assert [(f.number, f.in_statement, f.tp, f.fp) for f in figures] == [(1, False, 1, 0), (2, False, 1, 1), (1, True, 2, 0)]
    assert rule_analysis.branch_hits(Rule("x", "a", statement_pattern=r"(\w)\1"), TEXTS, [0]) is None  # backtracking: no lines


def test_a_rule_as_lines_puts_its_statement_branches_under_a_heading() -> None:
    lines = rule_analysis.rule_lines(r"a|b", True, True, r"c")
    assert lines == ["a", "b", rule_analysis.STATEMENT_ONLY_HEADING, "c", "[ignore case: yes]", "[enabled: yes]"]
    # Moving the last branch to the statement box reads as the heading put above it.
    moved = rule_analysis.version_diff(("a|b", True, True, ""), ("a", True, True, "b"))
    assert [(d.kind, d.text) for d in moved[:3]] == [(" ", "a"), ("+", rule_analysis.STATEMENT_ONLY_HEADING), (" ", "b")]
    moved = rule_analysis.version_diff(("a|b|c", True, True, ""), ("a|c", True, True, "b"))
    assert [d.text for d in moved if d.kind != "-"] == rule_analysis.rule_lines("a|c", True, True, "b")
    assert [d.text for d in moved if d.kind != "+"] == rule_analysis.rule_lines("a|b|c", True, True)


def test_rules_json_branches_flagged_statement_only_join_the_statement_pattern() -> None:
    branches = [{"re": "a", "from": ["demo"]}, {"re": "b", "from": ["gs"], "statement_only": True}, {"re": "c", "from": ["demo"], "statement_only": True}]
    assert join_branches(branches) == "a"
    assert join_branches(branches, statement_only=True) == "b|c"
    assert join_branches(branches, without="gs", statement_only=True) == "c"
    assert Rule.of("x", {"pattern": "a", "ignore_case": False, "statement_pattern": "b|c"}) == Rule("x", "a", False, "b|c")
    assert Rule.of("x", {"pattern": "a"}) == Rule("x", "a", True, "")


def test_the_scope_benchmark_counts_what_each_branch_adds_from_solutions_and_flags_the_misfiring_ones() -> None:
    from benchmarks import statement_scope

    spec = {
        "nchoosek": {"ignore_case": True, "branches": [{"re": r"\bchoose\b", "from": ["demo"]}, {"re": r"\\binom", "from": ["demo"]}]},
        "counting-principle": {"ignore_case": True, "branches": [{"re": r"\bhow many codes\b", "from": ["demo"]}]},
    }
    records = [
        ("How many codes?", r"$\binom{26}{2}$ is wrong here.", {"counting-principle"}),  # \binom from the working: wrong
        ("How many codes of 3 digits?", r"Not $\binom{10}{3}$.", {"counting-principle"}),  # wrong again
        ("Pick 2 of 6.", r"$\binom{6}{2} = 15$", {"nchoosek"}),  # right
        (r"Find $\binom{6}{2}$.", r"$\binom{6}{2} = 15$", {"nchoosek"}),  # the statement has it: not an addition
        ("Pick 2 of 6.", "We choose 2: 15.", {"nchoosek"}),  # right, by the other branch
    ]
    additions = statement_scope.solution_additions(spec, records)
    assert additions == {("nchoosek", 1): [1, 2], ("nchoosek", 0): [1, 0]}
    assert statement_scope.chosen_branches(additions, min_wrong=2) == {("nchoosek", 1)}
    assert statement_scope.chosen_branches(additions, min_wrong=3) == set()
    flagged = statement_scope.flagged(spec, {("nchoosek", 1)})
    assert [b.get("statement_only", False) for b in flagged["nchoosek"]["branches"]] == [False, True] and "statement_only" not in spec["nchoosek"]["branches"][1]
    compiled = statement_scope.compiled(flagged)
    texts = [extraction.rule_text(s, sol) for s, sol, _ in records]
    assert [sorted(found) for found in extract_many(texts, compiled)] == [
        ["counting-principle"], ["counting-principle"], [], ["nchoosek"], ["nchoosek"]
    ]


def test_which_matches_a_branch_makes_in_a_solution_only() -> None:
    matches = extraction.branch_matching(r"\\binom|\bchoose\b", True, TEXTS, statement_pattern=r"\bcommittees\b")
    assert matches.by_branch == [[0, 1, 3], [2], [1, 2]]
    assert matches.in_solution_only(TEXTS, matches.by_branch) == [[1], [2], []]  # the statement box's line: none
    assert matches.in_solution_only(TEXTS, [[0, 3], [], []]) == [[], [], []]
    assert extraction.branch_matching(r"(\w)\1x|a", True, TEXTS).in_solution_only(TEXTS, [[1]]) == [[]]  # backtracking: no set, none
