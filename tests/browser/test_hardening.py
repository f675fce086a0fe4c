"""Issue 17 in Chromium: the pages work under the Content-Security-Policy (htmx swaps, KaTeX, the judge
keys, the propose page's module picker, Swagger UI, the admin), and math a student typed cannot draw a
giant box on a staff page."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

# Chromium reports every blocked script, style, eval or connection as a `securitypolicyviolation` event.
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sourceFile || "") + ":" + e.lineNumber);
});
"""


def violations(page: Any) -> list[str]:
    return page.evaluate("window.__csp || []")


def test_the_pages_work_under_the_content_security_policy(
    page: Any, live_server: Any, login: Any, alice: Any, bob: Any, problem_factory: Any, concept_factory: Any
) -> None:
    from embeddings.models import TripletVote
    from embeddings.services import triplet_create

    page.add_init_script(RECORD_VIOLATIONS)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)
    concept_factory("nchoosek")
    a = problem_factory("Choose $k$ of $n$: $\\binom{n}{k}$ ways.", title="Committee $\\binom{10}{3}$")
    b = problem_factory("Choose 2 of 8 people: $\\binom{8}{2}$.", title="Pairs")
    c = problem_factory("Arrange 5 books: $5!$.", title="Books")
    triplet = triplet_create(anchor=a, positive=b, negative=c, user=bob)
    login("alice")
    assert "script-src 'self'" in page.goto(f"{live_server.url}/problems/").headers["content-security-policy"]

    # htmx: the list updates in place as one types; KaTeX renders the titles.
    page.fill("input[name=q]", "Pairs")
    page.wait_for_selector("#problem-results >> text=Books", state="detached")  # (wait_for_function would need eval)
    assert page.locator("#problem-results tbody tr").count() == 1
    page.goto(f"{live_server.url}/problems/{a.pk}/")
    page.wait_for_selector("#problem-text .katex")
    # The rule editor's live preview (an htmx POST with the CSRF header from <body hx-headers>).
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.fill("#id_pattern", "choose")
    page.wait_for_selector("#rule-preview >> text=Committee")
    # The propose page's module picker submits its form on change (was an inline onchange).
    page.goto(f"{live_server.url}/triplets/new/")
    page.select_option("select[name=module]", str(a.module_id))
    page.wait_for_selector("#candidates >> text=Books")
    # The judge page's keys (was an inline script).
    page.goto(f"{live_server.url}/triplets/judge/")
    page.wait_for_selector("#judge-form")
    page.keyboard.press("0")
    page.wait_for_selector("text=saved")
    assert TripletVote.objects.get(triplet=triplet, voter=alice).choice == "cant_tell"
    # Swagger UI from our static files, and the Django admin's login.
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info")
    page.goto(f"{live_server.url}/admin/login/")
    page.wait_for_selector("#login-form")
    assert violations(page) == [] and console == []


def test_a_students_math_cannot_draw_a_giant_box_on_a_staff_page(
    page: Any, live_server: Any, login: Any, alice: Any, sam: Any, course: dict[str, Any]
) -> None:
    from practice.models import Attempt

    Attempt.objects.create(
        student=sam, problem=course["count1"], verdict="incorrect", outcome=0.0, answer="7",
        recommended_because="$\\rule{3000px}{3000px}$ $\\rule{3000px}{3000px}$ $\\Huge\\rule{90em}{90em}$",
    )
    login("alice")
    page.goto(f"{live_server.url}/practice/class/students/{sam.pk}/")
    cell = page.wait_for_selector("#attempts .user-text")
    page.wait_for_selector("#attempts .user-text .katex")  # it is still rendered as math
    box = cell.bounding_box()
    assert box["width"] < 600 and box["height"] < 200, box
    row = page.query_selector("#attempts tbody tr").bounding_box()
    assert row["height"] < 200, row
