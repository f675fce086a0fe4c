"""LaTeX problem text to safe HTML for the browser, where KaTeX renders the math. Pure: no Django.

Math stays in its delimiters ($...$, \\[...\\], \\(...\\)) for KaTeX's auto-render; everything is
HTML-escaped first, so problem text can never inject markup. Text-mode constructs that KaTeX does
not handle (tabular, itemize/enumerate, \\textbf, paragraphs) become plain HTML.
"""

from __future__ import annotations

import html
import re

_TABULAR = re.compile(r"\\begin\{tabular\}(\{[^}]*\})?(.*?)\\end\{tabular\}", re.S)
# Authors often wrap a tabular in display math; KaTeX cannot typeset tabular, so drop the wrapper.
_WRAPPED_TABULAR = re.compile(r"(?:\\\[|\$\$)\s*(\\begin\{tabular\}.*?\\end\{tabular\})\s*(?:\\\]|\$\$)", re.S)
_LIST = re.compile(r"\\begin\{(itemize|enumerate)\}(.*?)\\end\{\1\}", re.S)
_RULES = re.compile(r"\\(hline|toprule|midrule|bottomrule|cline\{[^}]*\})")


def _table(match: re.Match[str]) -> str:
    body = _RULES.sub("", match.group(2))
    rows = [r.strip() for r in re.split(r"\\\\", body)]
    out = ['<table class="latex-table">']
    for row in rows:
        if not row:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)&amp;", row)]
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _list(match: re.Match[str]) -> str:
    tag = "ul" if match.group(1) == "itemize" else "ol"
    items = [i.strip() for i in match.group(2).split(r"\item") if i.strip()]
    return f"<{tag}>" + "".join(f"<li>{i}</li>" for i in items) + f"</{tag}>"


def latex_to_html(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = _WRAPPED_TABULAR.sub(lambda m: m.group(1), escaped)
    escaped = _TABULAR.sub(_table, escaped)
    escaped = _LIST.sub(_list, escaped)
    escaped = re.sub(r"\\textbf\{([^{}]*)\}|\{\\bf ([^{}]*)\}", lambda m: f"<b>{m.group(1) or m.group(2)}</b>", escaped)
    escaped = re.sub(r"\\emph\{([^{}]*)\}|\\textit\{([^{}]*)\}", lambda m: f"<i>{m.group(1) or m.group(2)}</i>", escaped)
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", escaped) if p.strip()]
    return "".join(f"<p>{p}</p>" for p in paragraphs)
