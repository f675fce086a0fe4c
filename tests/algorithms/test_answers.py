from __future__ import annotations

import random

import pytest

from problems.answers import AnswerCheck, check_answer, expected_numbers, parse_number

PARSE_CASES = {
    # plain numbers
    "120": 120,
    "0.3125": 0.3125,
    ".3125": 0.3125,
    "5.": 5,
    "+2": 2,
    # thousands separators
    "18,000": 18000,
    "1,234.5": 1234.5,
    "18{,}000": 18000,
    "18\\,000": 18000,
    # scientific notation
    "1.2e2": 120,
    "1.2e-3": 0.0012,
    "3E4": 30000,
    "1.2 \\times 10^{-3}": 0.0012,
    "1.2×10^-3": 0.0012,
    "2 \\cdot 10^{3}": 2000,
    # fractions, plain and LaTeX
    "5/16": 0.3125,
    "5 / 16": 0.3125,
    "\\frac{5}{16}": 0.3125,
    "$\\frac{5}{16}$": 0.3125,
    "\\dfrac{5}{16}": 0.3125,
    "\\tfrac{5}{16}": 0.3125,
    "\\frac12": 0.5,
    "\\frac{\\frac{1}{2}}{2}": 0.25,
    # percentages
    "31.25%": 0.3125,
    "31.25\\%": 0.3125,
    "31.25 %": 0.3125,
    "12.5 percent": 0.125,
    "$12.5\\%$": 0.125,
    # signs
    "-1.5": -1.5,
    "\u22121.5": -1.5,
    "$-\\frac{3}{2}$": -1.5,
    "E[X] = -0.2": -0.2,
    "-5/16": -0.3125,
    # words, symbols and left-hand sides around the number
    "about 0.0228": 0.0228,
    "\u2248 0.0228": 0.0228,
    "\\approx 0.0228": 0.0228,
    "P = 0.31": 0.31,
    "P(X=3) = 0.2": 0.2,
    "P(Z > 2) \\approx 0.0228": 0.0228,
    "\\binom{10}{3} = 120": 120,
    "X_1 = 4": 4,
    # small expressions we evaluate
    "\\binom{10}{3}": 120,
    "{10 \\choose 3}": 120,
    "0.5^{10}": 0.5**10,
    "2^3": 8,
}

NO_NUMBER_CASES = [
    "",
    "   ",
    "Reject H0",
    "reject $H_0$",
    "E[X] = 3.5, Var(X) = 2.92",  # two numbers: ambiguous
    "(0.42, 0.58)",
    "1 or 2",
    "1/0",
    "1e999",
    "no idea",
]


@pytest.mark.parametrize("text, value", PARSE_CASES.items())
def test_parse_number(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", NO_NUMBER_CASES)
def test_parse_number_none_without_a_single_number(text: str) -> None:
    assert parse_number(text) is None


EXPECTED_NUMBER_CASES = {
    "0.3125": [0.3125],
    "5/16": [0.3125],
    "$\\frac{5}{16}$": [0.3125],
    "\\binom{10}{3} = 120": [120],
    "about 0.0228": [0.0228],
    "12.5%": [0.125],
    "E[X] = 3.5, Var(X) = 2.92": [3.5, 2.92],
    "E[X] = 3.5; Var(X) = 2.92": [3.5, 2.92],
    "Reject H0": [],
    "Fail to reject $H_0$": [],
    "(0.42, 0.58)": [0.42, 0.58],
    "(0.42,0.58)": [0.42, 0.58],
    "[-1.96, 1.96]": [-1.96, 1.96],
    "120": [120],
    "18,000": [18000],
    "18,000, 20,000": [18000, 20000],
    "2\\frac{1}{2}": [2, 0.5],  # not read as 20.5 or 21/2
    "\\frac{1}{0}": [],
    "": [],
}


@pytest.mark.parametrize("answer, numbers", EXPECTED_NUMBER_CASES.items())
def test_expected_numbers(answer: str, numbers: list[float]) -> None:
    assert expected_numbers(answer) == pytest.approx(numbers)


C, I, U = "correct", "incorrect", "unchecked"

CHECK_CASES = [
    # (given, expected, verdict)
    # decimals and rounding within 1%
    ("0.3125", "0.3125", C),
    ("0.31", "0.3125", C),
    (".3125", "0.3125", C),
    ("0.313", "0.3125", C),
    ("0.4", "0.3125", I),
    ("0.3", "0.3125", I),
    # fractions and LaTeX on either side
    ("5/16", "0.3125", C),
    ("5/16", "5/16", C),
    ("0.31", "5/16", C),
    ("5/17", "5/16", I),
    ("5/17", "0.3125", I),
    ("\\frac{5}{16}", "5/16", C),
    ("$\\dfrac{5}{16}$", "0.3125", C),
    ("0.3125", "$\\frac{5}{16}$", C),
    ("5/16", "$\\frac{5}{16}$", C),
    ("\\frac{1}{3}", "$\\frac{5}{16}$", I),
    # percentages
    ("31.25%", "0.3125", C),
    ("31.25\\%", "5/16", C),
    ("31%", "0.3125", C),
    ("40%", "0.3125", I),
    ("12.5%", "12.5%", C),
    ("0.125", "12.5%", C),
    ("1/8", "12.5%", C),
    ("12.5", "12.5%", C),  # percentage written without its sign
    ("31.25%", "31.25", C),
    ("0.5%", "0.5", I),  # 0.5 can be a probability: 0.5% is not 0.5
    ("0.125%", "12.5%", I),
    ("13", "12.5%", I),
    # counts, scientific notation, thousands separators
    ("120", "120", C),
    ("1.2e2", "120", C),
    ("121", "120", C),
    ("125", "120", I),
    ("\\binom{10}{3}", "\\binom{10}{3} = 120", C),
    ("120", "\\binom{10}{3} = 120", C),
    ("10", "\\binom{10}{3} = 120", I),
    ("18000", "18,000", C),
    ("18,000", "18000", C),
    ("18,100", "18,000", C),
    ("19,000", "18,000", I),
    ("1.8e4", "18{,}000", C),
    # approximations: the absolute floor near zero
    ("0.0228", "about 0.0228", C),
    ("0.023", "about 0.0228", C),
    ("2.28%", "about 0.0228", C),
    ("0.03", "about 0.0228", I),
    ("0", "0", C),
    ("0.0004", "0", C),
    ("0.01", "0", I),
    # negative numbers
    ("-1.5", "-1.5", C),
    ("\u22121.5", "-1.5", C),
    ("$-\\frac{3}{2}$", "-1.5", C),
    ("1.5", "-1.5", I),
    ("-0.2", "E[X] = -0.2", C),
    # several numbers: order and count matter
    ("3.5, 2.92", "E[X] = 3.5, Var(X) = 2.92", C),
    ("E[X] = 3.5, Var(X) = 2.917", "E[X] = 3.5, Var(X) = 2.92", C),
    ("3.5; 2.9", "E[X] = 3.5, Var(X) = 2.92", C),
    ("2.92, 3.5", "E[X] = 3.5, Var(X) = 2.92", I),
    ("3.5", "E[X] = 3.5, Var(X) = 2.92", I),
    ("3.5, 2.92, 1", "E[X] = 3.5, Var(X) = 2.92", I),
    ("(0.42, 0.58)", "(0.42, 0.58)", C),
    ("0.42, 0.58", "(0.42, 0.58)", C),
    ("[0.42; 0.58]", "(0.42, 0.58)", C),
    ("0.42 to 0.58", "(0.42, 0.58)", C),
    ("0.58, 0.42", "(0.42, 0.58)", I),
    ("0.42", "(0.42, 0.58)", I),
    ("0.5", "(0.42, 0.58)", I),
    # words around the student's number
    ("P = 0.31", "0.3125", C),
    ("about 0.31", "0.3125", C),
    ("\u2248 0.31", "0.3125", C),
    # no number where one is expected
    ("no idea", "0.3125", I),
    ("", "0.3125", I),
    ("reject", "0.3125", I),
    # short text answers
    ("Reject H0", "Reject H0", C),
    ("reject h0", "Reject H0", C),
    ("reject", "Reject H0", C),
    ("Reject $H_0$.", "Reject H0", C),
    ("reject the null hypothesis", "Reject H0", C),
    ("reject Ho", "Reject H0", C),
    ("do not reject", "Reject H0", I),
    ("h0", "Reject H0", I),
    ("", "Reject H0", I),
    ("yes", "Yes", C),
    ("no", "Yes", I),
    ("fail to reject h0", "Fail to reject $H_0$", C),  # equal text is correct even when long
    # long free text and empty stored answers cannot be judged
    ("skewed", "The distribution is skewed to the right", U),
    ("", "The distribution is skewed to the right", U),
    ("fail to reject", "Fail to reject $H_0$", U),
    ("0.3125", "", U),
    ("anything", "   ", U),
    ("", "$ $", U),
]


@pytest.mark.parametrize("given, expected, verdict", CHECK_CASES)
def test_check_answer(given: str, expected: str, verdict: str) -> None:
    result = check_answer(given, expected)
    assert isinstance(result, AnswerCheck)
    assert result.verdict == verdict, result.detail
    assert result.expected == expected
    assert result.detail


DETAIL_CASES = [
    ("0.31", "0.3125", "0.31 is within 1% of 0.3125"),
    ("0.4", "0.3125", "expected 0.3125"),
    ("31.25%", "0.3125", "31.25% is within 1% of 0.3125"),
    ("0.023", "about 0.0228", "0.023 is within 0.001 of 0.0228"),
    ("3.5", "E[X] = 3.5, Var(X) = 2.92", "expected 2 number(s) (E[X] = 3.5, Var(X) = 2.92) but found 1"),
    ("2.92, 3.5", "E[X] = 3.5, Var(X) = 2.92", "expected E[X] = 3.5, Var(X) = 2.92 (number 1 differs)"),
    ("no idea", "0.3125", "no number found in your answer; expected 0.3125"),
    ("reject", "Reject H0", "matches Reject H0"),
    ("skewed", "The distribution is skewed to the right", "this answer is checked by you: compare with the solution"),
]


@pytest.mark.parametrize("given, expected, detail", DETAIL_CASES)
def test_check_answer_detail(given: str, expected: str, detail: str) -> None:
    assert check_answer(given, expected).detail == detail


def test_tolerances_are_parameters() -> None:
    assert check_answer("0.31", "0.3125", rel_tol=0.001, abs_tol=0.0).verdict == I
    assert check_answer("0.4", "0.3125", rel_tol=0.5).verdict == C
    assert check_answer("0.03", "about 0.0228", abs_tol=0.01).verdict == C


def test_answer_check_is_frozen() -> None:
    result = check_answer("1", "1")
    with pytest.raises(AttributeError):
        result.verdict = I  # type: ignore[misc]


NASTY = [
    "9" * 5000,
    "1e" + "9" * 5000,
    "1e999 / 1e-999",
    "\\binom{9999}{5000}",
    "\\binom{1000}{500}",
    "0^{-1}",
    "9^{9999}",
    "\\frac{}{}",
    "\\frac{1}{0}",
    "\\frac{\\frac{\\frac{\\frac{\\frac{1}{2}}{2}}{2}}{2}}{2}",
    "{" * 1000 + "1" + "}" * 1000,
    "=" * 1000,
    ",,,;;;%%%///",
    "1," * 2000,
    "-" * 1000 + "1",
    "$$$$\\\\\\\\",
    "\x00\ud800\uffff",
    "\u2153 \u2082 \u00b2",
    "nan",
    "inf",
    "-inf%",
]


@pytest.mark.parametrize("text", NASTY)
def test_nasty_inputs_never_raise(text: str) -> None:
    value = parse_number(text)
    assert value is None or isinstance(value, float)
    assert all(isinstance(x, float) for x in expected_numbers(text))
    for given, expected in [(text, "0.3125"), ("0.3125", text), (text, "Reject H0"), (text, text)]:
        assert check_answer(given, expected).verdict in {C, I, U}


ALPHABET = "0123456789.,;:=+-−/%$\\{}()[]^_eE xXfracbinomtdpercenH ≈×·\u2044\n\t"


def test_fuzz_never_raises() -> None:
    rng = random.Random(20240601)
    pieces = ["\\frac", "\\dfrac", "\\binom", "\\times", "10^", "\\%", "{,}", "\\approx", "about", "E[X] = ", "reject"]
    for _ in range(500):
        parts = [rng.choice(ALPHABET) if rng.random() < 0.8 else rng.choice(pieces) for _ in range(rng.randint(0, 40))]
        text = "".join(parts)
        other = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 20)))
        value = parse_number(text)
        assert value is None or isinstance(value, float)
        assert all(isinstance(x, float) for x in expected_numbers(text))
        for given, expected in [(text, other), (other, text), (text, text)]:
            result = check_answer(given, expected)
            assert result.verdict in {C, I, U}
            assert result.expected == expected
            assert result.detail


def test_never_raises_on_non_strings() -> None:
    assert parse_number(None) is None  # type: ignore[arg-type]
    assert expected_numbers(None) == []  # type: ignore[arg-type]
    assert check_answer(None, None).verdict == U  # type: ignore[arg-type]
    assert check_answer(0.3125, 5).verdict == I  # type: ignore[arg-type]
    assert check_answer(5, "5").verdict == C  # type: ignore[arg-type]
