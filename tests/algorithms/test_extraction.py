"""The pure rule engine: table-driven cases, engines, safety, evaluation arithmetic."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

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


def plain_re_matches(rules: list[Rule], texts: list[str]) -> list[set[str]]:
    """The reference: each rule's whole pattern searched with Python `re`, text by text, and its
    statement-only pattern (``Rule.statement_pattern``) in the text's statement alone."""

    def compiled(pattern: str, ignore_case: bool) -> re.Pattern[str] | None:
        return re.compile(pattern, re.ASCII | (re.IGNORECASE if ignore_case else 0)) if pattern else None

    plain = [(r.slug, compiled(r.pattern, r.ignore_case), compiled(r.statement_pattern, r.ignore_case)) for r in rules]
    return [
        {slug for slug, p, s in plain if (p is not None and p.search(t)) or (s is not None and s.search(extraction.statement_of(t)))}
        for t in texts
    ]


@pytest.fixture(scope="module")
def compiled() -> extraction.CompiledRules:
    return compile_rules(RULES)


@pytest.mark.parametrize("text, expected", VALID_CASES.items())
def test_extract(compiled: extraction.CompiledRules, text: str, expected: set[str]) -> None:
    assert extract(text, compiled) == expected


def test_results_are_identical_to_a_plain_re_loop(compiled: extraction.CompiledRules) -> None:
    texts = list(VALID_CASES) + [t.upper() for t in VALID_CASES] + ["P(X \\mid Y) the the \\binom poisson with replacement"]
    for text, expected in zip(texts, plain_re_matches(RULES, texts)):
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


SLOW_BACKREFERENCE = r"\A(.{0,120})(.{0,120})(.{0,120})\3\d{7}"  # ~0.05 s a 150-character text on `regex`


def test_a_slow_fallback_rule_stops_at_its_budget_over_all_texts() -> None:
    texts = ["x" * 150] * 40  # each well under the per-text limit; together far over the budget
    compiled = compile_rules([Rule("slow", SLOW_BACKREFERENCE), Rule("fine", r"(?<=x)y")], timeout=5, budget=0.1)
    with pytest.raises(extraction.RuleBudgetExceeded) as caught:
        extraction.extract_many(texts, compiled)
    assert caught.value.slug == "slow" and "time budget of 0.1s" in str(caught.value)
    # Stopped before the end of the bank; how many texts fit in 0.1 s depends on the machine's load (0 is possible).
    assert caught.value.texts_done < len(texts)
    # The budget is per pass: a fresh compile starts again; without a budget only the per-text limit holds.
    assert extraction.extract_many(texts[:2], compile_rules([Rule("slow", SLOW_BACKREFERENCE)], timeout=5, budget=None)) == [set(), set()]
    with pytest.raises(extraction.RuleBudgetExceeded):
        extraction.preview(SLOW_BACKREFERENCE, True, texts, timeout=5, budget=0.1)


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
    # Pooled over concepts: 3 right, 2 wrong, 1 missed.
    assert (result.total("tp"), result.total("fp"), result.total("fn")) == (3, 2, 1)
    assert (result.micro_recall, result.micro_precision) == (3 / 4, 3 / 5)
    assert evaluate([set()], [set()], ["a"]).micro_precision is None


def test_evaluate_refuses_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="2 predictions for 1 problems"):
        evaluate([set(), set()], [set()], ["a"])


# --- Rules with gaps: branches split by kind, matched in different sets, results unchanged ---------


# pattern -> its top-level branches, each (text, has a gap)
SPLIT_CASES = {
    r"\bwithout\b[^.?]*\breplacement\b": [(r"\bwithout\b[^.?]*\breplacement\b", True)],
    r"\bpoisson\b|\bgiven\b[^.?]*\bthat\b": [(r"\bpoisson\b", False), (r"\bgiven\b[^.?]*\bthat\b", True)],
    # A gap inside an alternation inside a group makes its whole top-level branch gapped.
    r"\b(urn[^.?]*ball|coin)\b|\bdie\b": [(r"\b(urn[^.?]*ball|coin)\b", True), (r"\bdie\b", False)],
    # Nested groups, the gap three levels down; a `|` inside a group does not split.
    r"(?:x(?:y(?:[^.?]|\.\d)*z))|w": [(r"(?:x(?:y(?:[^.?]|\.\d)*z))", True), ("w", False)],
    r"(a|b)[^.?]*c": [(r"(a|b)[^.?]*c", True)],
    # Repetitions that stay within a word, a number or a run of spaces are no gaps.
    r"\bE\s*\[|\b\w+[- ]card hand|\$\d+\$": [(r"\bE\s*\[", False), (r"\b\w+[- ]card hand", False), (r"\$\d+\$", False)],
    r"\b[\w ]+ or is\b": [(r"\b[\w ]+ or is\b", True)],
    r"\bsample (mean)( \w+)* exceeds": [(r"\bsample (mean)( \w+)* exceeds", True)],
    r"\bwhether [^.?$]{3,}\bis\b|\ba[^.?]{0,60}b|\ba[^.?]?b": [
        (r"\bwhether [^.?$]{3,}\bis\b", True), (r"\ba[^.?]{0,60}b", True), (r"\ba[^.?]?b", False)],
    # Inside a character class or escaped, `|`, `*` and `[^` are plain characters.
    r"a[|]b|c\|d|e[*^.?]f": [("a[|]b", False), (r"c\|d", False), ("e[*^.?]f", False)],
    # Case flags: a scoped group is read through; a gap in it still counts.
    r"(?-i:\$[A-Z][^$]*\$)|\bvar\b": [(r"(?-i:\$[A-Z][^$]*\$)", True), (r"\bvar\b", False)],
    # Not sure (lookaround, global flags, verbose mode, comments): the whole pattern, counted gapped.
    r"(?=a[^.?]*b)c|d": [(r"(?=a[^.?]*b)c|d", True)],
    r"(?i)a[^.?]*b|c": [(r"(?i)a[^.?]*b|c", True)],
    r"(?x: a b )|c": [(r"(?x: a b )|c", True)],
    r"a(?#[|)b|c": [(r"a(?#[|)b|c", True)],
}


@pytest.mark.parametrize("pattern, expected", SPLIT_CASES.items())
def test_split_branches(pattern: str, expected: list[tuple[str, bool]]) -> None:
    assert [(b.text, b.gapped) for b in extraction.split_branches(pattern)] == expected
    assert "|".join(b.text for b in extraction.split_branches(pattern)) == pattern


GAPPED_RULES = [
    Rule("hypergeometric", r"\bhypergeometric\b|\bwithout replacement\b[^?]*\b(exactly|the number of)\b"),
    Rule("same-sentence", r"\btest\w*\b(?:[^.?]|\.\d)*\bequal variances"),
    Rule("in-group", r"\b(urn\b[^.?]*\bball|coin)s?\b"),
    Rule("nested", r"(?:\bgiven (?:the|its) (?:[^.?,]*, (?:[^.?]|\.\d)*\bindependent))"),
    Rule("case-sensitive", r"(?-i:\$[A-Z]\s*=\s*[^$]*[A-Z]\$)|\bfunction of\b"),
    Rule("plain-case", r"\bF\b[^.?]*\bratio", ignore_case=False),
]

GAPPED_CASES = {
    "Drawn without replacement; find the number of red balls.": {"hypergeometric"},
    "Drawn WITHOUT REPLACEMENT? Find the number of red balls.": set(),  # `[^?]*` stops at the `?`
    "A HYPERGEOMETRIC law.": {"hypergeometric"},
    "We test whether the equal variances hold.": {"same-sentence"},
    "We test it. Equal variances hold.": set(),  # another sentence
    "Testing at 0.5 and 2.5 for equal variances": {"same-sentence"},  # `\.\d` crosses a decimal point
    "An urn with one red ball": {"in-group"},
    "Toss two coins": {"in-group"},
    "An urn. One ball.": set(),
    "Given the rain, are X and Y independent?": {"nested"},
    "Given the rain. X and Y are independent.": set(),
    "Let $Y = 2X$ here": {"case-sensitive"},
    "let $y = 2x$ here": set(),  # the gapped branch is case-sensitive
    "A FUNCTION OF X": {"case-sensitive"},
    "The F statistic is a ratio": {"plain-case"},
    "the f statistic is a ratio": set(),
}


@pytest.fixture(scope="module")
def gapped_compiled() -> extraction.CompiledRules:
    return compile_rules(GAPPED_RULES)


@pytest.mark.parametrize("text, expected", GAPPED_CASES.items())
def test_rules_with_gaps(gapped_compiled: extraction.CompiledRules, text: str, expected: set[str]) -> None:
    assert extract(text, gapped_compiled) == expected
    assert extraction.extract_many([text], gapped_compiled) == [expected]
    assert plain_re_matches(GAPPED_RULES, [text]) == [expected]


def test_gapped_branches_are_matched_apart(gapped_compiled: extraction.CompiledRules) -> None:
    # Every rule keeps its branches without a gap in the plain sets; the rest go to the gapped sets.
    assert sorted(slug for _, slugs in gapped_compiled.plain_sets for slug in slugs) == ["case-sensitive", "hypergeometric"]
    apart = sorted(slug for _, slugs in gapped_compiled.gapped_sets for slug in slugs)
    assert apart == sorted(r.slug for r in GAPPED_RULES)


def _demo_rules() -> list[Rule]:
    from problems.demo_course import demo_rules  # pure: the package reads files only

    return [Rule.of(slug, s) for slug, s in sorted(demo_rules().items())]


def _random_texts(rules: list[Rule], seed: int, count: int) -> list[str]:
    """Texts made of the rules' own words, in random order and case, with sentence ends, commas,
    decimals, formulas and parentheses between them, so that gaps open and close."""
    words = sorted({w for r in rules for w in re.findall(r"[A-Za-z]{2,}", re.sub(r"\\[a-zA-Z]", " ", r.pattern + " " + r.statement_pattern))})
    # A solution heading now and then: what follows it is read by the first box only (statement-only branches).
    glue = [". ", "? ", ", ", " ", " ", " ", " 0.5 ", " $X = 2Y$ ", " (", ") ", " $", "$ ", " | ", " \\mid ", f"\n\n{extraction.SOLUTION_HEADING} "]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(3, 40)):
            word = rng.choice(words)
            parts.append(rng.choice([word, word.lower(), word.upper(), word.capitalize()]))
            parts.append(rng.choice(glue))
        texts.append("".join(parts))
    return texts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_demo_rules_agree_with_re_on_random_texts(seed: int) -> None:
    rules = _demo_rules()
    texts = _random_texts(rules, seed, 400)
    expected = plain_re_matches(rules, texts)
    compiled = compile_rules(rules)
    assert extraction.extract_many(texts, compiled) == expected
    assert [extract(t, compiled) for t in texts] == expected
    assert sum(map(len, expected)) > len(texts)  # the texts do exercise the rules


@pytest.mark.parametrize("plain, gapped", [(1, 1), (1, 3), (3, 2), (4, 4)])
def test_results_do_not_depend_on_how_branches_are_grouped(monkeypatch: pytest.MonkeyPatch, plain: int, gapped: int) -> None:
    rules = _demo_rules()
    texts = _random_texts(rules, 7, 200)
    reference = extraction.extract_many(texts, compile_rules(rules))
    monkeypatch.setattr(extraction, "GAPPED_SETS", gapped)
    monkeypatch.setattr(extraction, "MAIN_SETS", plain)
    compiled = compile_rules(rules)
    assert (len(compiled.plain_sets), len(compiled.gapped_sets)) == (plain, gapped)
    assert extraction.extract_many(texts, compiled) == reference


def test_the_statement_pass_reads_its_few_branches_in_one_set() -> None:
    # One set, one call per statement (stop 42: about a tenth of the time over 100,000 problems); the
    # answers are those of the statement patterns spread like the main ones, and of the `re` loop.
    rules = _demo_rules()
    compiled = compile_rules(rules)
    assert compiled.statement is not None
    assert (len(compiled.statement.plain_sets), len(compiled.statement.gapped_sets)) == (0, 1)
    statement_rules = [Rule(r.slug, r.statement_pattern, r.ignore_case) for r in rules if r.statement_pattern]
    spread = dataclasses.replace(compiled, statement=compile_rules(statement_rules, spread=True))
    assert len(spread.statement._sets) > 1
    texts = _random_texts(rules, 11, 300)
    expected = plain_re_matches(rules, texts)
    assert extraction.extract_many(texts, compiled) == extraction.extract_many(texts, spread) == expected
    assert sum(1 for t in texts if extraction.extract(extraction.statement_of(t), compiled.statement)) > 10  # exercised


def test_extract_many_reports_the_runaway_text_by_its_index() -> None:
    compiled = compile_rules([Rule("poisson", r"\bpoisson\b"), Rule("evil", r"(a|aa)+(?=b)")], timeout=0.1)
    with pytest.raises(RuleTimeout, match=r"on text 2 "):
        extraction.extract_many(["poisson", "b", "a" * 40 + "!"], compiled)


def test_preview_of_a_rule_with_a_gap() -> None:
    found = extraction.preview(r"\bwithout\b[^.?]*\breplacement\b", True, ["Without any replacement", "without. replacement"])
    assert [(m.index, m.spans) for m in found] == [(0, [(0, 23)])]


@pytest.mark.parametrize(
    "text, solution, expected",
    [
        ("Find $P(X=2)$.", None, "Find $P(X=2)$."),
        ("Find $P(X=2)$.", "", "Find $P(X=2)$."),
        ("Find $P(X=2)$.", "  \n", "Find $P(X=2)$."),
        ("Find $P(X=2)$.", "X is Poisson.", "Find $P(X=2)$.\n\nSolution: X is Poisson."),
    ],
)
def test_what_the_rules_read_is_the_statement_then_the_solution_under_its_heading(text: str, solution: str | None, expected: str) -> None:
    assert extraction.rule_text(text, solution) == expected


def test_a_footprint_in_the_solution_is_found_and_no_starter_rule_matches_the_heading() -> None:
    compiled = compile_rules(RULES)
    assert extract("Find the count.", compiled) == set()
    assert extract(extraction.rule_text("Find the count.", "It is Poisson."), compiled) == {"Poisson-distribution"}
    starter = compile_rules(_demo_rules())
    assert extract(extraction.rule_text("", "x"), starter) == extract("x", starter) == set()
