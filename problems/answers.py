"""Check a student's typed answer against a problem's stored answer string. Pure: stdlib only.

Stored answers are written by people, so they come in many shapes: "0.3125", "5/16", "$\\frac{5}{16}$",
"\\binom{10}{3} = 120", "about 0.0228", "12.5%", "E[X] = 3.5, Var(X) = 2.92", "(0.42, 0.58)", "Reject H0".
We read the numbers a stored answer states as results and compare the student's numbers with them;
when the stored answer has no numbers we compare short texts word by word, and leave long free text
to the student ("unchecked": they compare with the solution themselves).

Why the tolerance is relative: students round to a few significant figures, and how much rounding
moves a number depends on its size. "0.31" for 0.3125 and "18,100" for 18,000 are both honest
three-figure roundings, yet they are 0.0025 and 100 away. Any fixed absolute tolerance is either
too loose for small probabilities (0.01 would accept 0.012 for 0.0228) or too strict for counts, so
a number matches when it is within `rel_tol` (1%) of the expected value. A small absolute floor
(`abs_tol`, 0.001) keeps answers near zero checkable, where any relative tolerance shrinks to nothing.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["AnswerCheck", "check_answer", "expected_numbers", "parse_number"]

CORRECT, INCORRECT, UNCHECKED = "correct", "incorrect", "unchecked"
SELF_CHECK = "this answer is checked by you: compare with the solution"
SHORT_TEXT_WORDS = 3  # stored text answers of at most this many words are checked automatically


@dataclass(frozen=True)
class AnswerCheck:
    verdict: str  # "correct", "incorrect" or "unchecked"
    expected: str  # the stored answer as given, for feedback
    detail: str  # one short human sentence


@dataclass(frozen=True)
class _Number:
    value: float  # what the text means: "31.25%" -> 0.3125
    written: float  # the number as written: "31.25%" -> 31.25
    percent: bool

    def __str__(self) -> str:
        return f"{self.written:g}%" if self.percent else f"{self.value:g}"


# ---------------------------------------------------------------------------------------------
# Reading numbers
# ---------------------------------------------------------------------------------------------

# Straight substitutions, applied in order before anything else.
_REPLACEMENTS = [
    ("\u2212", "-"),  # unicode minus
    ("\u2013", "-"),  # en dash, often typed as a minus
    ("\u2044", "/"),  # fraction slash
    ("\u00d7", r" \times "),
    ("\u00b7", r" \cdot "),
    ("\u2248", "="),  # ≈ states a result just like =
    ("\\%", "%"),
    ("{,}", ","),  # LaTeX thousands separator 18{,}000
    ("$", " "),
]
_SUBSTITUTIONS = [
    (re.compile(r"\\(?:approx|doteq|simeq|coloneqq)(?![a-zA-Z])"), "="),
    (re.compile(r"\\(?:left|right)(?![a-zA-Z])"), ""),
    (re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))"), ","),  # thin space as thousands separator: 18\,000
    (re.compile(r"\\[,;:! ]|\\q?quad(?![a-zA-Z])"), " "),
]
_BINOM = re.compile(r"\\[dt]?binom\s*\{\s*(\d{1,4})\s*\}\s*\{\s*(\d{1,4})\s*\}|\{\s*(\d{1,4})\s*\\choose\s*(\d{1,4})\s*\}")
_TIMES_TEN = re.compile(r"(\d[\d.]*)\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*\{?\s*([-+]?\d{1,4})\s*\}?")
_POWER = re.compile(r"(?<![\w.])(\d{1,12}(?:\.\d{1,12})?|\.\d{1,12})\s*\^\s*(?:\{\s*([-+]?\d{1,4})\s*\}|([-+]?\d{1,4}))")
_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*([^{}]*?)\s*\}\s*\{\s*([^{}]*?)\s*\}|\\[dt]?frac\s*(\d)\s*(\d)")

_NUMBER = re.compile(
    r"""
    (?P<sign>(?<![\w.)\]}])[-+])?          # a sign, unless it reads as "minus" between terms (3-2)
    (?<![\w.\\^])                           # not part of a word (H0, X_1), a decimal or an exponent
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)   # 18,000 or 1,234.5
          |\d+(?:\.\d*)?|\.\d+)                  # 120, 0.3125, .5
    (?:[eE](?P<exp>[-+]?\d+))?              # 1.2e-3
    (?:\s*/\s*(?P<den>\d+(?:\.\d+)?|\.\d+))?  # 5/16
    (?P<pct>\s*(?:%|percent\b))?            # 31.25%
    """,
    re.X,
)
# Parts of an answer are separated by ";" or by a comma that is not a thousands separator.
_PART_SEPARATOR = re.compile(r";|(?<!\d),|,(?!\d{3}(?!\d))")


def _binom(match: re.Match[str]) -> str:
    n, k = (int(g) for g in match.groups() if g is not None)
    return str(math.comb(n, k)) if n <= 1000 else match.group(0)


def _times_ten(match: re.Match[str]) -> str:
    return f"{match.group(1)}e{match.group(2)}"


def _power(match: re.Match[str]) -> str:
    exponent = match.group(2) if match.group(2) is not None else match.group(3)
    try:
        value = float(match.group(1)) ** int(exponent)
    except (OverflowError, ZeroDivisionError):
        return match.group(0)
    return repr(value) if math.isfinite(value) else match.group(0)


def _frac(match: re.Match[str]) -> str:
    top, bottom = (match.group(1), match.group(2)) if match.group(1) is not None else (match.group(3), match.group(4))
    tops, bottoms = _scan(top), _scan(bottom)
    if len(tops) == 1 and len(bottoms) == 1:  # a number over a number: evaluate, so fractions can nest
        glued = match.start() > 0 and match.string[match.start() - 1].isdigit()  # 2\frac{1}{2} is two numbers
        value = repr(tops[0].value / bottoms[0].value) if bottoms[0].value else "undefined"
        return " " + value if glued else value
    return f"({top})/({bottom})"


def _prepare(text: object) -> str:
    """Rewrite LaTeX and typographic variants into plain numbers that _NUMBER can read."""
    text = "" if text is None else str(text)
    for old, new in _REPLACEMENTS:
        text = text.replace(old, new)
    for pattern, new in _SUBSTITUTIONS:
        text = pattern.sub(new, text)
    text = _BINOM.sub(_binom, text)
    text = _TIMES_TEN.sub(_times_ten, text)
    text = _POWER.sub(_power, text)
    for _ in range(4):  # nested fractions, innermost first
        text, count = _FRAC.subn(_frac, text)
        if not count:
            break
    return text


def _scan(text: str) -> list[_Number]:
    """Every number in already prepared text, in order."""
    numbers = []
    for match in _NUMBER.finditer(text):
        literal = match.group("num").replace(",", "")
        if match.group("exp"):
            literal += "e" + match.group("exp")
        written = float(literal)
        if match.group("den") is not None:
            denominator = float(match.group("den"))
            if denominator == 0:
                continue  # 1/0 states no number
            written /= denominator
        if match.group("sign") == "-":
            written = -written
        if not math.isfinite(written):
            continue
        percent = match.group("pct") is not None
        numbers.append(_Number(written / 100 if percent else written, written, percent))
    return numbers


def _result_numbers(text: object) -> list[_Number]:
    """The numbers an answer states as results: in each part, those right of its last "="."""
    numbers = []
    for part in _PART_SEPARATOR.split(_prepare(text)):
        numbers.extend(_scan(part.rsplit("=", 1)[-1]))
    return numbers


def expected_numbers(answer: str) -> list[float]:
    """Every number the answer states as a result, in order.

    "\\binom{10}{3} = 120" -> [120.0]; "E[X] = 3.5, Var(X) = 2.92" -> [3.5, 2.92];
    "(0.42, 0.58)" -> [0.42, 0.58]; "Reject H0" -> [].
    """
    return [number.value for number in _result_numbers(answer)]


def parse_number(text: str) -> float | None:
    """The one number in `text` ("about 5/16", "31.25\\%", "P = 1.2e-3", "18,000"), or None when
    it states no number or several."""
    numbers = _result_numbers(text)
    return numbers[0].value if len(numbers) == 1 else None


# ---------------------------------------------------------------------------------------------
# Comparing
# ---------------------------------------------------------------------------------------------

_TEXT_COMMANDS = re.compile(r"\\(?:text\w*|math\w*|emph|mbox|operatorname|left|right)(?![a-z])")
_SYNONYMS = [
    (re.compile(r"\b(?:the )?null hypothesis\b|\bthe null\b"), "h0"),
    (re.compile(r"\bh (?:naught|nought)\b|\bho\b"), "h0"),
]


def _normalise_text(text: object) -> list[str]:
    """Lowercase words without LaTeX, $, punctuation or extra spaces: "Reject $H_0$." -> ["reject", "h0"]."""
    text = unicodedata.normalize("NFKC", "" if text is None else str(text)).lower()
    text = _TEXT_COMMANDS.sub(" ", text)
    text = re.sub(r"\\([a-z]+)", r" \1 ", text)  # keep the names of symbols: \mu -> mu
    text = re.sub(r"[_^{}$]", "", text)  # H_{0} -> h0
    text = " ".join(re.sub(r"[^\w\s]|_", " ", text).split())
    for pattern, new in _SYNONYMS:
        text = pattern.sub(new, text)
    return text.split()


def _tolerance(expected: float, rel_tol: float, abs_tol: float) -> float:
    return max(rel_tol * abs(expected), abs_tol)


def _matches(given: _Number, expected: _Number, rel_tol: float, abs_tol: float) -> bool:
    if abs(given.value - expected.value) <= _tolerance(expected.value, rel_tol, abs_tol):
        return True
    # "12.5" for "12.5%" (or "31.25%" for "31.25"): a bare number above 1 cannot be a probability,
    # so it is read as a percentage written without its sign.
    bare = expected if given.percent else given
    if given.percent == expected.percent or abs(bare.value) <= 1:
        return False
    return abs(given.written - expected.written) <= _tolerance(expected.written, rel_tol, abs_tol)


def _within(expected: _Number, rel_tol: float, abs_tol: float) -> str:
    if rel_tol * abs(expected.value) >= abs_tol:
        return f"within {rel_tol * 100:g}%"
    return f"within {abs_tol:g}"


def _check_numbers(
    given: str, expected: str, wanted: list[_Number], rel_tol: float, abs_tol: float
) -> AnswerCheck:
    found = _result_numbers(given)
    shown = expected.strip()
    if not found:
        return AnswerCheck(INCORRECT, expected, f"no number found in your answer; expected {shown}")
    if len(found) != len(wanted):
        return AnswerCheck(
            INCORRECT, expected, f"expected {len(wanted)} number(s) ({shown}) but found {len(found)}"
        )
    for position, (mine, theirs) in enumerate(zip(found, wanted), start=1):
        if not _matches(mine, theirs, rel_tol, abs_tol):
            where = "" if len(wanted) == 1 else f" (number {position} differs)"
            return AnswerCheck(INCORRECT, expected, f"expected {shown}{where}")
    if len(wanted) == 1:
        detail = f"{found[0]} is {_within(wanted[0], rel_tol, abs_tol)} of {wanted[0]}"
    else:
        detail = f"all {len(wanted)} numbers match {shown} within {rel_tol * 100:g}%"
    return AnswerCheck(CORRECT, expected, detail)


def _check_text(given: str, expected: str) -> AnswerCheck:
    mine, theirs = _normalise_text(given), _normalise_text(expected)
    shown = expected.strip()
    if not theirs:
        return AnswerCheck(UNCHECKED, expected, SELF_CHECK)
    if mine == theirs:
        return AnswerCheck(CORRECT, expected, f"matches {shown}")
    if len(theirs) > SHORT_TEXT_WORDS:
        return AnswerCheck(UNCHECKED, expected, SELF_CHECK)
    if not mine:
        return AnswerCheck(INCORRECT, expected, f"no answer given; expected {shown}")
    if theirs[: len(mine)] == mine:  # "reject" for "Reject H0"
        return AnswerCheck(CORRECT, expected, f"matches {shown}")
    return AnswerCheck(INCORRECT, expected, f"expected {shown}")


def check_answer(given: str, expected: str, rel_tol: float = 0.01, abs_tol: float = 1e-3) -> AnswerCheck:
    """Compare a student's answer with the stored one. Never raises.

    With numbers in the stored answer, the student's numbers must match them in order and count,
    each within max(rel_tol * |expected|, abs_tol). Without numbers, short answers (at most three
    words) are compared as normalised text, allowing a leading keyword ("reject" for "Reject H0");
    longer free text, and an empty stored answer, are "unchecked".
    """
    given = "" if given is None else str(given)
    expected = "" if expected is None else str(expected)
    if not expected.strip():
        return AnswerCheck(UNCHECKED, expected, "there is no stored answer: compare with the solution")
    wanted = _result_numbers(expected)
    if wanted:
        if not given.strip():
            return AnswerCheck(INCORRECT, expected, f"no answer given; expected {expected.strip()}")
        return _check_numbers(given, expected, wanted, rel_tol, abs_tol)
    return _check_text(given, expected)
