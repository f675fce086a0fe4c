"""Titles made from rendered text and cut never inside math (problems/latex_html.py). Pure: no database."""

from __future__ import annotations

import pytest

from problems.latex_html import distinct_titles, latex_inline, title_cut, title_from_text


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
        # Nor one after an abbreviation (the MATH collection had nine problems titled "Mr.").
        ("Mr. and Mrs. Lopez have three children. Next.", "Mr. and Mrs. Lopez have three children."),
        ("In 2013, 45% of U.S. adults said so. Next.", "In 2013, 45% of U.S. adults said so."),
        ("Dr. Smith (Fig. 2) measures it, e.g. twice. Next.", "Dr. Smith (Fig. 2) measures it, e.g. twice."),
        # A blank line ends a sentence, as it ends a paragraph in LaTeX.
        ("Use the following information to answer the next four exercises:\n\nX ~ N(54, 8)\n\nFind it.",
         "Use the following information to answer the next four exercises:"),
        # A problem that is one list is titled by its first item (G&S had eight empty titles).
        ("\\begin{enumerate}\n\\item For events $A$ and $B$, prove that\n$$P(A) \\le 1.$$\n\\item Next.\n\\end{enumerate}",
         "For events $A$ and $B$, prove that $$P(A) \\le 1.$$"),
        ("\\begin{tabular}{c} 1 \\end{tabular}", ""),
        ("The \\emx {mean} of $X$ is defined.\\footnote{See Feller.} Next.", "The mean of $X$ is defined."),
        ("Exercise \\ref {exer 3.2.5} is on dice. Next.", "Exercise [link] is on dice."),
        # OpenIntro's parts are a list, and a centred figure its own paragraph.
        ("A study of 208 countries. \\begin{parts} \\item Describe it. \\end{parts}", "A study of 208 countries."),
        ("\\begin{parts}\\item Describe the relationship. \\item Next.\\end{parts}", "Describe the relationship."),
        ("\\begin{center}[Figure: an ear]\\end{center} Which area is used?", "[Figure: an ear]"),
    ],
)
def test_titles_come_from_the_rendered_text(text: str, expected: str) -> None:
    assert title_from_text(text) == expected


def test_an_escaped_dollar_is_shown_as_a_dollar_that_katex_leaves_alone() -> None:
    assert latex_inline("Pay \\$3 to roll $X$") == 'Pay <span class="no-math">$</span>3 to roll $X$'
    assert latex_inline("$\\$5$") == "$\\$5$"  # inside math KaTeX draws it


LEAD = "Use the following information to answer the next three exercises. A bag holds 4 red and 6 blue marbles. "


def test_exercises_that_share_a_lead_in_are_titled_by_their_own_question() -> None:
    texts = [
        LEAD + "Two marbles are drawn without replacement. What is the chance both are red?",
        LEAD + "Three marbles are drawn with replacement. How many are blue on average?",
        LEAD + "Find P(R).",  # short: the sentence before it goes in front
        "A die is rolled. Find P(R).",  # "Find P(R)." again, but this text's first sentence is its own
        "A coin is tossed twice. What is the chance of two heads?",
    ]
    assert distinct_titles(texts) == [
        "Two marbles are drawn without replacement.",
        "Three marbles are drawn with replacement.",
        "A bag holds 4 red and 6 blue marbles. Find P(R).",
        "A die is rolled.",
        "A coin is tossed twice.",
    ]
    # Alone, each is titled by its first sentence, as the new-problem form titles it.
    assert title_from_text(texts[0]) == "Use the following information to answer the next three exercises."


def test_a_question_asked_of_several_scenarios_is_titled_with_the_sentence_before_it() -> None:
    ask = "State the null and alternative hypotheses for this test."
    other = "Use the following information to answer the next two exercises. A die is rolled 60 times and shows a six on 16 of the rolls. "
    texts = [LEAD + ask, LEAD + "What is the chance of drawing a red marble?", other + ask, other + "What is the sample proportion of sixes?"]
    titles = distinct_titles(texts)
    # The lead is cut to make room for the question, which says what the problem asks.
    assert titles[0] == "A bag holds 4 red and 6… " + ask
    assert titles[2] == "A die is rolled 60 times… " + ask
    assert titles[1] == "What is the chance of drawing a red marble?"
    assert len(set(titles)) == 4 and all(len(t) <= 82 for t in titles)


def test_identical_and_empty_texts_still_get_titles() -> None:
    assert distinct_titles([]) == []
    assert distinct_titles(["\\begin{tabular}{c} 1 \\end{tabular}"]) == [""]  # the import titles it by its id
    assert distinct_titles(["Roll a die. Find the mean.", "Roll a die. Find the mean."]) == ["Roll a die. Find the mean."] * 2
    assert distinct_titles(["Roll a die.", "Roll a die. Find the mean of the number of dots shown."]) == [
        "Roll a die.",
        "Find the mean of the number of dots shown.",
    ]
