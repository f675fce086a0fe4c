"""LaTeX problem text to safe HTML for the browser, where KaTeX renders the math. Pure: no Django.

Math stays in its delimiters ($...$, $$...$$, \\[...\\], \\(...\\)) for KaTeX's auto-render;
everything is HTML-escaped first, so problem text can never inject markup. Text-mode constructs
that KaTeX does not handle (tabular, itemize/enumerate, \\textbf, \\%, ~, paragraphs) become HTML,
and only outside math, where KaTeX would otherwise see them verbatim.
"""

from __future__ import annotations

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
# Layout environments that only place their text (centred, in columns, indented): their text is kept,
# as a paragraph of its own.
_LAYOUT = re.compile(r"\\(?:begin|end)\{(?:center|flushleft|flushright|quote|table|adjustwidth|multicols)\}(?:\{[^{}]*\})*")
_RULES = re.compile(r"\\(hline|toprule|midrule|bottomrule|cline\{[^}]*\})")
# Math: what KaTeX's auto-render typesets (static/js/site.js has the same delimiters), including the
# display environments textbooks write outside $$ (OpenIntro's align*).
_MATH_ENV = r"\\begin\{(?:align|equation|gather)\*?\}.*?\\end\{(?:align|equation|gather)\*?\}"
_MATH = re.compile(rf"(\$\$.*?\$\$|\\\[.*?\\\]|\\\(.*?\\\)|{_MATH_ENV}|(?<!\\)\$(?:\\.|[^$\\])+\$)", re.S)
# A cross-reference into the book the problem came from ("Exercise \ref{ex:coins}"): the page says
# "[link]", as OpenStax's own exports do.
_REFERENCE = re.compile(r"\\(?:ref|eqref|pageref)\s*\{[^{}]*\}")
_SPACING = re.compile(
    r"\\(?:[vh]space\*?\s*\{[^{}]*\}|label\{[^{}]*\}|noindent|indent|smallskip|medskip|bigskip|medbreak|break|newline|hfill|centering)(?![A-Za-z])"
)
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
    # An escaped dollar ("pay \$3") is a dollar sign, in a span KaTeX's auto-render skips (no-math).
    (re.compile(r"\\\$"), lambda m: '<span class="no-math">$</span>'),
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
_EQNARRAY = re.compile(r"\\begin\{eqnarray\*?\}(.*?)\\end\{eqnarray\*?\}", re.S)


def latex_to_html(text: str) -> str:
    text = _EQNARRAY.sub(lambda m: f"$$\\begin{{array}}{{rcl}}{m.group(1)}\\end{{array}}$$", _LAYOUT.sub("\n\n", text))
    escaped = _WRAPPED_TABULAR.sub(lambda m: m.group(1), html.escape(text, quote=False))
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", _blocks(escaped)) if p.strip()]
    return "".join(f"<p>{p}</p>" for p in paragraphs)


def latex_inline(text: str) -> str:
    """One line of LaTeX (a title): escaped, text-mode commands replaced, math left for KaTeX."""
    return _outside_math(html.escape(text, quote=False))


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


def latex_highlight(text: str, spans: list[tuple[int, int]]) -> str:
    """Problem text with matched character spans in <mark>, for the rule preview.

    Line breaks are kept; math stays in its delimiters for KaTeX. Text-mode conversions are
    skipped on purpose (the TA sees the source the regex ran on), except two that would otherwise
    read as noise: ``quotes'' become curly quotes, and a tabular is shown as its source in a box
    (class tex-source) that KaTeX leaves alone.
    """
    out, pos = [], 0
    for start, end in _expand_to_math(spans, text):
        out.append(_source_piece(text[pos:start]))
        out.append(f"<mark>{_source_piece(text[start:end])}</mark>")
        pos = end
    out.append(_source_piece(text[pos:]))
    return "".join(out).replace("\n", "<br>")


def _source_piece(piece: str) -> str:
    """Escaped source; tables boxed, quotes curly outside math. Spans never cut a table or formula."""
    out, pos = [], 0
    for m in _SOURCE_TABLE.finditer(piece):
        out.append(_quotes_outside_math(html.escape(piece[pos : m.start()], quote=False)))
        out.append(f'<span class="no-math tex-source">{html.escape(m.group(0), quote=False)}</span>')
        pos = m.end()
    out.append(_quotes_outside_math(html.escape(piece[pos:], quote=False)))
    return "".join(out)


def _quotes_outside_math(escaped: str) -> str:
    parts = _MATH.split(escaped)
    return "".join(
        part if i % 2 else _QUOTES.sub(lambda m: "\u201c" if m.group(0) == "``" else "\u201d", part) for i, part in enumerate(parts)
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
    (re.compile(r"\s*\\footnote\s*\{[^{}]*\}"), lambda m: ""),
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
# An opening delimiter left without its closing one (outside every complete math segment).
_OPEN_MATH = re.compile(r"(?<!\\)\$|\\\(|\\\[")


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
    return next(((s, e) for s, e in spans if s < pos < e), None)


def title_cut(title: str, limit: int | None = None) -> str:
    """`title` shortened to about `limit` characters at a word boundary, never inside math.

    A formula the limit falls in is kept whole if the title would otherwise be empty, or else cut
    before. An opening delimiter with no closing one (a title cut elsewhere, carelessly) is cut off
    too, so KaTeX never shows half a formula as TeX source. "…" marks a cut."""
    spans = _math_spans(title)
    unclosed = next((m.start() for m in _OPEN_MATH.finditer(title) if not any(s <= m.start() < e for s, e in spans)), None)
    end = len(title) if unclosed is None else unclosed
    cut = unclosed is not None
    if limit is not None and end > limit:
        end, cut = limit, True
        around = _inside(end, spans)
        if around:
            end = around[0] if around[0] > 0 else around[1]
        elif end < len(title) and not title[end].isspace():
            # Back to the last space that is not inside a formula (a word is never split).
            spaces = [i for i in range(end, 0, -1) if title[i - 1].isspace() and not _inside(i - 1, spans)]
            if spaces:
                end = spaces[0]
    if not cut:
        return title
    head = title[:end].rstrip(" ,;:—–-(")
    return head + "…" if head else "…"


# A full stop after these does not end a sentence ("Mr. and Mrs. Lopez have four children.", "U.S. adults").
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|cf|Fig|approx|(?:[A-Z]\.)+[A-Z])\.$")
_LIST_MARKUP = re.compile(rf"\\(?:begin|end)\{{(?:{_LIST_NAMES})\}}(?:\[[^\]]*\])?|\\item\b(?:\[[^\]]*\])?")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# An own sentence shorter than this ("statistic", "Find the mean.") says little alone: the title puts
# the sentence before it in front.
SHORT_TITLE = 25
# Sentences read for a title: exercises share a lead-in of a few sentences (the longest in ../shared/data: 18, OpenStax).
MOST_SENTENCES = 40


def title_sentences(text: str, most: int = MOST_SENTENCES) -> list[str]:
    """The first `most` sentences of `text` as a title reads them: rendered (tables and lists left
    out, text-mode markup as characters, math kept as math), a blank line ending a sentence as it
    ends a paragraph. A text that is nothing but a list (`\\begin{enumerate}\\item ...`) is read
    from its items. Linear in the text's length, whatever it holds (an import reads 100,000 texts)."""
    text = _LAYOUT.sub("\n\n", text)
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
    lead = title_cut(sentences[at - 1], max(limit - len(own) - 1, SHORT_TITLE))
    return title_cut(f"{lead} {own}", limit + 2)  # + 2: the lead's "…" and a space


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
