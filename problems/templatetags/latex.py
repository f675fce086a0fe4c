from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from problems.latex_html import latex_to_html

register = template.Library()


@register.filter(name="latex")
def latex(text: str) -> SafeString:
    # latex_to_html escapes all input before adding its own tags.
    return mark_safe(latex_to_html(text or ""))  # noqa: S308
