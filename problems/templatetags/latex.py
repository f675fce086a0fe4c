from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from problems.latex_html import latex_inline, latex_to_html

register = template.Library()


# Both functions HTML-escape all input before adding their own tags.
@register.filter(name="latex")
def latex(text: str) -> SafeString:
    return mark_safe(latex_to_html(text or ""))  # noqa: S308


@register.filter(name="latex_inline")
def latex_inline_filter(text: str) -> SafeString:
    return mark_safe(latex_inline(text or ""))  # noqa: S308


@register.filter(name="latex_highlight")
def latex_highlight_filter(text: str, spans: list[tuple[int, int]]) -> SafeString:
    from problems.latex_html import latex_highlight

    return mark_safe(latex_highlight(text or "", list(spans or [])))  # noqa: S308


@register.filter(name="percent")
def percent(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value * 100:.{digits}f}%"
