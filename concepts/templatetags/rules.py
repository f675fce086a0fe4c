from __future__ import annotations

from django import template

from concepts import extraction

register = template.Library()


@register.filter(name="branch_lines")
def branch_lines(pattern: str | None) -> str:
    """A saved pattern as the editor's box holds it, one branch per line (for the unsaved-changes check)."""
    return extraction.pattern_lines(pattern or "")
