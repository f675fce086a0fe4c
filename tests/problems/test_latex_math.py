"""What problems/latex_html.py takes as math on a page, where KaTeX's auto-render then pairs every $ of a
text node it is shown: each $ that is not a formula's must reach it in a span it skips (no-math). Pure."""

from __future__ import annotations

import pytest

from problems.latex_html import answer_html, latex_highlight, latex_to_html

SIGN = '<span class="no-math">$</span>'

DOLLARS = {
    # Money, as OpenStax writes it (Pandoc's rule for a $ before a digit): a dollar sign, not math.
    "Three spent $150, $200, and $225.": f"<p>Three spent {SIGN}150, {SIGN}200, and {SIGN}225.</p>",
    "Salaries of $20,000 and $30,000": f"<p>Salaries of {SIGN}20,000 and {SIGN}30,000</p>",
    "between $5 and$10": f"<p>between {SIGN}5 and{SIGN}10</p>",  # a closing $ before a digit closes nothing
    # OpenStax's superscript after money: TeX allows ^ only in math, so that $ opens the formula.
    "It cost $1,700 and was the 90$^{th}$ percentile.": f"<p>It cost {SIGN}1,700 and was the 90$^{{th}}$ percentile.</p>",
    "Cost ($) and Fees ($)": f"<p>Cost ({SIGN}) and Fees ({SIGN})</p>",  # a unit in a table head
    "Price $5 per $x$ units": f"<p>Price {SIGN}5 per $x$ units</p>",
    # Math stays math, to KaTeX.
    "Find $x$, $p = 0.5$ and the $n$-th term.": "<p>Find $x$, $p = 0.5$ and the $n$-th term.</p>",
    "Let $2^n$ and $0.5$ be given.": "<p>Let $2^n$ and $0.5$ be given.</p>",
    # Spaces inside the dollars (Grinstead & Snell, MATH) and a digit after a formula (OpenIntro's
    # pounds) are still math: Pandoc's rule whole would show these as TeX source.
    "Find $ \\mat{P}^n$ and $ S $.": "<p>Find $ \\mat{P}^n$ and $ S $.</p>",
    "Under $\\pounds$2,600 a year": "<p>Under $\\pounds$2,600 a year</p>",
    # An escaped dollar is a dollar sign too; one inside math KaTeX draws.
    "pay \\$3 or $\\$4$": f"<p>pay {SIGN}3 or $\\$4$</p>",
}


@pytest.mark.parametrize("text, expected", DOLLARS.items())
def test_only_a_formula_s_dollars_reach_katex(text: str, expected: str) -> None:
    assert latex_to_html(text) == expected


def test_money_in_a_table_and_a_list_is_a_dollar_sign() -> None:
    assert latex_to_html("\\begin{tabular}{ll} Cost & $3.99 \\end{tabular}") == (
        f'<p><table class="latex-table"><tr><td>Cost</td><td>{SIGN}3.99</td></tr></table></p>'
    )
    assert latex_to_html("\\begin{itemize} \\item $5 \\item $x$ \\end{itemize}") == f"<p><ul><li>{SIGN}5</li><li>$x$</li></ul></p>"


def test_the_rule_preview_shows_money_as_dollar_signs() -> None:
    assert latex_highlight("spent $150 and $200 on $n$", [(0, 5)]) == f"<mark>spent</mark> {SIGN}150 and {SIGN}200 on $n$"
    assert latex_highlight("pay \\$3", []) == f"pay \\{SIGN}3"  # the source, with a sign KaTeX skips


@pytest.mark.parametrize(
    "text, expected",
    [
        # displaymath is $$ by another name (KaTeX's auto-render does not know it).
        ("so \\begin{displaymath} a = b \\end{displaymath} done", "<p>so $$ a = b $$ done</p>"),
        # Grinstead & Snell's sloppypar only spaces its text: the text stays, without the markup.
        ("\\begin{sloppypar} Given $P(X = a) = r$.\\end{sloppypar}", "<p>Given $P(X = a) = r$.</p>"),
    ],
)
def test_environments_katex_does_not_know_are_rewritten(text: str, expected: str) -> None:
    assert latex_to_html(text) == expected


def test_a_line_break_inside_a_formula_stays_in_the_formula() -> None:
    """A <br> inside $...$ split the formula into text nodes, and KaTeX paired the wrong dollars
    (OpenStax: "e$^{-\\n\\frac{t}{8}}\\approx$" shown as TeX source)."""
    html_ = latex_highlight("so e$^{-\n\\frac{t}{8}}\\approx$ 0.5\nnext", [])
    assert html_ == "so e$^{-\n\\frac{t}{8}}\\approx$ 0.5<br>next"
    assert latex_highlight("a\n$x\ny$", [(0, 1)]) == "<mark>a</mark><br>$x\ny$"
    assert latex_highlight("a $x\ny$", [(3, 4)]) == "a <mark>$x\ny$</mark>"  # the mark holds it whole


def test_money_in_the_statement_never_pairs_with_a_formula_in_the_solution() -> None:
    from concepts.extraction import rule_text

    # Read as one text, "$3 profit.<br><br>Solution: The mean ($" is a formula, and "$) is" money.
    text = rule_text("They made a $3 profit.", "The mean ($\\mu$) is 3.")
    assert latex_highlight(text, []) == f"They made a {SIGN}3 profit.<br><br>Solution: The mean ($\\mu$) is 3."
    text = rule_text("They made a $3 profit.", "So $p = 3$.")
    # Spans still index the joined text; a match over the join is marked on both sides of it.
    cut = text.index("\n")
    assert latex_highlight(text, [(cut - 7, cut + 3)]) == (
        f"They made a {SIGN}3 <mark>profit.</mark><mark><br><br>S</mark>olution: So $p = 3$."
    )
    assert latex_highlight(text, [(text.index("p ="), text.index("p =") + 1)]).endswith("So <mark>$p = 3$</mark>.")


def test_the_preview_splits_a_rule_text_where_rule_text_joins_it() -> None:
    from concepts.extraction import _SOLUTION_START
    from problems.latex_html import _SOLUTION_JOIN

    assert _SOLUTION_JOIN == _SOLUTION_START


ANSWERS = {
    # MATH's answers, the inside of a \\boxed{}: math-mode LaTeX that KaTeX's auto-render showed as source.
    "\\frac{1}{2}": "\\(\\frac{1}{2}\\)",
    "1,\\!000,\\!000": "\\(1,\\!000,\\!000\\)",
    "50\\%": "\\(50\\%\\)",
    "-\\$0.50": "\\(-\\$0.50\\)",
    "240\\text{ ways.}": "\\(240\\text{ ways.}\\)",
    "2^{10}": "\\(2^{10}\\)",
    # Plain answers (the demo course's, TheoremQA's) and answers with their own delimiters stay as they are.
    "0.37": "0.37",
    "1365; 0.0923": "1365; 0.0923",
    "chemistry": "chemistry",
    "[1.0, 0.25]": "[1.0, 0.25]",
    # Typed by a TA: read right as text, and KaTeX would typeset them otherwise (2 to the 1, then 0).
    "2^10": "2^10",
    "{1, 2, 3}": "{1, 2, 3}",
    "$\\frac{1}{2}$": "$\\frac{1}{2}$",
    "\\(x<1\\)": "\\(x&lt;1\\)",
    "<b>&</b>": "&lt;b&gt;&amp;&lt;/b&gt;",
}


@pytest.mark.parametrize("answer, expected", ANSWERS.items())
def test_an_answer_in_math_mode_latex_is_given_to_katex_as_math(answer: str, expected: str) -> None:
    assert answer_html(answer) == expected
