"""LaTeX problem text to safe HTML for the browser, where KaTeX renders the math. Pure: no Django.

Math stays in its delimiters ($...$, $$...$$, \\[...\\], \\(...\\)) for KaTeX's auto-render;
everything is HTML-escaped first, so problem text can never inject markup. Text-mode constructs
that KaTeX does not handle (tabular, itemize/enumerate, \\textbf, \\%, ~, paragraphs) become HTML,
and only outside math, where KaTeX would otherwise see them verbatim.
"""

from __future__ import annotations

import bisect
import html
import re
from collections import Counter
from typing import Collection, Sequence

_TABULAR = re.compile(r"\\begin\{tabular\}(\{[^}]*\})?(.*?)\\end\{tabular\}", re.S)
# Authors often wrap a tabular in display math; KaTeX cannot typeset tabular, so drop the wrapper.
_WRAPPED_TABULAR = re.compile(r"(?:\\\[|\$\$)\s*(\\begin\{tabular\}.*?\\end\{tabular\})\s*(?:\\\]|\$\$)", re.S)
# OpenIntro writes its lettered parts as `parts` (and `subparts` within them): lists too.
_LIST_NAMES = "itemize|enumerate|parts|subparts"
_LIST = re.compile(rf"\\begin\{{({_LIST_NAMES})\}}(.*?)\\end\{{\1\}}", re.S)
_BLOCK = re.compile(rf"\\begin\{{tabular\}}.*?\\end\{{tabular\}}|\\begin\{{({_LIST_NAMES})\}}.*?\\end\{{\1\}}", re.S)
# Layout environments that only place their text (centred, in columns, indented, or spaced looser:
# Grinstead & Snell's sloppypar): their text is kept, as a paragraph of its own, on the page and in titles.
_LAYOUT = re.compile(
    r"\\(?:begin|end)\{(?:center|flushleft|flushright|quote|quotation|table|adjustwidth|multicols|sloppypar)\}(?:\{[^{}]*\})*"
)
_RULES = re.compile(r"\\(hline|toprule|midrule|bottomrule|cline\{[^}]*\})")
# Math: what KaTeX's auto-render typesets (static/js/site.js has the same delimiters), including the
# display environments textbooks write outside $$ (OpenIntro's align*).
_MATH_ENV = r"\\begin\{(?:align|equation|gather)\*?\}.*?\\end\{(?:align|equation|gather)\*?\}"
# A single $ is paired with the first unescaped $ after it. A $ right before a digit is money as often
# as math (OpenStax writes "spent $150, $200, and $225": 40 of its texts had prose typeset as math), so
# it opens math only under Pandoc's rule for inline TeX math: the closing $ has a non-space character
# right before it and no digit right after it ("$20,000 and $30,000" is prose, "$0.5$" math), nor ^ or _,
# which TeX allows in math only: that $ opens a formula ("the 90$^{th}$ percentile"). A $ right before
# ")" opens nothing (a unit in a table head, "Cost ($)"). Every other $ pairs as TeX pairs it: Pandoc's
# rule whole (no space inside either dollar) would lose math the textbooks write with spaces,
# "$ \mat{P}^n$" (Grinstead & Snell), "$ S $" (MATH), "$\mu - \sigma < x < \mu $", and "$\pounds$2,600"
# (OpenIntro), some 30 formulas in ../shared/data.
_INLINE_DOLLARS = r"(?<!\\)\$(?:(?=\d)(?:\\.|[^$\\])+(?<!\s)\$(?![\d^_])|(?![\d)])(?:\\.|[^$\\])+\$)"
_MATH = re.compile(rf"(\$\$.*?\$\$|\\\[.*?\\\]|\\\(.*?\\\)|{_MATH_ENV}|{_INLINE_DOLLARS})", re.S)
# A cross-reference into the book the problem came from ("Exercise \ref{ex:coins}"): the page says
# "[link]", as OpenStax's own exports do.
_REFERENCE = re.compile(r"\\(?:ref|eqref|pageref)\s*\{[^{}]*\}")
_SPACING = re.compile(
    r"\\(?:[vh]space\*?\s*\{[^{}]*\}|label\{[^{}]*\}|noindent|indent|smallskip|medskip|bigskip|medbreak|break|newline|hfill|centering)(?![A-Za-z])"
)
_DOLLAR = re.compile(r"\\?\$")
_DOLLAR_SIGN = '<span class="no-math">$</span>'
_TEXT_MODE = [
    (re.compile(r"\\textbf\{([^{}]*)\}|\{\\bf ([^{}]*)\}"), lambda m: f"<b>{m.group(1) or m.group(2)}</b>"),
    (re.compile(r"\\(?:emph|textit)\{([^{}]*)\}|\{\\(?:em|it) ([^{}]*)\}"), lambda m: f"<i>{m.group(1) or m.group(2)}</i>"),
    (re.compile(r"\\(?:texttt|textrm|text|mbox)\{([^{}]*)\}"), lambda m: m.group(1)),
    # Book markup with no counterpart on a problem page (../shared/data: Grinstead & Snell's own
    # emphasis macro \emx, footnotes, cross-references to the book, spacing).
    (re.compile(r"\\emx\s*\{([^{}]*)\}"), lambda m: f"<i>{m.group(1)}</i>"),
    (re.compile(r"\\footnote\s*\{([^{}]*)\}"), lambda m: f" ({m.group(1)})"),
    (_REFERENCE, lambda m: "[link]"),
    (re.compile(r"\\multirow\{[^{}]*\}\{[^{}]*\}\{([^{}]*)\}"), lambda m: m.group(1)),
    (re.compile(r"\\(?:caption|fbox)\{([^{}]*)\}"), lambda m: m.group(1)),
    (re.compile(r"\\(?:text)?degree(?![A-Za-z])(?:\{\})?"), lambda m: "°"),
    (re.compile(r"\\par\b"), lambda m: "\n\n"),
    (_SPACING, lambda m: " "),
    # Type size and placement only: the text stays ("{\footnotesize Figure from the paper.}").
    (re.compile(r"\{\\(?:tiny|scriptsize|footnotesize|small|normalsize|large|Large)\s+([^{}]*)\}"), lambda m: m.group(1)),
    (re.compile(r"\\raisebox\{[^{}]*\}(?:\[[^\]]*\])*\{([^{}]*)\}"), lambda m: m.group(1)),
    (re.compile(r"\\([%&#_{}])"), lambda m: m.group(1)),
    # A dollar outside math, escaped ("pay \$3") or not ("spent $150"), is a dollar sign, in a span
    # KaTeX's auto-render skips (no-math): it pairs any two dollars of a text node, money or not.
    (_DOLLAR, lambda m: _DOLLAR_SIGN),
    (re.compile(r"\\(ldots|dots)\b"), lambda m: "…"),
    (re.compile(r"(?<!\\)~"), lambda m: "\u00a0"),
    (re.compile(r"---"), lambda m: "—"),
    (re.compile(r"--"), lambda m: "–"),
    (re.compile(r"``|''"), lambda m: "\u201c" if m.group(0) == "``" else "\u201d"),
]


def _text_mode(segment: str) -> str:
    for pattern, replace in _TEXT_MODE:
        segment = pattern.sub(replace, segment)
    return segment


def _outside_math(text: str) -> str:
    """Apply text-mode replacements to the parts of `text` that are not math."""
    parts = _MATH.split(text)
    return "".join(part if i % 2 else _text_mode(part) for i, part in enumerate(parts))


def _table(match: re.Match[str]) -> str:
    body = _RULES.sub("", match.group(2))
    out = ['<table class="latex-table">']
    for row in (r.strip() for r in re.split(r"\\\\", body)):
        if row:
            out.append("<tr>" + "".join(_cell(c.strip()) for c in re.split(r"(?<!\\)&amp;", row)) + "</tr>")
    out.append("</table>")
    return "".join(out)


_MULTICOLUMN = re.compile(r"\\multicolumn\{(\d+)\}\{[^{}]*\}\{(.*)\}", re.S)


def _cell(cell: str) -> str:
    """A table cell; `\\multicolumn{2}{c}{Pain free}` spans its columns."""
    m = _MULTICOLUMN.fullmatch(cell)
    if m:
        return f'<td colspan="{min(int(m.group(1)), 50)}">{_outside_math(m.group(2).strip())}</td>'
    return f"<td>{_outside_math(cell)}</td>"


def _list(match: re.Match[str]) -> str:
    name, body = match.group(1), match.group(2)
    # A list inside an item (subparts in parts) is made first, and kept out of the text-mode pass.
    nested: list[str] = []

    def keep(inner: re.Match[str]) -> str:
        nested.append(_list(inner))
        return f"\x00{len(nested) - 1}\x00"

    body = _LIST.sub(keep, body.replace("\x00", ""))
    items = [_outside_math(i.strip()) for i in re.split(r"\\item\b", body) if i.strip()]
    items = [re.sub("\x00(\\d+)\x00", lambda m: nested[int(m.group(1))], i) for i in items]
    tag = {"itemize": "ul", "enumerate": "ol"}.get(name, 'ol type="a" class="parts"')
    return f"<{tag}>" + "".join(f"<li>{i}</li>" for i in items) + f"</{tag.split()[0]}>"


def _blocks(escaped: str) -> str:
    """Tables and lists become HTML; the text between them gets text-mode replacements."""
    out, pos = [], 0
    for m in _BLOCK.finditer(escaped):
        out.append(_outside_math(escaped[pos : m.start()]))
        block = m.group(0)
        out.append(_TABULAR.sub(_table, block) if block.startswith("\\begin{tabular}") else _LIST.sub(_list, block))
        pos = m.end()
    out.append(_outside_math(escaped[pos:]))
    return "".join(out)


# KaTeX has no eqnarray (Grinstead & Snell's display equations): the same three columns as an array.
# Nor does its auto-render know displaymath: that is $$ by another name. A body never runs past the
# next \begin of its kind, so a text of unclosed ones is read in linear time (titles promise it).
_EQNARRAY = re.compile(r"\\begin\{eqnarray\*?\}((?:(?!\\begin\{eqnarray).)*?)\\end\{eqnarray\*?\}", re.S)
_DISPLAYMATH = re.compile(r"\\begin\{displaymath\}((?:(?!\\begin\{displaymath).)*?)\\end\{displaymath\}", re.S)


def _as_katex_math(text: str) -> str:
    """Display environments KaTeX cannot take as they are, rewritten as $$ math it typesets; layout
    environments (sloppypar, center...) give way to a paragraph break, their text kept. The page and
    the title read a text through this one function, so a title is never cut inside what the page
    shows as a formula."""
    text = _EQNARRAY.sub(lambda m: f"$$\\begin{{array}}{{rcl}}{m.group(1)}\\end{{array}}$$", _LAYOUT.sub("\n\n", text))
    return _DISPLAYMATH.sub(lambda m: f"$${m.group(1)}$$", text)


def latex_to_html(text: str) -> str:
    text = _as_katex_math(text)
    escaped = _WRAPPED_TABULAR.sub(lambda m: m.group(1), html.escape(text, quote=False))
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", _blocks(escaped)) if p.strip()]
    return "".join(f"<p>{p}</p>" for p in paragraphs)


def latex_inline(text: str) -> str:
    """One line of LaTeX (a title): escaped, text-mode commands replaced, math left for KaTeX."""
    return _outside_math(html.escape(text, quote=False))


# MATH's answers are what its solutions put in \boxed{}: math-mode LaTeX without delimiters
# (`\frac{1}{2}`, `50\%`, `1,\!000`), which KaTeX's auto-render leaves on the page as source.
# Only a command or a braced script marks math mode: a typed "2^10" or "{1, 2, 3}" reads right as text
# and would not typeset as meant (2 to the 1, then 0; the braces dropped).
_MATH_MODE_MARKUP = re.compile(r"\\\S|[\^_]\{")
_ANY_DELIMITER = re.compile(r"(?<!\\)\$|\\\(|\\\[")


def answer_html(answer: str) -> str:
    """A problem's answer, escaped, for a `math` element: one written in math-mode LaTeX with no
    delimiters is put inside `\\(…\\)` so that KaTeX renders it; plain answers ("0.37",
    "chemistry", "1365; 0.0923") and ones with their own delimiters are left as they are."""
    if _MATH_MODE_MARKUP.search(answer) and not _ANY_DELIMITER.search(answer):
        answer = f"\\({answer}\\)"
    return html.escape(answer, quote=False)


# A table as written (with the display-math wrapper some authors put around it): KaTeX cannot typeset
# tabular, so the preview shows it as source in a box KaTeX leaves alone, rather than as a red error.
_SOURCE_TABLE = re.compile(r"(?:\\\[|\$\$)\s*\\begin\{tabular\}.*?\\end\{tabular\}\s*(?:\\\]|\$\$)|\\begin\{tabular\}.*?\\end\{tabular\}", re.S)
_QUOTES = re.compile(r"``|''")


def _expand_to_math(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Grow spans so none cuts a math segment (or a table): a highlight then wraps whole formulas
    KaTeX can render."""
    maths = [m.span() for m in _MATH.finditer(text)] + [m.span() for m in _SOURCE_TABLE.finditer(text)]
    grown = []
    for start, end in sorted(spans):
        for m_start, m_end in maths:
            if m_start < end and start < m_end:
                start, end = min(start, m_start), max(end, m_end)
        if grown and start <= grown[-1][1]:
            grown[-1] = (grown[-1][0], max(end, grown[-1][1]))
        else:
            grown.append((start, end))
    return grown


# How rule_text (concepts/extraction.py) joins a statement and its solution ("Solution:" is its
# SOLUTION_HEADING). The preview finds math in each apart, as the page shows them: a money $ in the
# statement ("a $3 profit") never pairs with a formula's $ in the solution.
_SOLUTION_JOIN = "\n\nSolution: "


def _rule_text_parts(text: str) -> list[tuple[int, int]]:
    """Where the statement and the solution of a rule text lie (the join goes with the solution)."""
    cut = text.find(_SOLUTION_JOIN)
    return [(0, len(text))] if cut < 0 else [(0, cut), (cut, len(text))]


def latex_highlight(text: str, spans: list[tuple[int, int]]) -> str:
    """Problem text with matched character spans in <mark>, for the rule preview.

    Line breaks outside math are kept (<br>); inside math they stay line breaks, so a formula stays
    one text node KaTeX typesets. Math stays in its delimiters for KaTeX, found in the statement and
    the solution of a rule text apart (a highlight over the join is two marks). Text-mode conversions
    are skipped on purpose (the TA sees the source the regex ran on), except two that would otherwise
    read as noise: ``quotes'' become curly quotes, and a tabular is shown as its source in a box
    (class tex-source) that KaTeX leaves alone, as is a $ outside math.
    """
    out = []
    for lo, hi in _rule_text_parts(text):
        part = text[lo:hi]
        # The spans in this part, cut to it; an empty span goes to the part it starts in.
        inside = [
            (max(s, lo) - lo, min(e, hi) - lo)
            for s, e in spans
            if (s < hi or s == hi == len(text)) and (e > lo or s == e >= lo)
        ]
        pos = 0
        for start, end in _expand_to_math(inside, part):
            out.append(_source_piece(part[pos:start]))
            out.append(f"<mark>{_source_piece(part[start:end])}</mark>")
            pos = end
        out.append(_source_piece(part[pos:]))
    return "".join(out)


def _source_piece(piece: str) -> str:
    """Escaped source; tables boxed, quotes curly outside math. Spans never cut a table or formula."""
    out, pos = [], 0
    for m in _SOURCE_TABLE.finditer(piece):
        out.append(_quotes_outside_math(html.escape(piece[pos : m.start()], quote=False)))
        out.append(f'<span class="no-math tex-source">{html.escape(m.group(0), quote=False).replace(chr(10), "<br>")}</span>')
        pos = m.end()
    out.append(_quotes_outside_math(html.escape(piece[pos:], quote=False)))
    return "".join(out)


def _quotes_outside_math(escaped: str) -> str:
    """Curly quotes outside math, each $ there (money, or the one in "\\$") in a no-math span (KaTeX's
    auto-render would pair it with the next one), and each line break there a <br>. A line break in
    math stays one: a <br> would split the formula into text nodes KaTeX pairs the dollars of apart."""
    parts = _MATH.split(escaped)
    return "".join(
        part
        if i % 2
        else _QUOTES.sub(lambda m: "\u201c" if m.group(0) == "``" else "\u201d", part).replace("$", _DOLLAR_SIGN).replace("\n", "<br>")
        for i, part in enumerate(parts)
    )


# --- Titles: made from the rendered text, never cut inside math ------------------------------------

_BLOCKS = re.compile(
    r"(?:\\\[|\$\$)\s*\\begin\{tabular\}.*?\\end\{tabular\}\s*(?:\\\]|\$\$)"
    rf"|\\begin\{{(tabular|{_LIST_NAMES})\}}.*?\\end\{{\1\}}",
    re.S,
)
# Text-mode markup as plain characters (a title is text, not HTML). `\$` stays: as a bare `$` it would
# open math when the title is shown; latex_inline turns it into a dollar sign KaTeX leaves alone.
_PLAIN_TEXT_MODE = [
    (re.compile(r"\\emx\s*\{([^{}]*)\}"), lambda m: m.group(1)),
    (_REFERENCE, lambda m: "[link]"),
    (re.compile(r"\\par\b"), lambda m: " "),
    (_SPACING, lambda m: " "),
    (re.compile(r"\\(?:textbf|emph|textit|texttt|textrm|text|mbox)\{([^{}]*)\}|\{\\(?:bf|em|it) ([^{}]*)\}"),
     lambda m: m.group(1) if m.group(1) is not None else m.group(2)),
    (re.compile(r"\\([%&#_{}])"), lambda m: m.group(1)),
    (re.compile(r"\\(ldots|dots)\b"), lambda m: "…"),
    (re.compile(r"(?<!\\)~"), lambda m: " "),
    (re.compile(r"---"), lambda m: "—"),
    (re.compile(r"--"), lambda m: "–"),
    (re.compile(r"``|''"), lambda m: "\u201c" if m.group(0) == "``" else "\u201d"),
]
_FOOTNOTE = re.compile(r"\s*\\footnote\s*\{")


def _without_footnotes(text: str) -> str:
    """`text` without its footnotes, braces and all: a title says nothing of its source. Braces are
    counted because a footnote holds markup of its own ("\\footnote{W. Feller, {\\em Introduction}}"), and
    math (split off before the text-mode pass, so no pattern of that pass could take a footnote whole)."""
    out, pos = [], 0
    for m in _FOOTNOTE.finditer(text):
        if m.start() < pos:
            continue  # a footnote inside the one just dropped
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 2 if text[i] == "\\" else 1
        if depth:
            break  # never closed: left as written, rather than lose the rest of the text
        out.append(text[pos : m.start()])
        pos = i
    out.append(text[pos:])
    return "".join(out)


# An opening delimiter left without its closing one (outside every complete math segment). A $ before
# a digit with no closing $ is money ("$150"), and one before ")" opens nothing (_INLINE_DOLLARS).
_OPEN_MATH = re.compile(r"(?<!\\)\$(?![\d)])|\\\(|\\\[")


def _plain_outside_math(text: str) -> str:
    parts = _MATH.split(text)
    out = []
    for i, part in enumerate(parts):
        if not i % 2:
            for pattern, replace in _PLAIN_TEXT_MODE:
                part = pattern.sub(replace, part)
        out.append(part)
    return "".join(out)


def _math_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _MATH.finditer(text)]


def _inside(pos: int, spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The formula `pos` falls strictly inside, if any; `spans` in order, as _MATH finds them."""
    i = bisect.bisect_left(spans, (pos, pos)) - 1
    return spans[i] if i >= 0 and pos < spans[i][1] else None


def _first_unclosed(title: str, spans: list[tuple[int, int]]) -> int | None:
    """Where the first opening delimiter outside every formula of `title` is: one pass over both."""
    later = iter(spans)
    span = next(later, None)
    for m in _OPEN_MATH.finditer(title):
        while span is not None and span[1] <= m.start():
            span = next(later, None)
        if span is None or m.start() < span[0]:
            return m.start()
    return None


def title_cut(title: str, limit: int | None = None) -> str:
    """`title` shortened to at most `limit` characters ("…" included) at a word boundary, never
    inside math. "…" marks a cut.

    A formula the limit falls in is cut before. A title that opens with a formula longer than the
    limit (Problem.title holds 200 characters; a sum of thirty fractions is longer) goes on with the
    words after it, "… equals what?": what is asked reads better than a formula's first characters
    as TeX source, and an ellipsis says something came before. With no words after it the title is
    "…". An opening delimiter with no closing one (a title cut elsewhere, carelessly) is cut off
    too, so KaTeX never shows half a formula as TeX source."""
    spans = _math_spans(title)
    unclosed = _first_unclosed(title, spans)
    if unclosed is None and (limit is None or len(title) <= limit):
        return title
    if unclosed is not None and (limit is None or unclosed < limit):
        return _with_ellipsis(title[:unclosed])  # at most `unclosed` characters and the "…"
    if limit < 1:
        return ""
    end = limit - 1  # room for the "…"
    around = _inside(end, spans)
    if around:
        end = around[0]
        if not title[:end].rstrip(_TRAILING):
            return _after_formula(title[around[1] :], limit)
    elif not title[end].isspace():
        # Back to the last space that is not inside a formula (a word is never split).
        end = next((i for i in range(end, 0, -1) if title[i - 1].isspace() and not _inside(i - 1, spans)), end)
    return _with_ellipsis(title[:end])


# Left off the end of a cut title, before its "…": "Let $x$, and…" would read as "Let $x$, …".
_TRAILING = " ,;:—–-("


def _with_ellipsis(head: str) -> str:
    return head.rstrip(_TRAILING) + "…"


def _after_formula(rest: str, limit: int) -> str:
    """The title after an opening formula too long for `limit`, "… " in front."""
    tail = title_cut(rest.lstrip(" \t\n,;:.)]"), limit - 2)
    if not any(c.isalnum() for c in tail):
        return "…"
    return tail if tail.startswith("…") else "… " + tail  # one "…" for a run of formulas left out


# A full stop after these does not end a sentence ("Mr. and Mrs. Lopez have four children.", "U.S. adults").
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|cf|Fig|approx|(?:[A-Z]\.)+[A-Z])\.$")
_LIST_MARKUP = re.compile(rf"\\(?:begin|end)\{{(?:{_LIST_NAMES})\}}(?:\[[^\]]*\])?|\\item\b(?:\[[^\]]*\])?")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# An own sentence shorter than this ("statistic", "Find the mean.") says little alone: the title puts
# the sentence before it in front.
SHORT_TITLE = 25
# A lead put in front of a sentence that says little alone is never cut shorter than this (two or
# three words), even when the sentence then has to be cut.
SHORTEST_LEAD = 20
# Sentences read for a title: exercises share a lead-in of a few sentences (the longest in ../shared/data: 18, OpenStax).
MOST_SENTENCES = 40


def title_sentences(text: str, most: int = MOST_SENTENCES) -> list[str]:
    """The first `most` sentences of `text` as a title reads them: rendered (tables and lists left
    out, text-mode markup as characters, math kept as math), a blank line ending a sentence as it
    ends a paragraph. A text that is nothing but a list (`\\begin{enumerate}\\item ...`) is read
    from its items. Linear in the text's length, whatever it holds (an import reads 100,000 texts)."""
    text = _without_footnotes(_as_katex_math(text))
    plain = _BLOCKS.sub(" ", text)
    if not plain.strip():
        plain = _BLOCKS.sub(" ", _LIST_MARKUP.sub("\n\n", text))
    sentences: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(plain):
        paragraph = _plain_outside_math(re.sub(r"\s+", " ", paragraph).strip())
        maths, start = iter(_math_spans(paragraph)), 0
        math = next(maths, None)
        for m in re.finditer(r"(?<=[.?!])\s", paragraph):
            while math is not None and math[1] <= m.start():
                math = next(maths, None)
            inside = math is not None and math[0] < m.start()
            # An abbreviation is a few characters before the stop: a bounded look, never the sentence.
            if inside or _ABBREVIATION.search(paragraph, max(start - 1, m.start() - 16, 0), m.start()):
                continue
            sentences.append(paragraph[start : m.start()])
            start = m.end()
            if len(sentences) >= most:
                return [s for s in sentences if s]
        sentences.append(paragraph[start:])
        if len(sentences) >= most:
            break
    return [s for s in sentences if s][:most]


def title_from_text(text: str, limit: int = 80) -> str:
    """A title from problem text: its first sentence (`title_sentences`), cut with `title_cut`."""
    return _title_at(title_sentences(text), 0, limit)


def _title_at(sentences: Sequence[str], at: int, limit: int, common: Collection[str] = ()) -> str:
    """The title from sentence `at` on. A sentence that is not the first gets the one before it in
    front where it says little alone: under SHORT_TITLE characters ("Find P(N).") or in `common`,
    asked of other problems too ("State the null and alternative hypotheses.")."""
    if not sentences:
        return ""
    own = sentences[at]
    if at == 0 or (len(own) >= SHORT_TITLE and own not in common):
        return title_cut(own, limit)
    # The lead gets the room the question leaves; a question too long to leave a few words of lead
    # is cut instead, as what tells this problem from the others that ask it is the lead.
    lead = title_cut(sentences[at - 1], max(limit - len(own) - 1, SHORTEST_LEAD))
    return title_cut(f"{lead} {own}", limit)


def distinct_titles(texts: Sequence[str], limit: int = 80) -> list[str]:
    """Titles for problems imported together. Textbook exercises often open with a lead-in that the
    next few share ("Use the following information to answer the next five exercises.", then a
    study's description), so their first sentences are all alike. Each title starts at the first
    sentence that is not part of the longest run of opening sentences the text shares with another."""
    sentences = [tuple(title_sentences(t)) for t in texts]
    common = {s for s, n in Counter(s for each in sentences for s in set(each)).items() if n > 1}
    shared = [0] * len(texts)
    # In sorted order the text sharing the longest opening with a text is one of its neighbours.
    order = sorted(range(len(texts)), key=sentences.__getitem__)
    for a, b in zip(order, order[1:]):
        n = next((k for k, (x, y) in enumerate(zip(sentences[a], sentences[b])) if x != y), min(len(sentences[a]), len(sentences[b])))
        shared[a], shared[b] = max(shared[a], n), max(shared[b], n)
    return [_title_at(s, min(n, len(s) - 1), limit, common) for s, n in zip(sentences, shared)]
