"""Writes to the concept dictionary."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from concepts.models import Concept
from problems.models import Module


class DictionaryError(ValueError):
    pass


@transaction.atomic
def concepts_upsert(*, rows: list[dict[str, Any]]) -> int:
    """Create or update concepts from rows with `slug`, `name`, `module` and `description`.

    Every row is checked before anything is written: an unknown module or an empty slug
    rejects the whole dictionary.
    """
    modules = {m.name: m for m in Module.objects.all()}
    errors = []
    for n, row in enumerate(rows, start=2):  # line 1 is the header
        if not row.get("slug", "").strip():
            errors.append(f"row {n}: empty slug")
        if row.get("module") and row["module"] not in modules:
            errors.append(f"row {n}: unknown module {row['module']!r}")
    if errors:
        raise DictionaryError("; ".join(errors))
    existing = {c.slug: c for c in Concept.objects.all()}
    changed = 0
    for row in rows:
        values = {
            "name": row.get("name", "").strip() or row["slug"],
            "module": modules.get(row.get("module", "")),
            "description": row.get("description", "").strip(),
        }
        concept = existing.get(row["slug"].strip())
        if concept is None:
            Concept.objects.create(slug=row["slug"].strip(), **values)
            changed += 1
        elif any(getattr(concept, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(concept, k, v)
            concept.save()
            changed += 1
    return changed
