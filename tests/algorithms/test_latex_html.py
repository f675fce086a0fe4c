from __future__ import annotations

import pytest

from problems.latex_html import latex_to_html

CASES = {
    "Find $P(A)$.": "<p>Find $P(A)$.</p>",
    "One.\n\nTwo.": "<p>One.</p><p>Two.</p>",
    "<b>bold?</b> & $a<b$": "<p>&lt;b&gt;bold?&lt;/b&gt; &amp; $a&lt;b$</p>",
    "\\textbf{Note} and {\\bf CoinTosses}": "<p><b>Note</b> and <b>CoinTosses</b></p>",
    "\\begin{tabular}{ll} x & y \\\\ \\hline 1 & 2 \\end{tabular}": (
        '<p><table class="latex-table"><tr><td>x</td><td>y</td></tr><tr><td>1</td><td>2</td></tr></table></p>'
    ),
    "\\[ \\begin{tabular}{c} a \\end{tabular} \\]": '<p><table class="latex-table"><tr><td>a</td></tr></table></p>',
    "\\begin{itemize} \\item one \\item two \\end{itemize}": "<p><ul><li>one</li><li>two</li></ul></p>",
    # Real textbook markup (../shared/data): OpenIntro's lettered parts, with subparts inside a part,
    # 266 of its 385 exercises; its centred figures (151), type sizes and spanning table headers.
    "\\begin{parts} \\item one \\item two \\begin{subparts} \\item 2a \\item 2b \\end{subparts} \\item three \\end{parts}": (
        '<p><ol type="a" class="parts"><li>one</li><li>two <ol type="a" class="parts"><li>2a</li><li>2b</li></ol></li>'
        "<li>three</li></ol></p>"
    ),
    "\\begin{center}\n[Figure: an ear]\n\\end{center}\n{\\footnotesize From the paper.}": "<p>[Figure: an ear]</p><p>From the paper.</p>",
    "\\begin{tabular}{lcc} & \\multicolumn{2}{c}{\\textit{Pain free}} \\\\ \\raisebox{1.5ex}[0pt]{Group} & Yes & No \\end{tabular}": (
        '<p><table class="latex-table"><tr><td></td><td colspan="2"><i>Pain free</i></td></tr>'
        "<tr><td>Group</td><td>Yes</td><td>No</td></tr></table></p>"
    ),
    # Grinstead & Snell's emphasis macro, footnotes and cross-references into the book (356 of its 705
    # pages showed them as source), spacing commands; inside math nothing changes.
    "See Exercise \\ref{ex:coins}.\\footnote{From 1990.} Then $x \\ref{y}$.": "<p>See Exercise [link]. (From 1990.) Then $x \\ref{y}$.</p>",
    "An \\emx {event} here.\\par\\noindent Next \\vspace{2mm} line.": "<p>An <i>event</i> here.</p><p>Next   line.</p>",
    "\\centering [Figure: dice]\\caption{Two dice.}\\label{fig:dice} at 20\\degree C": "<p>[Figure: dice]Two dice.  at 20° C</p>",
    # Display environments outside $$ are math: KaTeX typesets them, text mode leaves them alone (-- stays).
    "so \\begin{align*} a &= b -- c \\end{align*} -- done": "<p>so \\begin{align*} a &amp;= b -- c \\end{align*} – done</p>",
    # KaTeX has no eqnarray: its three columns become an array in display math.
    "\\begin{eqnarray*} s & = & 1 \\end{eqnarray*}": "<p>$$\\begin{array}{rcl} s &amp; = &amp; 1 \\end{array}$$</p>",
    # A NUL (the import refuses it, but not every caller) is no placeholder for a nested list.
    "\\begin{parts} \\item \x000\x00 \\end{parts}": '<p><ol type="a" class="parts"><li>0</li></ol></p>',
}


@pytest.mark.parametrize("text, expected", CASES.items())
def test_latex_to_html(text: str, expected: str) -> None:
    assert latex_to_html(text) == expected


TEXT_MODE_CASES = {
    "50\\% of $x\\%$": "<p>50% of $x\\%$</p>",
    "A~B --- C \\ldots": "<p>A\u00a0B — C …</p>",
    "\\[ 10\\% \\] and 5\\%": "<p>\\[ 10\\% \\] and 5%</p>",
    # An escaped dollar is a dollar sign KaTeX's auto-render skips (it would open math at "\\$").
    "price \\$5 and $\\frac{1}{2}$": '<p>price <span class="no-math">$</span>5 and $\\frac{1}{2}$</p>',
    "\\begin{tabular}{c} 5\\% & $a\\%$ \\end{tabular}": '<p><table class="latex-table"><tr><td>5%</td><td>$a\\%$</td></tr></table></p>',
}


@pytest.mark.parametrize("text, expected", TEXT_MODE_CASES.items())
def test_text_mode_commands_are_replaced_outside_math_only(text: str, expected: str) -> None:
    assert latex_to_html(text) == expected


def test_latex_inline_escapes_and_keeps_math() -> None:
    from problems.latex_html import latex_inline

    assert latex_inline("<i>50\\%</i> of $a<b$") == "&lt;i&gt;50%&lt;/i&gt; of $a&lt;b$"


HIGHLIGHT_CASES = [
    ("use \\binom here", [(4, 10)], "use <mark>\\binom</mark> here"),
    ("see $\\binom{n}{k}$ ok", [(5, 11)], "see <mark>$\\binom{n}{k}$</mark> ok"),
    ("a<b and c", [(4, 7)], "a&lt;b <mark>and</mark> c"),
    ("one\ntwo", [], "one<br>two"),
    ("x $a$ y $b$", [(3, 4), (8, 9)], "x <mark>$a$</mark> y <mark>$b$</mark>"),
    ("aaa bbb", [(0, 2), (1, 3)], "<mark>aaa</mark> bbb"),
    # ``Quotes'' read as quotes; f''(x) in math stays TeX.
    ("a ``word'' and $f''(x)$", [(0, 1)], "<mark>a</mark> \u201cword\u201d and $f''(x)$"),
    # A table is shown as source KaTeX leaves alone, whole even when a match falls inside it.
    ("T: $$\\begin{tabular}{cc} a & b \\end{tabular}$$ end", [(22, 23)],
     'T: <mark><span class="no-math tex-source">$$\\begin{tabular}{cc} a &amp; b \\end{tabular}$$</span></mark> end'),
    ("\\begin{tabular}{c} x \\end{tabular} y", [],
     '<span class="no-math tex-source">\\begin{tabular}{c} x \\end{tabular}</span> y'),
]


@pytest.mark.parametrize("text, spans, expected", HIGHLIGHT_CASES)
def test_highlights_never_cut_a_formula(text: str, spans: list[tuple[int, int]], expected: str) -> None:
    from problems.latex_html import latex_highlight

    assert latex_highlight(text, spans) == expected
