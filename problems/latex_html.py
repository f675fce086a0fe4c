"""LaTeX problem text to safe HTML for the browser, where KaTeX renders the math. Pure: no Django.

Math stays in its delimiters ($...$, $$...$$, \\[...\\], \\(...\\)) for KaTeX's auto-render;
everything is HTML-escaped first, so problem text can never inject markup. Text-mode constructs
that KaTeX does not handle (tabular, itemize/enumerate, \\textbf, \\%, ~, paragraphs) become HTML,
and only outside math, where KaTeX would otherwise see them verbatim.
"""

from __future__ import annotations

import html
import re

_TABULAR = re.compile(r"\\begin\{tabular\}(\{[^}]*\})?(.*?)\\end\{tabular\}", re.S)
# Authors often wrap a tabular in display math; KaTeX cannot typeset tabular, so drop the wrapper.
_WRAPPED_TABULAR = re.compile(r"(?:\\\[|\$\$)\s*(\\begin\{tabular\}.*?\\end\{tabular\})\s*(?:\\\]|\$\$)", re.S)
_LIST = re.compile(r"\\begin\{(itemize|enumerate)\}(.*?)\\end\{\1\}", re.S)
_RULES = re.compile(r"\\(hline|toprule|midrule|bottomrule|cline\{[^}]*\})")
_MATH = re.compile(r"(\$\$.*?\$\$|\\\[.*?\\\]|\\\(.*?\\\)|(?<!\\)\$(?:\\.|[^$\\])+\$)", re.S)
_TEXT_MODE = [
    (re.compile(r"\\textbf\{([^{}]*)\}|\{\\bf ([^{}]*)\}"), lambda m: f"<b>{m.group(1) or m.group(2)}</b>"),
    (re.compile(r"\\(?:emph|textit)\{([^{}]*)\}|\{\\(?:em|it) ([^{}]*)\}"), lambda m: f"<i>{m.group(1) or m.group(2)}</i>"),
    (re.compile(r"\\(?:texttt|textrm|text|mbox)\{([^{}]*)\}"), lambda m: m.group(1)),
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
            cells = [_outside_math(c.strip()) for c in re.split(r"(?<!\\)&amp;", row)]
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _list(match: re.Match[str]) -> str:
    tag = "ul" if match.group(1) == "itemize" else "ol"
    items = [_outside_math(i.strip()) for i in match.group(2).split(r"\item") if i.strip()]
    return f"<{tag}>" + "".join(f"<li>{i}</li>" for i in items) + f"</{tag}>"


def _blocks(escaped: str) -> str:
    """Tables and lists become HTML; the text between them gets text-mode replacements."""
    pieces = re.split(r"(\\begin\{tabular\}.*?\\end\{tabular\}|\\begin\{(?:itemize|enumerate)\}.*?\\end\{(?:itemize|enumerate)\})", escaped, flags=re.S)
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            out.append(_outside_math(piece))
        elif piece.startswith("\\begin{tabular}"):
            out.append(_TABULAR.sub(_table, piece))
        else:
            out.append(_LIST.sub(_list, piece))
    return "".join(out)


def latex_to_html(text: str) -> str:
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
    r"|\\begin\{(tabular|itemize|enumerate)\}.*?\\end\{\1\}",
    re.S,
)
# Text-mode markup as plain characters (a title is text, not HTML). `\$` stays: as a bare `$` it would
# open math when the title is shown; latex_inline turns it into a dollar sign KaTeX leaves alone.
_PLAIN_TEXT_MODE = [
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


def title_from_text(text: str, limit: int = 80) -> str:
    """A title from problem text: its first sentence as it reads rendered (tables and lists left out,
    text-mode markup as characters, math kept as math), cut with `title_cut`."""
    plain = _BLOCKS.sub(" ", text)
    plain = re.sub(r"\s+", " ", plain).strip()
    plain = _plain_outside_math(plain)
    spans = _math_spans(plain)
    first = plain
    for m in re.finditer(r"(?<=[.?!])\s", plain):
        if not _inside(m.start(), spans):
            first = plain[: m.start()]
            break
    return title_cut(first, limit)
