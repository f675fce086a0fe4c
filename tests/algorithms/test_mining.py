"""Phrase mining (concepts/mining.py): pure, no database."""

from __future__ import annotations

import re

import pytest

from concepts import extraction, mining
from concepts.mining import append_branch, branch_of, features, hint_stems, mine, text_of


def phrases_of(text: str, **kwargs: object) -> set[str]:
    return {text_of(f) for f in features(text, **kwargs)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text, present, absent",
    [
        ("Roll 2 dice.", {"roll", "dice", "roll # dice", "# dice"}, {"2", "#"}),
        ("Use the binomial distribution.", {"binomial distribution", "binomial", "distribution"}, {"the binomial", "the", "use the"}),
        ("A two-sided test", {"two sided test", "sided test"}, {"a two"}),
        ("type I error", {"type i error", "type", "error"}, {"i", "i error"}),
        ("With $n$ trials", {"trials"}, {"n trials", "n"}),  # math delimiters break a phrase
        ("Heads, tails", {"heads", "tails"}, {"heads tails"}),  # so does punctuation
        (r"Compute $\binom{n}{k}$", {r"\binom", "compute"}, {r"\binom{n}", "binom"}),
        (r"The mean $\bar{ x }$ and $\hat{p}$", {r"\bar", r"\bar{x}", r"\hat{p}", "mean"}, {"x"}),
        (r"\left( \frac{a}{b} \right) \sum_{i}", {r"\frac", r"\sum"}, {r"\left", r"\right"}),
        (r"\begin{tabular}{|lll|} Year & Count \end{tabular}", {r"\begin{tabular}", "year", "count"}, {"lll", r"\end"}),
        ("Sample  mean of the sample", {"sample mean", "sample"}, {"of the sample", "mean of the"}),
    ],
)
def test_features_are_word_ngrams_and_latex_commands(text: str, present: set[str], absent: set[str]) -> None:
    found = phrases_of(text)
    assert present <= found, present - found
    assert not absent & found, absent & found


def test_features_keep_case_for_a_case_sensitive_rule() -> None:
    assert "Poisson" in phrases_of("A Poisson process", ignore_case=False)
    assert "poisson" in phrases_of("A Poisson process")


@pytest.mark.parametrize(
    "text",
    [
        "Roll 12 dice, then roll 3 more dice; a two-sided test of the sample mean.",
        r"Let $\bar{x}$ be the mean and $\binom{10}{3}$ the count; \sum_{i=1}^n x_i over a\_b.",
        "Type-I error rate 0.05 at the 5% level (two-tailed) in 2 samples",
    ],
)
def test_every_feature_branch_matches_the_text_it_came_from_and_is_a_plain_valid_branch(text: str) -> None:
    for feature in features(text):
        branch = branch_of(feature)
        assert re.search(branch, text, re.I | re.A), (text_of(feature), branch)
        assert extraction.check_pattern(branch) == extraction.ENGINE_RE2
        assert [b.gapped for b in extraction.split_branches(branch)] == [False]  # joins the fast set


@pytest.mark.parametrize(
    "feature, matches, misses",
    [
        (("w", ("sample", "mean")), ["the sample mean", "sample-mean", "sample\n mean"], ["samples mean", "sample meaning", "resample mean"]),
        (("w", ("roll", "#", "dice")), ["roll 12 dice"], ["roll x dice", "roll 1.5dice"]),
        (("c", "binom", None), [r"$\binom{n}{k}$", r"\binom"], [r"\binomial", "binom"]),
        (("c", "sum", None), [r"\sum_{i}"], [r"\summa"]),
        (("c", "bar", "x"), [r"\bar{x}", r"\bar { x }"], [r"\bar{y}", r"\bar x"]),
    ],
)
def test_branches_are_escaped_and_word_bounded(feature: tuple, matches: list[str], misses: list[str]) -> None:
    pattern = re.compile(branch_of(feature), re.A | re.I)
    assert all(pattern.search(t) for t in matches)
    assert not any(pattern.search(t) for t in misses)


def test_a_phrase_with_regex_characters_is_escaped() -> None:
    assert branch_of(("w", ("a+b",))) == r"\ba\+b\b"  # never produced by the tokenizer, but escaped all the same


@pytest.mark.parametrize(
    "pattern, branch, expected",
    [("", r"\bx\b", r"\bx\b"), ("   ", r"\bx\b", r"\bx\b"), (r"\bbinom", r"\bnCr\b", r"\bbinom|\bnCr\b")],
)
def test_append_branch(pattern: str, branch: str, expected: str) -> None:
    assert append_branch(pattern, branch) == expected


# A bank for one concept, "sample-mean": labels True/False/None, and what the current pattern matches.
BANK = [
    ("Find the sample mean of 3, 5, 7.", True, True),  # 0: already matched
    ("Compute the average of the data 2, 4, 9.", True, False),  # 1: FN
    ("What is the average of these marks?", True, False),  # 2: FN
    ("Give the average score and its spread.", True, False),  # 3: FN
    ("The average speed of a car is 50 km/h; find the time.", False, False),  # 4: negative with "average"
    ("Roll a die twice; find P(sum = 7).", False, False),  # 5: negative
    ("The average of the class was reported.", None, False),  # 6: unlabelled
    ("Compute the variance of the data 1, 2.", False, True),  # 7: FP the pattern has already
    (r"A median $\tilde{x}$ of the data.", True, False),  # 8: FN, its own words
]


def run(**kwargs: object) -> mining.Mining:
    texts, labels, matched = zip(*BANK)
    return mine(list(texts), list(labels), list(matched), **kwargs)  # type: ignore[arg-type]


def test_counts_are_exact_on_the_problems_the_pattern_does_not_match() -> None:
    result = run()
    assert (result.positives, result.negatives, result.missed) == (5, 3, 4)
    by_text = {p.text: p for p in run(limit=1000, suggestions=0).phrases}
    average = by_text["average"]
    assert average.recovered == (1, 2, 3)  # the three FN with "average"
    assert average.false_positives == (4,)  # the negative; 7 is matched already, so no new FP
    assert (average.positives, average.negatives, average.unlabelled) == (3, 1, 1)
    data = by_text["data"]
    # "data" is in 1, 7 and 8: 7 is matched already, so it adds no FP but counts as a negative overall.
    assert (data.recovered, data.false_positives, data.positives, data.negatives) == ((1, 8), (), 2, 1)
    for phrase in by_text.values():  # what the branch itself matches, checked with Python's re
        pattern = re.compile(phrase.branch, re.I | re.A)
        uncovered = [i for i, (t, _, hit) in enumerate(BANK) if not hit and pattern.search(t)]
        assert phrase.recovered == tuple(i for i in uncovered if BANK[i][1] is True)
        assert phrase.false_positives == tuple(i for i in uncovered if BANK[i][1] is False)
        assert phrase.unlabelled == sum(1 for i in uncovered if BANK[i][1] is None)


def test_nested_phrases_of_the_same_effect_keep_the_most_general_one() -> None:
    texts = [p.text for p in run(limit=1000, suggestions=0).phrases]
    assert "average" in texts and "the average" not in texts
    assert "average of" not in texts  # ends with a function word: never a phrase
    # Only problem 3 has "give", "score", "spread" and "average score": one row, the other words as
    # its alternatives, less "average score", which is "score" and more.
    [three] = [p for p in run(limit=1000, suggestions=0).phrases if p.recovered == (3,)]
    words = {three.text} | {text for text, _ in three.alternatives}
    assert {"give", "score", "spread"} <= words and "average score" not in words
    assert dict(three.alternatives)["spread"] == r"\bspread\b"
    [eight] = [p for p in run(limit=1000, suggestions=0).phrases if p.recovered == (8,)]
    assert r"\tilde" in {eight.text} | dict(eight.alternatives).keys()
    assert r"\tilde{x}" not in {eight.text} | dict(eight.alternatives).keys()  # nested in \tilde


def test_phrases_that_match_as_many_wrong_problems_as_right_are_dropped() -> None:
    texts = [p.text for p in run(limit=1000, suggestions=0).phrases]
    assert "find" not in texts  # in FN 0 (matched already) only, and in two negatives


def test_suggestions_are_greedy_and_count_what_is_left() -> None:
    result = run(fp_weight=0.5, min_precision=0)
    steps = [(s.phrase.text, s.fn_recovered, s.fp_added, s.fn_left) for s in result.suggestions]
    assert steps[0][:2] == ("average", 3) and steps[0][3] == 1
    # Each later step counts only what the earlier ones left: the FN "data" shares with "average" is not counted again.
    assert all(fn >= 1 for _, fn, _, _ in steps)
    assert [left for *_, left in steps] == sorted((left for *_, left in steps), reverse=True)
    assert sum(fn for _, fn, _, _ in steps) == result.missed - steps[-1][3]


def test_a_heavy_fp_weight_suggests_nothing_that_adds_a_false_positive() -> None:
    result = run(fp_weight=100, min_precision=0)
    assert result.suggestions and all(s.fp_added == 0 for s in result.suggestions)


def test_only_phrases_expected_to_be_right_often_enough_are_suggested() -> None:
    result = run(min_precision=0.99)
    assert result.phrases and result.suggestions == []


def test_the_concepts_own_words_lift_a_phrase() -> None:
    # One positive among twelve problems: "median" and "ages" are equally good evidence, but
    # "median" is a word of the concept's own definition.
    texts = ["Find the median of these ages."] + [f"Roll die number {i} twice." for i in range(11)]
    labels = [True] + [False] * 11
    plain = {p.text: p for p in mine(texts, labels, [False] * 12, limit=100).phrases}
    hinted = {p.text: p for p in mine(texts, labels, [False] * 12, limit=100, hints=frozenset({"median"})).phrases}
    assert "median" in dict(plain["ages"].alternatives)  # the same evidence: one choice, two words
    assert hinted["median"].precision > hinted["ages"].precision == plain["ages"].precision
    assert hinted["median"].score > hinted["ages"].score
    suggested = mine(texts, labels, [False] * 12, hints=frozenset({"median"})).suggestions
    assert [s.phrase.text for s in suggested] == ["median"]
    assert mine(texts, labels, [False] * 12).suggestions == []  # one problem, no hint: too little to go on


def test_hint_stems_drop_words_most_concepts_share() -> None:
    others = [f"Solving requires computing a probability of topic {i}" for i in range(30)]
    stems = hint_stems("Solving requires computing the sample median of a data set", others + ["the sample median"])
    assert {"median", "sample"} <= stems
    assert not {"solvin", "requir", "comput"} & stems


def test_nothing_missed_nothing_mined_and_an_empty_pattern_mines_every_positive() -> None:
    texts, labels, _ = zip(*BANK)
    everything = mine(list(texts), list(labels), [True] * len(BANK))
    assert (everything.missed, everything.phrases, everything.suggestions) == (0, [], [])
    nothing = mine(list(texts), list(labels), [False] * len(BANK))
    assert nothing.missed == 5 and nothing.phrases


def test_a_case_sensitive_rule_gets_case_sensitive_branches() -> None:
    texts = ["A Poisson process.", "A poisson fish.", "Nothing here."]
    result = mine(texts, [True, False, False], [False, False, False], ignore_case=False, fp_weight=0.1, limit=50)
    poisson = {p.text: p for p in result.phrases}["Poisson"]
    assert poisson.branch == r"\bPoisson\b" and poisson.false_positives == ()
    folded = {p.text: p for p in mine(texts, [True, False, False], [False] * 3, limit=50).phrases}
    assert "poisson" not in folded  # ignoring case it matches the negative as often as the positive: no separation


def test_inputs_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 texts, 1 labels and 2 matches"):
        mine(["a", "b"], [True], [False, False])
