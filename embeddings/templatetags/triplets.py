from __future__ import annotations

from django import template

register = template.Library()

# Votes in the words the triplet pages use: A is the anchor, B the proposed closer problem, C the other.
VOTE_LABELS = {"positive": "B is closer", "negative": "C is closer", "cant_tell": "can't tell"}


@register.filter(name="vote_label")
def vote_label(choice: str) -> str:
    return VOTE_LABELS.get(choice, choice)
