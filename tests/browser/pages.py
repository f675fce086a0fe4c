"""Every page of the site, for every role, in one list: the phone-width and accessibility walks
(tests/browser/test_pages.py) visit what is here.

The routes come from the security matrix (tests/test_security.py MATRIX), which must list every URL
of the site (test_the_matrix_lists_every_url), so a new page is walked as soon as it is added there.
Pages to leave out, and pages that need a query string to show something (a chart, a filter), are
listed below."""

from __future__ import annotations

from typing import Any

from tests.test_security import MATRIX, POST_ONLY, RANK, _path

# Routes a browser does not show as a page of ours.
NOT_PAGES = {
    "problems/export/": "a file download",
    "admin/login/": "the Django admin's own page",
}
# More addresses worth walking: a route in another state, e.g. a chart's page with its query
# ({slug} is a concept with a rule and a report). (least role, path)
EXTRA: list[tuple[str, str]] = [
    ("student", "/problems/?q=probability&match=any"),
    ("ta", "/practice/class/?by=concepts"),
    ("ta", "/lab/concepts/?concept={slug}"),  # the continuity map with a concept chosen
    ("anonymous", "/no-such-page/"),  # the site's 404 page
]
ROLES = ["anonymous", "student", "ta", "head_ta", "instructor"]


def pages_for(role: str, site: dict[str, Any]) -> list[str]:
    """The paths `role` may open, each once, in a stable order."""
    paths = []
    for route, least in sorted(MATRIX.items()):
        if least == POST_ONLY or route.startswith("api/") or route in NOT_PAGES:
            continue
        if RANK[role] >= RANK[least] and not (role != "anonymous" and route == "login/"):
            paths.append(_path(route, site))
    paths += [path.format(slug=site["slug"]) for least, path in EXTRA if RANK[role] >= RANK[least]]
    return list(dict.fromkeys(paths))
