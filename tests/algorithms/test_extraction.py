"""The pure rule engine: table-driven cases, engines, safety, evaluation arithmetic."""

from __future__ import annotations

import re

import pytest

from concepts import extraction
from concepts.extraction import Rule, RuleError, RuleTimeout, compile_rules, evaluate, extract, match_spans

NCHOOSEK = r"\\binom|\\choose|\\frac\{\s*\w+!\s*\}\{\s*\w+!\s*\\times\s*\w+!\s*\}"
RULES = [
    Rule("nchoosek", NCHOOSEK),
    Rule("Poisson-distribution", r"\bpoisson\b"),
    Rule("conditional-probability", r"P\(\s*[^()|]*\\mid", ignore_case=False),
    Rule("with-without-replacement", r"\bwith(out)?\s+replacement\b"),
    Rule("repeated-word", r"\b(\w+) \1\b"),  # a backreference: runs on the backtracking engine
]

VALID_CASES = {
    "How many hands? $\\binom{52}{5}$": {"nchoosek"},
    "Use ${n \\choose k}$ here": {"nchoosek"},
    "$\\frac{10!}{3! \\times 7!}$": {"nchoosek"},
    "Arrivals are POISSON with rate 2": {"Poisson-distribution"},
    "Poissonian noise": set(),
    "Find $P(A \\mid B)$": {"conditional-probability"},
    "find $p(A \\mid B)$": set(),  # case-sensitive rule
    "drawn without  replacement": {"with-without-replacement"},
    "the the end": {"repeated-word"},
    "": set(),
    "Binomial coefficients without the command": set(),
}


@pytest.fixture(scope="module")
def compiled() -> extraction.CompiledRules:
    return compile_rules(RULES)


@pytest.mark.parametrize("text, expected", VALID_CASES.items())
def test_extract(compiled: extraction.CompiledRules, text: str, expected: set[str]) -> None:
    assert extract(text, compiled) == expected


def test_results_are_identical_to_a_plain_re_loop(compiled: extraction.CompiledRules) -> None:
    texts = list(VALID_CASES) + [t.upper() for t in VALID_CASES] + ["P(X \\mid Y) the the \\binom poisson with replacement"]
    for text in texts:
        expected = {
            r.slug
            for r in RULES
            if re.search(r.pattern, text, re.ASCII | (re.IGNORECASE if r.ignore_case else 0))
        }
        assert extract(text, compiled) == expected, text


def test_re2_takes_what_it_can_and_the_rest_runs_under_a_time_limit(compiled: extraction.CompiledRules) -> None:
    assert compiled.engines == {
        "nchoosek": "re2",
        "Poisson-distribution": "re2",
        "conditional-probability": "re2",
        "with-without-replacement": "re2",
        "repeated-word": "regex",
    }
    assert compiled.set_slugs == ["nchoosek", "Poisson-distribution", "conditional-probability", "with-without-replacement"]


def test_the_catastrophic_pattern_comes_back_at_once() -> None:
    compiled = compile_rules([Rule("evil", r"(a+)+$")])
    # It runs on re2, which is linear in the text: a plain `re` would take minutes on this text.
    # (No wall clock in tests; benchmarks/extract.py prints how long it takes.)
    assert compiled.engines == {"evil": "re2"}
    assert extract("a" * 30 + "!", compiled) == set()
    assert extract("a" * 30, compiled) == {"evil"}


def test_a_runaway_backtracking_pattern_is_stopped_with_a_clear_error() -> None:
    compiled = compile_rules([Rule("evil", r"(a|aa)+(?=b)")], timeout=0.1)
    assert compiled.engines == {"evil": "regex"}  # lookahead: the backtracking engine, under its time limit
    with pytest.raises(RuleTimeout, match=r"rule 'evil' took longer than 0.1s on text 7"):
        extract("a" * 40 + "!", compiled, text_index=7)


INVALID_PATTERNS = {
    "(unclosed": ("missing ), unterminated subpattern", 0),
    "a**": ("multiple repeat", 2),
    "[z-a]": ("bad character range z-a", 1),
    "": ("the pattern is empty", None),
    "a|": ("the pattern matches the empty string", None),
    "x" * (extraction.MAX_PATTERN_LENGTH + 1): ("longer than", None),
}


@pytest.mark.parametrize("pattern, expected", INVALID_PATTERNS.items())
def test_invalid_patterns_are_refused_with_message_and_position(pattern: str, expected: tuple[str, int | None]) -> None:
    message, position = expected
    with pytest.raises(RuleError) as info:
        extraction.check_pattern(pattern)
    assert message in info.value.message and info.value.position == position


def test_compile_rules_names_the_bad_rule() -> None:
    with pytest.raises(RuleError, match=r"^broken: missing \)"):
        compile_rules([Rule("ok", "fine"), Rule("broken", "(x")])


def test_match_spans_are_character_offsets(compiled: extraction.CompiledRules) -> None:
    text = "é $\\binom{5}{2}$ and \\choose"
    spans = match_spans(text, compiled, "nchoosek")
    assert [text[a:b] for a, b in spans] == ["\\binom", "\\choose"]


def test_preview_lists_matches_with_spans() -> None:
    found = extraction.preview(r"di(e|ce)", True, ["Roll a DIE", "coins", "two dice"])
    assert [(m.index, m.spans) for m in found] == [(0, [(7, 10)]), (2, [(4, 8)])]


def test_evaluate_on_a_hand_computed_case() -> None:
    predicted = [{"a"}, {"a", "b"}, set(), {"b"}, {"a"}]
    truth = [{"a"}, {"b"}, {"a"}, {"b"}, set()]
    result = evaluate(predicted, truth, ["a", "b", "c"])
    a, b, c = result.concepts["a"], result.concepts["b"], result.concepts["c"]
    assert (a.tp, a.fp, a.fn, a.tn) == (1, 2, 1, 1)
    assert (a.fp_rate, a.fn_rate) == (2 / 3, 1 / 2)
    assert (b.tp, b.fp, b.fn, b.tn) == (2, 0, 0, 3) and (b.fp_rate, b.fn_rate) == (0.0, 0.0)
    assert (c.fp_rate, c.fn_rate) == (0.0, None)  # no positives: FN rate undefined, left out of the mean
    assert result.fp_rate == pytest.approx((2 / 3 + 0 + 0) / 3)
    assert result.fn_rate == pytest.approx((1 / 2 + 0) / 2)
    assert result.as_dict()["average"] == {"fp_rate": result.fp_rate, "fn_rate": result.fn_rate}


def test_evaluate_refuses_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="2 predictions for 1 problems"):
        evaluate([set(), set()], [set()], ["a"])
