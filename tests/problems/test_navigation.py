"""The header's navigation (problems/navigation.py): grouped by role, the current page marked."""

from __future__ import annotations

import re
from typing import Any

import pytest

from problems.navigation import nav_groups


def _shape(groups: list[Any]) -> list[tuple[str, list[str]]]:
    return [(g.label, [i.label for i in g.items]) for g in groups]


def test_each_role_gets_its_groups(sam: Any, alice: Any, ivan: Any) -> None:
    assert _shape(nav_groups(sam, "/practice/")) == [("Practice", ["Practice", "My progress"]), ("Problems", ["Problems"])]
    ta = _shape(nav_groups(alice, "/problems/"))
    assert ta == [
        ("Practice", ["Practice", "My progress", "Class progress"]),
        ("Problems", ["Problems", "New problem", "Import"]),
        ("Concepts", ["Concepts & rules", "Extractor reports", "Neural extractor", "Label"]),
        ("Embeddings", ["Triplets", "Embedding lab"]),
    ]
    assert "Admin" not in [label for label, _ in _shape(nav_groups(ivan, "/problems/"))]
    ivan.is_staff = True  # the Django admin is for staff accounts
    assert _shape(nav_groups(ivan, "/problems/"))[-1] == ("Admin", ["Admin"])


@pytest.mark.parametrize(
    "path, current",
    [
        ("/problems/", "Problems"),
        ("/problems/12/", "Problems"),
        ("/problems/new/", "New problem"),
        ("/concepts/reports/3/", "Extractor reports"),
        ("/concepts/analysis/", "Concepts & rules"),
        ("/practice/class/students/4/", "Class progress"),
        ("/practice/progress/", "My progress"),
        ("/lab/runs/2/", "Embedding lab"),
    ],
)
def test_the_longest_matching_item_is_the_current_page(alice: Any, path: str, current: str) -> None:
    marked = [i.label for g in nav_groups(alice, path) for i in g.items if i.current]
    assert marked == [current]


def test_the_header_marks_the_current_page_and_its_group(client: Any, alice: Any) -> None:
    client.force_login(alice)
    page = client.get("/concepts/reports/").content.decode()
    assert re.findall(r'<a href="([^"]+)" aria-current="page">([^<]+)</a>', page) == [("/concepts/reports/", "Extractor reports")]
    assert '<details class="navgroup current">\n        <summary>Concepts</summary>' in page
    assert 'class="skip-link" href="#main"' in page and '<main class="container" id="main"' in page
    # Groups of one or two links stay in the bar: no menu to open for them.
    assert '<summary>Embeddings</summary>' not in page and '>Embedding lab</a>' in page
    # htmx fragments carry no header.
    fragment = client.get("/problems/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="problem-results").content.decode()
    assert "mainnav" not in fragment
