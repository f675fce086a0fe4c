"""A long formula scrolls inside its own box on a phone, never the page: every page a student or a TA
opens (tests/browser/pages.py) with every problem carrying a long inline formula, a long displayed one
and a formula in its title, and the rule editor's live preview and drill-down listing them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.pages import pages_for
from tests.browser.test_pages import OVERFLOW_JS, _sign_in
from tests.test_security import site  # noqa: F401 (the fixture: the demo course with one of everything)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# No top-level relation or operator inside \left( \right): KaTeX cannot break it, about 600 px wide.
LONG = "\\left(" + " + ".join(f"\\binom{{30}}{{{k}}}" for k in range(13)) + " + \\cdots\\right)"
TITLE_MATH = "$\\left(x_1 + x_2 + x_3 + x_4 + x_5 + x_6 + x_7 + x_8 + x_9\\right)^2$"  # 68 characters


@pytest.fixture
def long_math(site: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    from django.db.models import F, Value
    from django.db.models.functions import Concat, Left

    from problems.models import Problem

    Problem.objects.update(
        text=Concat(F("text"), Value(f" Inline ${LONG} = 2^{{30}}$ and displayed \\[{LONG}\\]")),
        solution=Concat(F("solution"), Value(f" So ${LONG}$.")),
        title=Concat(Value(TITLE_MATH + " "), Left(F("title"), 200 - len(TITLE_MATH) - 1)),
    )
    return site


def test_a_long_formula_never_makes_a_page_scroll_sideways_on_a_phone(
    long_math: dict[str, Any], browser: Any, live_server: Any, settings: Any
) -> None:
    settings.DEBUG = False
    site = long_math
    wide: list[str] = []
    walked = 0
    for role in ("student", "ta"):
        context = browser.new_context(viewport={"width": 360, "height": 740})
        page = context.new_page()
        page.set_default_timeout(15_000)
        _sign_in(page, live_server.url, site["users"][role].username)

        def check(where: str) -> None:
            nonlocal walked
            walked += 1
            assert page.evaluate("document.documentElement.clientWidth") == 360
            overflow = page.evaluate(OVERFLOW_JS)
            if overflow or page.evaluate("document.documentElement.scrollWidth > window.innerWidth"):
                wide.append(f"{role:8} {where}: {overflow}")

        for path in pages_for(role, site):
            page.goto(live_server.url + path)
            page.wait_for_load_state("networkidle")
            check(path)
        if role == "student":
            # The formula is all there, in a box of its own that scrolls sideways.
            page.goto(f"{live_server.url}/problems/{site['pk']['problems/']}/")
            assert page.evaluate("""() => [...document.querySelectorAll('#problem-text .katex-base')].some(
              b => b.scrollWidth > b.clientWidth + 100 && getComputedStyle(b).overflowX === 'auto')""")
        if role == "ta":
            # The live preview lists every problem the typed rule matches, with its text.
            report = site["pk"]["concepts/reports/"]
            for path in (f"/concepts/{site['slug']}/rule/", f"/concepts/reports/{report}/{site['slug']}/fp/"):
                page.goto(live_server.url + path)
                page.fill("#id_pattern", "\\\\binom")
                page.wait_for_selector("#matched-count")
                page.wait_for_load_state("networkidle")
                check(path + " (previewing \\\\binom)")
        context.close()
    assert walked > 40
    assert not wide, "\n".join(wide)
