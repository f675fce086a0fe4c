"""The site's navigation, grouped by what each role does, with the current page marked.

A context processor, so every page's header is built the same way: the groups a user's permissions
leave, each item with its URL, and the one item whose URL is the longest prefix of the request's path
marked current (aria-current="page" in base.html)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

# (group, [(url name, label, permission or None for any signed-in user)])
NAVIGATION: list[tuple[str, list[tuple[str, str, str | None]]]] = [
    ("Practice", [
        ("practice:practice", "Practice", None),
        ("practice:my-progress", "My progress", None),
        ("practice:practice-class", "Class progress", "practice.view_attempt"),
    ]),
    ("Problems", [
        ("problems:list", "Problems", None),
        ("problems:create", "New problem", "problems.add_problem"),
        ("problems:import", "Import", "problems.import_problem"),
    ]),
    ("Concepts", [
        ("concepts:list", "Concepts & rules", "concepts.view_conceptrule"),
        ("concepts:reports", "Extractor reports", "concepts.view_extractorreport"),
        ("concepts:neural-list", "Neural extractor", "concepts.view_neuralexperiment"),
        ("concepts:label-home", "Label", "concepts.add_labelset"),
    ]),
    ("Embeddings", [
        ("embeddings:triplet-home", "Triplets", "embeddings.view_similaritytriplet"),
        ("embeddings:lab", "Embedding lab", "embeddings.view_embeddingrun"),
    ]),
]


# Element ids some links carry (pages and tests point at them).
DOM_IDS = {"practice:my-progress": "nav-my-progress"}


@dataclass
class NavItem:
    label: str
    url: str
    current: bool = False
    dom_id: str = ""


@dataclass
class NavGroup:
    label: str
    items: list[NavItem] = field(default_factory=list)

    @property
    def current(self) -> bool:
        return any(item.current for item in self.items)

    @property
    def folded(self) -> bool:
        """Three links or more fold into a menu; one or two stay in the bar."""
        return len(self.items) >= 3


def nav_groups(user: Any, path: str) -> list[NavGroup]:
    groups = []
    for label, entries in NAVIGATION:
        group = NavGroup(label, [
            NavItem(text, reverse(name), dom_id=DOM_IDS.get(name, "")) for name, text, perm in entries if perm is None or user.has_perm(perm)
        ])
        if group.items:
            groups.append(group)
    if user.is_staff:
        groups.append(NavGroup("Admin", [NavItem("Admin", reverse("admin:index"))]))
    items = [item for group in groups for item in group.items if path.startswith(item.url)]
    if items:
        max(items, key=lambda item: len(item.url)).current = True
    return groups


def navigation(request: Any) -> dict[str, Any]:
    user = getattr(request, "user", None)
    htmx = getattr(request, "htmx", None)
    if user is None or not user.is_authenticated or (htmx and not htmx.history_restore_request):
        return {"nav_groups": []}  # fragments have no header
    return {"nav_groups": nav_groups(user, request.path)}
