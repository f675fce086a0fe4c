"""Rule analysis (concepts/rule_analysis.py): pure, no database."""

from __future__ import annotations

import pytest

from concepts.extraction import Rule, compile_rules, extract_many
from concepts.rule_analysis import WRONG_EXAMPLES, DiffLine, LineCount, LineFigures, analyse, branch_hits, line_counts, line_figures, lines_to_look_at, rule_lines, version_diff

# Six problems; rules for paired, twosample (alternatives: never labelled together) and mean.
PREDICTED = [
    {"paired", "mean"},  # 0: overlap (labelled together often: no conflict)
    {"paired", "twosample"},  # 1: conflict
    {"twosample"},  # 2
    set(),  # 3: no concept
    {"paired", "twosample", "mean"},  # 4: conflict and overlap
    set(),  # 5: no concept
]
TRUTH = [
    {"paired", "mean"},
    {"paired"},
    {"twosample", "mean"},
    {"paired"},
    None,  # unlabelled
    {"twosample"},
]


def test_per_rule_coverage_overlaps_conflicts_and_labels() -> None:
    result = analyse(["paired", "twosample", "mean"], PREDICTED, TRUTH, min_positives=2)
    rules = {r.slug: r for r in result.rules}
    paired, twosample, mean = rules["paired"], rules["twosample"], rules["mean"]
    assert (paired.matched, paired.coverage, paired.overlaps, paired.conflicts) == (3, 0.5, 3, 2)
    assert (twosample.matched, twosample.overlaps, twosample.conflicts) == (3, 2, 2)
    assert (mean.matched, mean.overlaps, mean.conflicts) == (2, 2, 0)  # mean is labelled with both
    # Labelled: 0, 1, 2, 3, 5. paired: tp 0, 1; fn 3; fp none; tn 2, 5.
    assert (paired.tp, paired.fp, paired.fn, paired.tn, paired.positives) == (2, 0, 1, 2, 3)
    assert paired.fn_rate == pytest.approx(1 / 3) and paired.fp_rate == 0 and paired.precision == 1
    # twosample: tp 2; fp 1; fn 5; tn 0, 3.
    assert (twosample.tp, twosample.fp, twosample.fn, twosample.tn) == (1, 1, 1, 2)
    assert twosample.precision == 0.5


def test_overall_figures() -> None:
    result = analyse(["paired", "twosample", "mean"], PREDICTED, TRUTH, min_positives=2)
    assert (result.problems, result.labelled) == (6, 5)
    assert result.no_concept == (3, 5) and result.no_concept_share == pytest.approx(1 / 3)
    assert result.covered_share == pytest.approx(2 / 3)
    assert (result.overlapping, result.conflicting) == (3, 2)
    assert result.concepts_per_problem == pytest.approx(8 / 6)
    [conflict] = result.conflicts
    assert (conflict.a, conflict.b, conflict.count, conflict.examples) == ("paired", "twosample", 2, (1, 4))
    assert (conflict.a_positives, conflict.b_positives) == (3, 2)
    rates = [r.fn_rate for r in result.rules]
    assert result.fn_rate == pytest.approx(sum(rates) / 3)


def test_only_concepts_of_one_module_are_alternatives_when_modules_are_given() -> None:
    tests = {"paired": "tests", "twosample": "tests", "mean": "descriptive"}
    assert [c.a for c in analyse(["paired", "twosample", "mean"], PREDICTED, TRUTH, min_positives=2, groups=tests).conflicts] == ["paired"]
    apart = {"paired": "one-sample tests", "twosample": "two-sample tests", "mean": "descriptive"}
    assert analyse(["paired", "twosample", "mean"], PREDICTED, TRUTH, min_positives=2, groups=apart).conflicts == []
    assert analyse(["paired", "twosample"], PREDICTED, TRUTH, min_positives=2, groups={}).conflicts == []  # no module: none


def test_concepts_with_too_few_labels_are_not_judged_alternatives() -> None:
    result = analyse(["paired", "twosample", "mean"], PREDICTED, TRUTH, min_positives=3)
    assert result.conflicts == [] and result.conflicting == 0  # twosample has 2 positives only


def test_an_empty_bank_and_no_labels() -> None:
    empty = analyse(["x"], [], [])
    assert (empty.problems, empty.no_concept_share, empty.fn_rate) == (0, None, None)
    unlabelled = analyse(["x"], [{"x"}, set()], [None, None])
    assert unlabelled.rules[0].fn_rate is None and unlabelled.rules[0].coverage == 0.5


def test_lengths_must_agree() -> None:
    with pytest.raises(ValueError, match="2 predictions for 1 problems"):
        analyse(["x"], [set(), set()], [None])


def test_rule_lines_are_one_per_branch_then_the_flags() -> None:
    assert rule_lines(r"\bbinom|choose(?:s|n)?|\bn\s*C\s*r", True, False) == [
        r"\bbinom", "choose(?:s|n)?", r"\bn\s*C\s*r", "[ignore case: yes]", "[enabled: no]",
    ]
    # Lookaround (which the extraction's scanner keeps whole) is split like any branch; brackets that do not balance are not.
    assert rule_lines("(?=x)a|b", False, True)[:2] == ["(?=x)a", "b"]
    assert rule_lines("a|(b", False, True)[0] == "a|(b"


def test_version_diff_marks_added_removed_and_kept_lines() -> None:
    lines = version_diff((r"\bbinom|choose", True, True), (r"\bbinom|\bnCr\b", False, True))
    assert lines == [
        DiffLine(" ", r"\bbinom"),
        DiffLine("-", "choose"),
        DiffLine("-", "[ignore case: yes]"),
        DiffLine("+", r"\bnCr\b"),
        DiffLine("+", "[ignore case: no]"),
        DiffLine(" ", "[enabled: yes]"),
    ]
    same = version_diff(("a|b", True, True), ("a|b", True, True))
    assert all(line.kind == " " for line in same)


# --- each line of a rule on the labelled problems ----------------------------------------------------


def test_line_counts_are_right_wrong_and_right_found_by_no_other_line() -> None:
    verdicts = {0: True, 1: True, 2: False, 3: None, 4: True}
    counts = line_counts([[0, 1, 2, 3], [1, 4], []], verdicts.get)
    # line 1: right 0, 1; wrong 2; 3 unlabelled; only it finds 0 (1 is line 2's too). line 2: right 1, 4; 4 alone.
    assert counts == [LineCount(2, 1, 1, (2,)), LineCount(2, 0, 1, ()), LineCount(0, 0, 0, ())]


def test_a_line_keeps_its_first_few_wrong_matches_to_read() -> None:
    wrong = list(range(WRONG_EXAMPLES + 3))
    (count,) = line_counts([[100, *wrong]], lambda i: i == 100)
    assert (count.tp, count.fp, count.wrong) == (1, WRONG_EXAMPLES + 3, tuple(wrong[:WRONG_EXAMPLES]))


LINE_TEXTS = [
    "Roll a die twice.",  # 0 dice
    "The sample mean of the rolls of a die.",  # 1 dice
    "The sample mean of the heights.",  # 2 mean
    "The sample mean of the weights.",  # 3 mean
    "The sample mean of the ages.",  # 4 unlabelled
    "Toss a coin.",  # 5 coin
]
LINE_TRUTH: list[set[str] | None] = [{"dice"}, {"dice", "mean"}, {"mean"}, {"mean"}, None, {"coin"}]


def judged_lines(rules: list[Rule]) -> dict[tuple[str, int], LineFigures]:
    """Each rule's lines over the texts it matches (as the site reads them), judged by LINE_TRUTH."""
    found = extract_many(LINE_TEXTS, compile_rules(rules))
    out: dict[tuple[str, int], LineFigures] = {}
    for rule in rules:
        hits = branch_hits(rule, LINE_TEXTS, [i for i, f in enumerate(found) if rule.slug in f])
        out.update({(f.slug, f.number): f for f in (line_figures(hits, LINE_TRUTH) if hits else [])})
    return out


def test_every_line_of_every_rule_is_judged_on_the_labelled_problems_it_matches() -> None:
    rules = [Rule("dice", r"\bdie\b|\bsample\s+mean\b", True), Rule("mean", r"\bsample mean\b", True), Rule("coin", r"\bcoins?\b|\bheads\b", True)]
    lines = judged_lines(rules)
    # dice line 1 finds 0, 1 (right), and 0 alone; line 2 finds 1 (right, with line 1), 2, 3 (wrong); 4 is unlabelled.
    # Matches counts every text it matches, the unlabelled 4 too.
    assert lines[("dice", 1)] == LineFigures(slug="dice", number=1, text=r"\bdie\b", tp=2, fp=0, only_tp=1, matched=2)
    assert lines[("dice", 2)] == LineFigures(slug="dice", number=2, text=r"\bsample\s+mean\b", tp=1, fp=2, only_tp=0, wrong=(2, 3), matched=4)
    assert lines[("mean", 1)].tp == 3 and lines[("mean", 1)].fp == 0
    # A line that matches none of its rule's labelled matches is there with zeros (coin's "heads").
    assert lines[("coin", 1)] == LineFigures(slug="coin", number=1, text=r"\bcoins?\b", tp=1, fp=0, only_tp=1, matched=1)
    assert ("coin", 2) in lines and lines[("coin", 2)].tp == lines[("coin", 2)].fp == 0
    assert [(f.slug, f.number) for f in lines_to_look_at(list(lines.values()))] == [("dice", 2)]


def test_a_lines_matches_count_the_texts_in_scope_only() -> None:
    rule = Rule("dice", r"\bdie\b|\bsample\s+mean\b", True)
    hits = branch_hits(rule, LINE_TEXTS, [0, 1, 2, 3, 4])
    assert hits is not None
    # One collection's view: texts 0-2 in it (the others' labels are out of scope too).
    truth = [label if i <= 2 else None for i, label in enumerate(LINE_TRUTH)]
    assert [f.matched for f in line_figures(hits, truth, scope={0, 1, 2})] == [2, 2]
    assert [f.matched for f in line_figures(hits, truth)] == [2, 4]


def test_a_lines_snippet_shows_the_wording_it_matched_with_some_text_either_side() -> None:
    from concepts.rule_analysis import Snippet, line_snippets

    text = "Roll a die.  The Sample\n mean of the rolls is asked for here."
    assert line_snippets(r"\bsample\s+mean\b", True, [text, "Toss a coin."], width=12) == [
        Snippet(before="a die. The ", match="Sample mean", after=" of the roll", cut_before=True, cut_after=True),
        None,  # no match there
    ]
    assert line_snippets(r"\bsample\s+mean\b", True, [text]) == [Snippet(
        before="Roll a die. The ", match="Sample mean", after=" of the rolls is asked for here.", cut_before=False, cut_after=False
    )]
    assert line_snippets(r"\bsample\s+mean\b", False, [text]) == [None]  # case matters: no match
    assert line_snippets(r"(die)\s+\1", True, [text, text]) == [None, None]  # RE2 cannot run it alone


def test_lines_of_a_backtracking_rule_and_of_a_rule_matching_nothing_labelled_are_left_out() -> None:
    rules = [Rule("dice", r"\b(die)\b(?!x)|\bsample\b", True), Rule("mean", r"\bnothing here\b", True)]
    assert judged_lines(rules) == {}


def test_lines_to_look_at_put_the_most_lopsided_first() -> None:
    def line(slug: str, number: int, tp: int, fp: int) -> LineFigures:
        return LineFigures(slug=slug, number=number, text="x", tp=tp, fp=fp, only_tp=0)

    figures = [line("a", 1, 0, 1), line("b", 1, 1, 1), line("c", 2, 0, 3), line("c", 1, 1, 4), line("d", 1, 5, 0)]
    assert [(f.slug, f.number) for f in lines_to_look_at(figures)] == [("c", 1), ("c", 2), ("a", 1)]
