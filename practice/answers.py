"""Check a student's typed answer against a problem's stored answer string. Pure: stdlib only.

Stored answers are written by people, so they come in many shapes: "0.3125", "5/16", "$\\frac{5}{16}$",
"\\binom{10}{3} = 120", "about 0.0228", "12.5%", "E[X] = 3.5, Var(X) = 2.92", "(0.42, 0.58)", "Reject H0".
We read the numbers a stored answer states as results and compare the student's numbers with them;
when the stored answer has no numbers we compare short texts word by word, and leave long free text
to the student ("unchecked": they compare with the solution themselves).

A stored answer may also be a bare formula: "1 - (5/6)^{10}", "\\binom{10}{3} (1/2)^{10}",
"6!/(2!\\,4!)", "\\sqrt{2}/2". Read for its numbers it would be a list of stray ones (1, 5/6, 10), so an
answer that is one arithmetic formula is evaluated instead, by a small hand-written parser (never
eval) with bounded work, and compared as the single number it is worth; a student's answer is read
the same way, so "0.8385" and "1-(5/6)**10" both match. A stored formula with free symbols
("np(1-p)", "\\lambda^k e^{-\\lambda}/k!"), or whose value is out of reach (1000!, 1/0), cannot be
checked, and is "unchecked" unless the student wrote it alike.

Why the tolerance is relative: students round to a few significant figures, and how much rounding
moves a number depends on its size. "0.31" for 0.3125 and "18,100" for 18,000 are both honest
three-figure roundings, yet they are 0.0025 and 100 away. Any fixed absolute tolerance is either
too loose for small probabilities (0.01 would accept 0.012 for 0.0228) or too strict for counts, so
a number matches when it is within `rel_tol` (1%) of the expected value: any rounding to three
significant figures is within 0.5%, so "0.00144" for 0.001436 counts and "0.002" or "0.0005" do not.
An absolute floor (`abs_tol`, 1e-9) applies only near zero, to expected values smaller than the floor
itself, where any relative tolerance shrinks to nothing ("1e-12" for 0, a formula's rounding error);
it never widens the tolerance of a small probability such as 0.00144 or 7.2e-8 (a lottery win).

A stored answer lists its parts ("1365; 0.0923" for "how many samples, and what probability?"):
the student gives them in the same order, each is checked on its own, and the feedback names the
part that differs. Every check says what was read from the student's input (`AnswerCheck.read`), so
a typo ("0,0923" read as two numbers) shows.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, replace

__all__ = ["AnswerCheck", "check_answer", "expected_numbers", "parse_number"]

CORRECT, INCORRECT, UNCHECKED = "correct", "incorrect", "unchecked"
SELF_CHECK = "this answer is checked by you: compare with the solution"
SHORT_TEXT_WORDS = 3  # stored text answers of at most this many words are checked automatically


@dataclass(frozen=True)
class AnswerCheck:
    verdict: str  # "correct", "incorrect" or "unchecked"
    expected: str  # the stored answer as given, for feedback
    detail: str  # one short human sentence
    read: str = ""  # what was read from the student's input: "1365; 0.0923", "1 - (5/6)^10 = 0.838494"


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
_TIMES_TEN = re.compile(r"(?<![\d.])(\d[\d.]*)\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*\{?\s*([-+]?\d{1,4})\s*\}?")
_POWER = re.compile(r"(?<![\w.])(\d{1,12}(?:\.\d{1,12})?|\.\d{1,12})\s*\^\s*(?:\{\s*([-+]?\d{1,4})\s*\}|([-+]?\d{1,4}))")
# The groups take spaces too and are stripped in _frac: `\{\s*([^{}]*?)\s*\}` backtracks cubically on
# "\frac{" followed by thousands of spaces (seconds per answer).
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}|\\[dt]?frac\s*(\d)\s*(\d)")

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
    top, bottom = top.strip(), bottom.strip()
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


# ---------------------------------------------------------------------------------------------
# Reading formulas
# ---------------------------------------------------------------------------------------------
# A small recursive-descent reader for arithmetic as people type it, in LaTeX or plain text:
# "1 - (5/6)^{10}", "\binom{10}{3} (1/2)^{10}", "6!/(2!\,4!)", "e^{-2} 2^3/3!", "\sqrt{2}/2".
# It never calls eval and bounds its work: at most MAX_FORMULA_CHARS characters and
# MAX_FORMULA_DEPTH nested levels; a power, factorial or binomial too large for a float stops it.
# Free symbols (n, p, \lambda) are read too, as NaN, so that a formula we cannot evaluate can be
# told apart from text (see _unreadable_formula).

MAX_FORMULA_CHARS = 500
# Answers longer than this are not read at all: real answers are a few dozen characters (the longest in
# ../shared/data has 58), and reading is linear but not free (200,000 characters took about a second).
MAX_ANSWER_CHARS = 2000
MAX_FORMULA_DEPTH = 50
MAX_FACTORIAL = 170  # 171! is beyond a float
MAX_BINOMIAL = 5000


class _Unreadable(Exception):
    """Not one arithmetic formula we read: words, a list, "3 4" (a list or a product?)."""


class _OutOfReach(Exception):
    """A formula, but one without a value we can compute."""

    reason = ""


class _TooBig(_OutOfReach):
    reason = "too large to evaluate"  # 9^9^9^9, 1000!


class _Undefined(_OutOfReach):
    reason = "undefined (a division by zero, a root or logarithm out of range)"  # 1/0, \ln 0, 2.5!


_FORMULA_REPLACEMENTS = [
    ("\u00f7", "/"),
    ("\u22c5", r" \cdot "),
    ("\u221a", r"\sqrt "),
    ("\u00b2", "^2"),
    ("\u00b3", "^3"),
] + [
    (letter, f"\\{name} ")
    for letter, name in zip(
        "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b8\u03bb\u03bc\u03bd\u03c0\u03c1\u03c3\u03c4\u03c6\u03c7\u03c8\u03c9\u0393\u03a3\u03a6",
        "alpha beta gamma delta epsilon theta lambda mu nu pi rho sigma tau phi chi psi omega Gamma Sigma Phi".split(),
    )
]
# C(10, 3), 10C3, {}_{10}C_{3} -> \binom{10}{3} (before lists are split on commas)
_COMBINATIONS = [
    (re.compile(r"(?<![A-Za-z\\])C\s*\(\s*(\w{1,4})\s*,\s*(\w{1,4})\s*\)"), r"\\binom{\1}{\2}"),
    (re.compile(r"(?<![\w.])(\d{1,4})\s*C\s*(\d{1,4})(?![\w.])"), r"\\binom{\1}{\2}"),
    (re.compile(r"(?:\{\s*\})?[_^]\{?\s*(\d{1,4})\s*\}?\s*C_\{?\s*(\d{1,4})\s*\}?"), r"\\binom{\1}{\2}"),
]
_FORMULA_TOKEN = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<num>(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
    | (?P<ident>[A-WYZa-wyz]\d+(?!\.?\d))   # H0, X1, p2: one name ("x" reads as a times sign: 2x3)
    | (?P<name>[A-Za-z]+)
    | (?P<cmd>\\[A-Za-z]+)
    | (?P<op>\*\*|[-+*/^!%(){}\[\]_=])
    """,
    re.X,
)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_MULTIPLY = {"*", r"\cdot", r"\times", r"\ast"}
_DIVIDE = {"/", r"\div"}
_FRACTIONS = {r"\frac", r"\dfrac", r"\tfrac"}
_GREEK = set(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho varrho sigma"
    " varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Psi Omega".split()
)
# Things only formulas contain, which we do not evaluate: their formula is read as one with free symbols.
_UNEVALUATED = {"sum", "prod", "int", "lim", "log", "lg", "sin", "cos", "tan", "max", "min", "Pr", "det", "infty"}
_DECORATIONS = {
    "bar", "hat", "tilde", "overline", "widehat", "widetilde", "vec", "dot", "ddot",
    "mathbb", "mathcal", "mathbf", "mathrm", "mathit", "boldsymbol", "operatorname",
}  # fmt: skip
# Short words that are not products of symbols: "3 and 4", "0.42 to 0.58", "1 or 2".
_WORDS = set("an and are as at be but by for if in is it no nor not of on or per so the to vs was we yes".split())


def _finite(value: float) -> float:
    if math.isinf(value):
        raise _TooBig
    return value


def _whole(value: float) -> int:
    if value < 0 or value != math.floor(value):
        raise _Undefined  # a factorial or binomial of a fraction or a negative number
    return int(value)


def _to_power(base: float, exponent: float) -> float:
    if math.isnan(base) or math.isnan(exponent):
        return math.nan
    try:
        return _finite(math.pow(base, exponent))
    except OverflowError:
        raise _TooBig from None
    except ValueError:  # 0^{-1}, (-8)^{1/3}
        raise _Undefined from None


def _factorial(value: float) -> float:
    if math.isnan(value):
        return math.nan
    if value > MAX_FACTORIAL:
        raise _TooBig
    return float(math.factorial(_whole(value)))


def _binomial(n: float, k: float) -> float:
    if math.isnan(n) or math.isnan(k):
        return math.nan
    if n > MAX_BINOMIAL:
        raise _TooBig
    whole_n, whole_k = _whole(n), _whole(k)
    try:
        return float(math.comb(whole_n, min(whole_k, whole_n + 1)))  # 0 when k > n
    except OverflowError:
        raise _TooBig from None


def _root(value: float, index: float) -> float:
    if math.isnan(value) or math.isnan(index):
        return math.nan
    if value < 0 or index == 0:
        raise _Undefined
    return _to_power(value, 1 / index)


def _exp(value: float) -> float:
    try:
        return _finite(math.exp(value))
    except OverflowError:
        raise _TooBig from None


def _ln(value: float) -> float:
    if value <= 0:
        raise _Undefined
    return math.log(value)  # NaN stays NaN


def _normal_cdf(value: float) -> float:
    return 0.5 * math.erfc(-value / math.sqrt(2))


_FUNCTIONS = {"sqrt": lambda value: _root(value, 2), "exp": _exp, "ln": _ln, "Phi": _normal_cdf}


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text):
        match = _FORMULA_TOKEN.match(text, position)
        if match is None:
            raise _Unreadable
        if match.lastgroup != "space":
            tokens.append((match.lastgroup, match.group()))
        position = match.end()
    return tokens


class _Formula:
    """One formula, read: value (NaN when it has free symbols) and what it is made of.

    expr   := term (("+" | "-" | \\pm) term)*
    term   := signed (("*" | "/" | \\cdot | \\times | \\div) signed | factor)*   (no sign: implicit product)
    signed := ("-" | "+") signed | factor
    factor := primary ("!" | "%")* ("^" | "**") exponent ("!" | "%")*
    exponent := ("-" | "+")* primary (("^" | "**") exponent)?
    primary := number | (expr) | [expr] | {expr} | {n \\choose k} | e | \\pi | \\frac a b | \\binom n k
             | \\sqrt[n] x | sqrt/exp/ln/Phi x | symbol
    """

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.position = 0
        self.depth = 0
        self.symbols = 0  # free symbols met: n, p, \lambda
        self.operations = 0  # operators, functions and implicit products met
        self.mathy = 0  # things only formulas hold: \lambda, \bar{x}, \sum
        self.value = self._expr()
        if self.position != len(self.tokens):
            raise _Unreadable

    # tokens

    def _peek(self, ahead: int = 0) -> tuple[str, str]:
        at = self.position + ahead
        return self.tokens[at] if at < len(self.tokens) else ("end", "")

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        if token[0] == "end":
            raise _Unreadable
        self.position += 1
        return token

    def _expect(self, text: str) -> None:
        if self._take()[1] != text:
            raise _Unreadable

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_FORMULA_DEPTH:
            raise _Unreadable

    def _skip_argument(self) -> None:
        """Pass over a subscript or a decorated name without reading it: _{k=0}, \\bar{x}."""
        if self._take()[1] != "{":
            return
        depth = 1
        while depth:
            text = self._take()[1]
            depth += (text == "{") - (text == "}")

    def _starts_factor(self, kind: str, text: str) -> bool:
        if kind in ("num", "ident", "name"):
            return True
        if kind == "cmd":
            return text not in _MULTIPLY | _DIVIDE | {r"\pm", r"\mp", r"\choose"}
        return text in _OPEN

    # grammar

    def _expr(self) -> float:
        self._enter()
        value, _ = self._term()
        while self._peek()[1] in ("+", "-", r"\pm", r"\mp"):
            operator = self._take()[1]
            self.operations += 1
            right, _ = self._term()
            if operator == "+":
                value = _finite(value + right)
            elif operator == "-":
                value = _finite(value - right)
            else:
                value = math.nan  # two values: no one number
        self.depth -= 1
        return value

    def _term(self) -> tuple[float, bool]:
        """The product; `bare` says whether its last factor is a number as written, with nothing after it."""
        value, bare = self._signed()
        while True:
            kind, text = self._peek()
            times_x = kind == "name" and text == "x" and (self._peek(1)[0] == "num" or self._peek(1)[1] == "(")
            if text in _MULTIPLY or text in _DIVIDE or times_x:
                self._take()
                self.operations += 1
                right, bare = self._signed()
                if text not in _DIVIDE:
                    value = _finite(value * right)
                elif right == 0:
                    raise _Undefined
                else:
                    value = _finite(value / right)
            elif self._starts_factor(kind, text):
                if bare and (kind == "num" or text in _FRACTIONS):
                    raise _Unreadable  # "3 4", "2\frac{1}{2}": a list, or a mixed number?
                self.operations += 1
                right, bare = self._factor()
                value = _finite(value * right)
            else:
                return value, bare

    def _signed(self) -> tuple[float, bool]:
        sign = self._peek()[1]
        if sign not in ("-", "+"):
            return self._factor()
        self._take()
        self._enter()
        self.operations += sign == "-"
        value, _ = self._signed()
        self.depth -= 1
        return (-value if sign == "-" else value), False

    def _postfix(self, value: float) -> tuple[float, bool]:
        changed = False
        while self._peek()[1] in ("!", "%"):
            if self._take()[1] == "!":
                self.operations += 1
                value = _factorial(value)
            else:
                value = value / 100
            changed = True
        return value, changed

    def _factor(self) -> tuple[float, bool]:
        value, bare = self._primary()
        value, changed = self._postfix(value)
        bare = bare and not changed
        if self._peek()[1] in ("^", "**"):
            self._take()
            self.operations += 1
            value = _to_power(value, self._exponent())
            value, _ = self._postfix(value)
            bare = False
        return value, bare

    def _exponent(self) -> float:
        self._enter()
        negative = False
        while self._peek()[1] in ("-", "+"):
            negative ^= self._take()[1] == "-"
        value, _ = self._primary()
        if self._peek()[1] in ("^", "**"):  # 2^3^2 is 2^(3^2)
            self._take()
            self.operations += 1
            value = _to_power(value, self._exponent())
        self.depth -= 1
        return -value if negative else value

    def _primary(self) -> tuple[float, bool]:
        kind, text = self._take()
        if kind == "num":
            value = float(text.replace(",", ""))
            if not math.isfinite(value):
                raise _Unreadable
            return value, True
        if text in _OPEN:
            value = self._expr()
            if text == "{" and self._peek()[1] == r"\choose":
                self._take()
                self.operations += 1
                value = _binomial(value, self._expr())
            self._expect(_OPEN[text])
            return value, False
        if kind == "ident":
            return self._symbol(), False
        if kind == "name":
            return self._name(text), False
        if kind == "cmd":
            return self._command(text[1:]), False
        raise _Unreadable

    def _symbol(self, count: int = 1) -> float:
        self.symbols += count
        if self._peek()[1] == "_":
            self._take()
            self._skip_argument()
        return math.nan

    def _name(self, text: str) -> float:
        if text == "e":
            return math.e
        if text == "pi":
            return math.pi
        if text in _FUNCTIONS:
            self.operations += 1
            return _FUNCTIONS[text](self._argument())
        if len(text) > 3 or text.lower() in _WORDS:
            raise _Unreadable  # a word, not symbols
        return self._symbol(len(text))  # np: n times p

    def _command(self, name: str) -> float:
        if name in ("frac", "dfrac", "tfrac", "binom", "dbinom", "tbinom"):
            self.operations += 1
            top, bottom = self._latex_argument(), self._latex_argument()
            if "binom" in name:
                return _binomial(top, bottom)
            if bottom == 0:
                raise _Undefined
            return _finite(top / bottom)
        if name == "sqrt":
            self.operations += 1
            index = 2.0
            if self._peek()[1] == "[":  # \sqrt[3]{8}
                self._take()
                index = self._expr()
                self._expect("]")
            return _root(self._argument(), index)
        if name in _FUNCTIONS:
            self.operations += 1
            return _FUNCTIONS[name](self._argument())
        if name == "pi":
            return math.pi
        if name in ("mathrm", "mathit") and [t for _, t in self.tokens[self.position : self.position + 3]] == ["{", "e", "}"]:
            self.position += 3
            return math.e
        if name in _DECORATIONS:
            self._skip_argument()
            self.mathy += 1
            return self._symbol()
        if name in _GREEK or name in _UNEVALUATED:
            self.mathy += 1
            return self._symbol()
        raise _Unreadable

    def _argument(self) -> float:
        """The argument of a function: a group, or one signed factor (\\sqrt 2, \\ln 2^3, \\exp -1)."""
        self._enter()
        value = self._primary()[0] if self._peek()[1] in _OPEN else self._signed()[0]
        self.depth -= 1
        return value

    def _latex_argument(self) -> float:
        """An argument of \\frac or \\binom: a group or one token, one digit of a number (\\frac12)."""
        kind, text = self._peek()
        if kind == "num" and text.isdigit() and len(text) > 1:
            self.tokens[self.position] = ("num", text[1:])
            return float(text[0])
        self._enter()
        value = self._primary()[0]
        self.depth -= 1
        return value


def _prepare_formula(text: str) -> str:
    for old, new in _REPLACEMENTS + _FORMULA_REPLACEMENTS:
        text = text.replace(old, new)
    for pattern, new in _SUBSTITUTIONS + _COMBINATIONS:
        text = pattern.sub(new, text)
    return text


def _right_of_equals(text: str) -> str:
    """What follows the last "=" outside brackets: "P(X=3) = \\binom{5}{3} 0.5^5" -> "\\binom{5}{3} 0.5^5"."""
    depth, start = 0, 0
    for position, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "=" and depth <= 0:
            start = position + 1
    return text[start:]


def _parse(text: str) -> _Formula | None:
    """The formula `text`, or None when it is not one; raises _OutOfReach."""
    try:
        return _Formula(text)
    except (_Unreadable, ArithmeticError, ValueError, RecursionError):
        return None


def _formula_value(text: str) -> float | None:
    """The value of `text` read as one formula without free symbols (right of its last "="), or None
    when it is not one: a list ("(2, 3)"), words, symbols. Raises _OutOfReach."""
    if len(text) > MAX_FORMULA_CHARS:
        return None
    text = _prepare_formula(text)
    if len(_PART_SEPARATOR.split(text)) > 1:
        return None
    formula = _parse(_right_of_equals(text))
    if formula is None or formula.symbols or not math.isfinite(formula.value):
        return None
    return formula.value


def _unreadable_formula(text: str) -> bool:
    """Whether `text` states a result as a formula we cannot evaluate: one with free symbols and an
    operator, or a symbol only formulas use ("np(1-p)", "2n", "\\lambda", "\\sum_{k=0}^{3} ..."), or one
    whose value is out of reach. Words ("Reject H0", "3 and 4") and lone letters ("H0") are not formulas."""
    if len(text) > MAX_FORMULA_CHARS:
        return False
    for part in _PART_SEPARATOR.split(_prepare_formula(text)):
        result = _right_of_equals(part).strip()
        # a list's brackets are split from their parts: "(\bar{x} - 2s" and "\bar{x} + 2s)"
        candidates = [result, result[1:] if result[:1] in "([" else "", result[:-1] if result[-1:] in ")]" else ""]
        for candidate in filter(None, candidates):
            try:
                formula = _parse(candidate)
            except _OutOfReach:
                return True
            if formula is not None:
                if formula.symbols and (formula.operations or formula.mathy):
                    return True
                break
    return False


def _compact(text: str) -> list[str]:
    """The results of a formula answer without spaces or backslashes, to see whether two are written alike."""
    parts = _PART_SEPARATOR.split(_prepare_formula(text))
    return ["".join(_right_of_equals(part).split()).replace("\\", "") for part in parts]


@dataclass(frozen=True)
class _Reading:
    numbers: list[_Number]  # the numbers the answer states as results
    formula: bool = False  # the answer is one formula, and numbers holds its value
    out_of_reach: str = ""  # the answer is one formula without a value we compute, and why ("too large to evaluate")


def _read(text: object) -> _Reading:
    """An answer's numbers: as stated ("E[X] = 3.5, Var(X) = 2.92"), or the value of the formula it is."""
    text = "" if text is None else str(text)
    if len(text) > MAX_ANSWER_CHARS:
        return _Reading([], out_of_reach=f"longer than {MAX_ANSWER_CHARS:,} characters")
    numbers = _result_numbers(text)
    try:
        value = _formula_value(text)
    except _OutOfReach as error:
        return _Reading([], out_of_reach=error.reason)
    if value is None or (len(numbers) == 1 and math.isclose(numbers[0].value, value, rel_tol=1e-9, abs_tol=1e-12)):
        return _Reading(numbers)  # keeps "12.5%" a percentage
    return _Reading([_Number(value, value, False)], formula=True)


def expected_numbers(answer: str) -> list[float]:
    """Every number the answer states as a result, in order, or the value of the one formula it is.

    "\\binom{10}{3} = 120" -> [120.0]; "E[X] = 3.5, Var(X) = 2.92" -> [3.5, 2.92];
    "(0.42, 0.58)" -> [0.42, 0.58]; "1 - (5/6)^{10}" -> [0.8385]; "Reject H0" -> []; "1000!" -> [].
    """
    return [number.value for number in _read(answer).numbers]


def parse_number(text: str) -> float | None:
    """The one number in `text` ("about 5/16", "31.25\\%", "P = 1.2e-3", "18,000", "6!/(2!\\,4!)"), or
    None when it states no number or several."""
    numbers = _read(text).numbers
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
    # The absolute floor only near zero: below it a relative tolerance means nothing.
    return abs_tol if abs(expected) < abs_tol else rel_tol * abs(expected)


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
    if abs(expected.value) >= abs_tol:
        return f"within {rel_tol * 100:g}%"
    return f"within {abs_tol:g}"


def _read_text(reading: _Reading, given: str) -> str:
    """What was read from the student's input, for the feedback."""
    def shown(n: _Number) -> str:  # every digit typed (up to 12 significant), never 9.87654e+08 for 987654321
        return f"{n.written:.12g}%" if n.percent else f"{n.value:.12g}"

    if reading.formula and reading.numbers:
        return f"{' '.join(given.split())} = {shown(reading.numbers[0])}"
    return "; ".join(shown(n) for n in reading.numbers)


def _check_numbers(given: str, expected: str, reading: _Reading, rel_tol: float, abs_tol: float) -> AnswerCheck:
    wanted, mine = reading.numbers, _read(given)
    shown = f"{expected.strip()} (= {wanted[0]})" if reading.formula else expected.strip()
    if mine.out_of_reach:
        return AnswerCheck(INCORRECT, expected, f"your answer is {mine.out_of_reach}; expected {shown}")
    found = mine.numbers
    read = _read_text(mine, given)
    if not found:
        return AnswerCheck(INCORRECT, expected, f"no number found in your answer; expected {shown}")
    if len(found) != len(wanted):
        parts = "1 part" if len(wanted) == 1 else f"{len(wanted)} parts, in this order, separated by ';'"
        return AnswerCheck(
            INCORRECT, expected, f"expected {len(wanted)} number(s) ({shown}) but found {len(found)}: the answer has {parts}", read
        )
    differ = [position for position, (m, t) in enumerate(zip(found, wanted), start=1) if not _matches(m, t, rel_tol, abs_tol)]
    if differ:
        if len(wanted) == 1:
            return AnswerCheck(INCORRECT, expected, f"expected {shown}", read)
        which = ", ".join(str(p) for p in differ)
        right = len(wanted) - len(differ)
        return AnswerCheck(
            INCORRECT, expected,
            f"expected {shown} (number {which} differs; {right} of {len(wanted)} part{'s' if len(wanted) != 1 else ''} right)", read,
        )
    if len(wanted) == 1:
        detail = f"{found[0]} is {_within(wanted[0], rel_tol, abs_tol)} of {wanted[0]}"
    else:
        detail = f"all {len(wanted)} numbers match {shown} within {rel_tol * 100:g}%"
    return AnswerCheck(CORRECT, expected, detail, read)


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


def check_answer(given: str, expected: str, rel_tol: float = 0.01, abs_tol: float = 1e-9) -> AnswerCheck:
    """Compare a student's answer with the stored one. Never raises.

    With numbers in the stored answer, the student's numbers must match them in order and count,
    each within rel_tol * |expected| (abs_tol where |expected| < abs_tol, near zero). A stored answer that is one formula
    ("1 - (5/6)^{10}") counts as its value, and so does a student's. A stored formula we cannot
    evaluate (free symbols, "np(1-p)"; or a value out of bounds) is "unchecked" unless the student
    wrote it alike. Without numbers, short answers (at most three words) are compared as normalised
    text, allowing a leading keyword ("reject" for "Reject H0"); longer free text, and an empty
    stored answer, are "unchecked".
    """
    given = "" if given is None else str(given)
    expected = "" if expected is None else str(expected)
    if not expected.strip():
        return AnswerCheck(UNCHECKED, expected, "there is no stored answer: compare with the solution")
    if len(given) > MAX_ANSWER_CHARS:
        return AnswerCheck(UNCHECKED, expected, f"the answer is longer than {MAX_ANSWER_CHARS:,} characters: compare with the solution")
    reading = _read(expected)
    if reading.out_of_reach:
        return AnswerCheck(UNCHECKED, expected, f"the stored answer is {reading.out_of_reach}: compare with the solution")
    if not reading.formula and _unreadable_formula(expected):
        if given.strip() and len(given) <= MAX_FORMULA_CHARS and _compact(given) == _compact(expected):
            return AnswerCheck(CORRECT, expected, f"matches {expected.strip()}")
        return AnswerCheck(UNCHECKED, expected, SELF_CHECK)
    if reading.numbers:
        if not given.strip():
            return AnswerCheck(INCORRECT, expected, f"no answer given; expected {expected.strip()}")
        return _check_numbers(given, expected, reading, rel_tol, abs_tol)
    result = _check_text(given, expected)
    return replace(result, read=" ".join(_normalise_text(given))) if result.verdict != UNCHECKED else result
