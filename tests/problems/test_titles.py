"""Titles made from rendered text and cut never inside math (problems/latex_html.py). Pure: no database."""

from __future__ import annotations

import json

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
        # A title that opens with a formula longer than the limit goes on with the words after it.
        ("$\\frac{a}{b} + \\frac{c}{d}$ is the sum", 14, "… is the sum"),
        ("$\\frac{a}{b} + \\frac{c}{d}$ is the sum", 5, "… is…"),
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
    assert titles[0] == "A bag holds 4 red and… " + ask
    assert titles[2] == "A die is rolled 60… " + ask
    assert titles[1] == "What is the chance of drawing a red marble?"
    assert len(set(titles)) == 4 and all(len(t) <= 80 for t in titles)


def test_identical_and_empty_texts_still_get_titles() -> None:
    assert distinct_titles([]) == []
    assert distinct_titles(["\\begin{tabular}{c} 1 \\end{tabular}"]) == [""]  # the import titles it by its id
    assert distinct_titles(["Roll a die. Find the mean.", "Roll a die. Find the mean."]) == ["Roll a die. Find the mean."] * 2
    assert distinct_titles(["Roll a die.", "Roll a die. Find the mean of the number of dots shown."]) == [
        "Roll a die.",
        "Find the mean of the number of dots shown.",
    ]


# --- The limit is a promise: Problem.title holds 200 characters (problems/bank_io.py MAX_TITLE_CHARS) ---

# A sum of 29 fractions, some 400 characters of TeX, then the question.
LONG_SUM = "$" + "+".join(f"\\frac{{{i}}}{{{i + 1}}}" for i in range(1, 30)) + "$"


def test_a_text_that_opens_with_a_formula_longer_than_the_limit_is_titled_by_the_words_after_it() -> None:
    assert len(LONG_SUM) > 200
    assert title_from_text(LONG_SUM + " equals what?") == "… equals what?"
    assert title_from_text(LONG_SUM + " equals what?", limit=200) == "… equals what?"
    assert title_from_text(LONG_SUM + ".") == "…"  # nothing but the formula
    assert title_cut(f"{LONG_SUM}, {LONG_SUM} are equal", 80) == "… are equal"  # one "…" for both
    assert title_cut(f"{LONG_SUM} and {LONG_SUM} are equal", 80) == "… and…"  # a later formula: cut before
    assert distinct_titles([LONG_SUM + " equals what?", "Roll a die."]) == ["… equals what?", "Roll a die."]


def test_an_import_never_derives_a_title_longer_than_the_title_field() -> None:
    from problems import bank_io

    rows = [{"id": "1", "text": LONG_SUM + " equals what?"}, {"id": "2", "text": f"Is {LONG_SUM} less than 29?"}]
    records = bank_io.parse_jsonl(b"\n".join(json.dumps(r).encode() for r in rows)).records
    assert [r.title for r in records] == ["… equals what?", "Is…"]
    assert all(len(r.title) <= bank_io.MAX_TITLE_CHARS for r in records)


TITLES = [
    "Short title",
    "word " * 40,
    "Find $P(A \\cup B)$ when $P(A) = 0.3$ and more",
    "$\\frac{a}{b} + \\frac{c}{d}$ is the sum of $x$ and $y$",
    "($a + b + c$) and then $$x^2 + y^2$$ or \\(z\\), done",
    "Roll dice until $\\frac{1",
    "Spent $150, $200, and $225 on $n$ books",
    "Averylongwordwithoutanyspaceatall and more",
]


@pytest.mark.parametrize("title", TITLES)
def test_title_cut_never_exceeds_the_limit_nor_ends_inside_math(title: str) -> None:
    from problems.latex_html import _MATH

    for limit in range(0, len(title) + 3):
        cut = title_cut(title, limit)
        assert len(cut) <= limit, (limit, cut)
        # Every formula of the cut title is one of the title's, whole.
        assert set(_MATH.findall(cut)) <= set(_MATH.findall(title)), (limit, cut)


@pytest.mark.parametrize(
    "text, expected",
    [
        # Grinstead & Snell's display equations (eqnarray*) are math: no sentence ends inside one, and the
        # title shows what the page shows, an array KaTeX typesets.
        ("Suppose $Z = X + Y$. Find $f_Z$ if\n\\begin{eqnarray*}\nf_X(x) &=& e^{-x} \\\\\nf_Y(x) &=& 1\\ .\n\\end{eqnarray*}",
         ["Suppose $Z = X + Y$.", "Find $f_Z$ if $$\\begin{array}{rcl} f_X(x) &=& e^{-x} \\\\ f_Y(x) &=& 1\\ . \\end{array}$$"]),
        ("Let \\begin{eqnarray} a &=& 1. \\end{eqnarray} Next.", ["Let $$\\begin{array}{rcl} a &=& 1. \\end{array}$$ Next."]),
        ("Let \\begin{displaymath} a = 1. b \\end{displaymath} hold. Next.", ["Let $$ a = 1. b $$ hold.", "Next."]),
        ("Let \\begin{align*} a &= 1. \\\\ b &= 2. \\end{align*} hold. Next.", ["Let \\begin{align*} a &= 1. \\\\ b &= 2. \\end{align*} hold.", "Next."]),
        ("Let \\begin{equation} a = 1. \\end{equation} hold. Next.", ["Let \\begin{equation} a = 1. \\end{equation} hold.", "Next."]),
    ],
)
def test_display_environments_are_math_in_titles(text: str, expected: list[str]) -> None:
    from problems.latex_html import title_sentences

    assert title_sentences(text) == expected


def test_a_title_cut_in_a_display_environment_falls_before_it() -> None:
    text = "Find $f_Z$ if\n\\begin{eqnarray*}\nf_X(x) &=& \\frac 1{\\sqrt{2\\pi}\\sigma_1} e^{-(x - \\mu_1)^2/2\\sigma_1^2}\n\\end{eqnarray*}"
    assert title_from_text(text) == "Find $f_Z$ if…"


@pytest.mark.parametrize(
    "text, expected",
    [
        # A footnote goes whole, with the markup inside it ({\em ...}) and its math.
        ("(Banach's Matchbox\\footnote{W.~Feller, {\\em\nIntroduction,} p.~166.}) A man carries two boxes. Next.",
         "(Banach's Matchbox) A man carries two boxes."),
        ("A rule\\footnote{See $p_n$, {\\bf bold}.} holds. Next.", "A rule holds."),
        ("A rule\\footnote{never closed. Next.", "A rule\\footnote{never closed."),  # left as written
        # Layout environments go, their text stays.
        ("\\begin{sloppypar} Given that $P(X = a) = r$, find $s$.\\end{sloppypar}", "Given that $P(X = a) = r$, find $s$."),
        ("\\begin{flushleft}Flip a coin.\\end{flushleft} Next.", "Flip a coin."),
        ("\\begin{quote}Flip a coin.\\end{quote}", "Flip a coin."),
    ],
)
def test_footnotes_and_layout_environments_never_reach_a_title(text: str, expected: str) -> None:
    assert title_from_text(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # Bare dollars are money (OpenStax): not math, not an unclosed formula to cut at.
        ("A $1 scratch ticket wins one time in five. Next.", "A $1 scratch ticket wins one time in five."),
        ("Three spent $150, $200, and $225. Next.", "Three spent $150, $200, and $225."),
        ("It cost $1,700 and was the 90$^{th}$ percentile. Next.", "It cost $1,700 and was the 90$^{th}$ percentile."),
        # A full stop in prose between two amounts ends the sentence (it was inside "math").
        ("The mean is $25,000. The median is $30,000.", "The mean is $25,000."),
    ],
)
def test_money_is_prose_in_titles(text: str, expected: str) -> None:
    assert title_from_text(text) == expected


def test_a_dollar_in_a_title_is_shown_as_a_dollar_that_katex_leaves_alone() -> None:
    sign = '<span class="no-math">$</span>'
    assert latex_inline("Spent $150 and $200 on $n$ books") == f"Spent {sign}150 and {sign}200 on $n$ books"
