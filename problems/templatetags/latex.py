from __future__ import annotations

import functools

from django import template
from django.utils.safestring import SafeString, mark_safe

from problems.latex_html import answer_html, latex_inline, latex_to_html

register = template.Library()


# Both functions HTML-escape all input before adding their own tags.
@register.filter(name="latex")
def latex(text: str) -> SafeString:
    return mark_safe(latex_to_html(text or ""))  # noqa: S308


@register.filter(name="latex_inline")
def latex_inline_filter(text: str) -> SafeString:
    return mark_safe(latex_inline(text or ""))  # noqa: S308


@register.filter(name="latex_answer")
def latex_answer(answer: str) -> SafeString:
    return mark_safe(answer_html(answer or ""))  # noqa: S308


@register.filter(name="latex_title")
def latex_title_filter(title: str, limit: int | None = None) -> SafeString:
    """A problem's title wherever a problem is named: cut (if `limit`) never inside math; one with
    math comes in a span KaTeX renders (class math), so the page needs no math container of its own."""
    from problems.latex_html import title_cut

    html = latex_inline(title_cut(title or "", limit))
    if "$" in html or "\\(" in html or "\\[" in html:
        html = f'<span class="math">{html}</span>'
    return mark_safe(html)  # noqa: S308


@register.filter(name="latex_highlight")
def latex_highlight_filter(text: str, spans: list[tuple[int, int]]) -> SafeString:
    return mark_safe(_highlighted(text or "", tuple(map(tuple, spans or ()))))  # noqa: S308


@functools.lru_cache(maxsize=1024)
def _highlighted(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    """Kept: the rule preview shows up to 90 problems a keystroke, most of them the same problems with
    the same marks as the keystroke before (a pure function of its arguments)."""
    from problems.latex_html import latex_highlight

    return latex_highlight(text, list(spans))


@register.filter(name="percent")
def percent(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value * 100:.{digits}f}%"
