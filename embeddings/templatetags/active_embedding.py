"""`{% active_embedding %}`: one line naming the active embedding run and its triplet accuracy, on every
page whose content comes from the embedding (practice, progress, similar problems, the lab)."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.inclusion_tag("embeddings/_active_run.html", takes_context=True)
def active_embedding(context: Any) -> dict[str, Any]:
    from embeddings.selectors import active_embedding_summary

    request = context.get("request")
    staff = bool(request is not None and request.user.has_perm("embeddings.view_embeddingrun"))
    return {"active": active_embedding_summary(), "staff": staff}
