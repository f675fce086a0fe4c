"""Titles made from rendered text and cut never inside math (problems/latex_html.py). Pure: no database."""

from __future__ import annotations

import pytest

from problems.latex_html import latex_inline, title_cut, title_from_text


@pytest.mark.parametrize(
    "title, limit, expected",
    [
        ("Short title", 80, "Short title"),
        ("word " * 40, 80, ("word " * 16).rstrip() + "…"),
        # The limit falls inside a formula: cut before it, at the last space outside math.
        ("Find $P(A \\cup B)$ when $P(A) = 0.3$ and more", 28, "Find $P(A \\cup B)$ when…"),
        ("Sensitivity $P(+ \\mid \\text{disease}) = 0.99$ and more", 20, "Sensitivity…"),
        # A space inside a formula is no place to cut.
        ("Let $a + b + c + d$ be given", 15, "Let…"),
        # A title that is one long formula keeps it whole rather than be empty.
        ("$\\frac{a}{b} + \\frac{c}{d}$ is the sum", 5, "$\\frac{a}{b} + \\frac{c}{d}$…"),
        # Display math and \( \) count as math too.
        ("Solve \\(x^2 + y^2 = 1\\) for y now", 14, "Solve…"),
        ("Solve $$x^2 + y^2 = 1$$ for y now", 14, "Solve…"),
        # A title already cut inside math (stored by an older import) loses the half formula.
        ("Roll dice until $\\frac{1", None, "Roll dice until…"),
        ("Roll dice until \\(\\frac{1", None, "Roll dice until…"),
        ("Pay \\$3 to roll $X$", None, "Pay \\$3 to roll $X$"),
        ("", 10, ""),
    ],
)
def test_title_cut_never_ends_inside_math(title: str, limit: int | None, expected: str) -> None:
    assert title_cut(title, limit) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Roll two dice. What is the sum?", "Roll two dice."),
        ("Every packet is one of TCP, UDP or ``other''. Find the rate.", "Every packet is one of TCP, UDP or “other”."),
        ("In a cohort, 45\\% use Python. Rest.", "In a cohort, 45% use Python."),
        ("A store buys $60\\%$ from A. More.", "A store buys $60\\%$ from A."),  # inside math, \% stays TeX
        ("Counts: $$\\begin{tabular}{cc} a & b \\end{tabular}$$ Find \\textbf{the} mean.", "Counts: Find the mean."),
        ("Items \\begin{itemize}\\item one\\end{itemize} are listed. Next.", "Items are listed."),
        # A full stop inside a formula does not end the sentence.
        ("Let $x = 0.5. y$ hold. Next.", "Let $x = 0.5. y$ hold."),
    ],
)
def test_titles_come_from_the_rendered_text(text: str, expected: str) -> None:
    assert title_from_text(text) == expected


def test_an_escaped_dollar_is_shown_as_a_dollar_that_katex_leaves_alone() -> None:
    assert latex_inline("Pay \\$3 to roll $X$") == 'Pay <span class="no-math">$</span>3 to roll $X$'
    assert latex_inline("$\\$5$") == "$\\$5$"  # inside math KaTeX draws it
