"""A walk over every page for every role (tests/browser/pages.py lists them): at phone width nothing
scrolls sideways; at 1,366 px the navigation holds on one line and marks the current page; each page
has one h1 and a skip link, shows no math as raw TeX, and axe-core finds no serious or critical
accessibility violation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.pages import ROLES, pages_for
from tests.test_security import site  # noqa: F401 (the fixture: the demo course with one of everything)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

AXE_URL = "/static/vendor/axe-core/axe.min.js"  # vendored from npm (static/vendor/axe-core/README)

# The widest elements when a page scrolls sideways, to say what to fix.
OVERFLOW_JS = """() => {
  const root = document.scrollingElement, width = root.clientWidth;
  if (root.scrollWidth <= width) return null;
  const wide = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.right > width + 1 && r.width > 0) {
      const parent = el.parentElement && el.parentElement.getBoundingClientRect();
      if (!parent || parent.right <= width + 1) wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' ' + Math.round(r.right));
    }
  }
  return {scrollWidth: root.scrollWidth, clientWidth: width, widest: wide.slice(0, 4)};
}"""

# Math left as TeX source: a $ or \\( in text KaTeX should have typeset (escaped dollars are .no-math).
RAW_MATH_JS = """() => {
  const raw = [];
  for (const el of document.querySelectorAll('.math')) {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.katex, .no-math, textarea, code, pre, script').forEach(e => e.remove());
    const text = copy.textContent;
    if (/\\$|\\\\\\(|\\\\\\[/.test(text)) raw.push(text.trim().slice(0, 80));
  }
  document.querySelectorAll('.katex-error').forEach(e => raw.push('KaTeX error: ' + e.textContent.slice(0, 60)));
  return raw.slice(0, 3);
}"""

NAV_ROWS_JS = """() => new Set([...document.querySelectorAll('.mainnav > *')]
  .filter(e => e.getClientRects().length).map(e => Math.round(e.getBoundingClientRect().top))).size"""

AXE_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => v.impact + ' ' + v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '));
}"""


def _sign_in(page: Any, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "password-123")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)  # students land on practice, staff on the bank


def test_every_page_for_every_role_fits_a_phone_and_passes_the_accessibility_check(
    site: dict[str, Any], browser: Any, live_server: Any, settings: Any  # noqa: F811
) -> None:
    settings.DEBUG = False  # the demo course needed it on; the site's own error pages show with it off
    found: dict[str, list[str]] = {"sideways scroll at 360 px": [], "navigation wraps at 1366 px": [], "h1": [],
                                   "skip link": [], "raw math": [], "axe": [], "current page": []}
    walked = 0
    for role in ROLES:
        context = browser.new_context(viewport={"width": 360, "height": 740})
        page = context.new_page()
        page.set_default_timeout(15_000)
        if role != "anonymous":
            _sign_in(page, live_server.url, site["users"][role].username)
        for path in pages_for(role, site):
            where = f"{role:10} {path}"
            page.set_viewport_size({"width": 360, "height": 740})
            page.goto(live_server.url + path)
            page.wait_for_load_state("networkidle")
            walked += 1
            overflow = page.evaluate(OVERFLOW_JS)
            if overflow:
                found["sideways scroll at 360 px"].append(f"{where}: {overflow}")
            page.set_viewport_size({"width": 1366, "height": 900})
            if role != "anonymous" and page.evaluate(NAV_ROWS_JS) > 1:
                found["navigation wraps at 1366 px"].append(where)
            h1 = page.locator("h1").count()
            if h1 != 1:
                found["h1"].append(f"{where}: {h1} h1 elements")
            if page.locator("a.skip-link[href='#main']").count() != 1 or page.locator("#main").count() != 1:
                found["skip link"].append(where)
            raw = page.evaluate(RAW_MATH_JS)
            if raw:
                found["raw math"].append(f"{where}: {raw}")
            page.add_script_tag(url=live_server.url + AXE_URL)
            for violation in page.evaluate(AXE_JS):
                found["axe"].append(f"{where}: {violation}")
        if role != "anonymous":
            page.goto(live_server.url + "/problems/")
            if page.locator(".mainnav [aria-current='page']").count() != 1:
                found["current page"].append(f"{role}: /problems/ is not marked as the current page")
        context.close()
    assert walked > 100
    report = "\n".join(f"{kind}:\n  " + "\n  ".join(items) for kind, items in found.items() if items)
    assert not report, report
