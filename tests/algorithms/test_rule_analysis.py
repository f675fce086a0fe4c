"""Rule analysis (concepts/rule_analysis.py): pure, no database."""

from __future__ import annotations

import pytest

from concepts.rule_analysis import DiffLine, analyse, rule_lines, version_diff

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
