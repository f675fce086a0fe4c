from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def three_problems(problem_factory: Any, concept_factory: Any) -> None:
    """Two problems labelled nchoosek (one with \\binom, one in words) and one labelled otherwise."""
    concept_factory("nchoosek")
    problem_factory("Choose a committee: $\\binom{10}{3}$ ways.", title="Committee", labels=["nchoosek"])
    problem_factory("In how many ways can we choose 2 of 5?", title="Words", labels=["nchoosek"])
    problem_factory("Roll a die twice.", title="Dice", labels=["permutations"])


def test_a_ta_types_a_pattern_and_sees_matches_and_counts_update_live(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    three_problems(problem_factory, concept_factory)
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.evaluate("window.__loaded = true")  # survives only if the page is never reloaded

    page.fill("#id_pattern", "\\\\binom")
    page.wait_for_selector("#matched-count")
    assert page.locator("#matched-count").inner_text() == "1"
    assert "TP 1" in page.locator("#preview-counts").inner_text()
    # The match inside math is highlighted and KaTeX renders it inside the mark.
    page.wait_for_selector("#rule-preview mark .katex")

    page.fill("#id_pattern", "\\\\binom|\\bchoose\\b")
    page.wait_for_selector("#matched-count:text-is('2')")  # a selector: the CSP refuses wait_for_function's eval
    assert "FN 0" in page.locator("#preview-counts").inner_text()
    assert page.locator("#rule-preview mark").count() >= 2

    page.fill("#id_pattern", "(unclosed")
    page.wait_for_selector("#preview-error")
    assert "missing ), unterminated subpattern" in page.locator("#preview-error").inner_text()

    # One branch per line: the lines are previewed as one pattern, and a bad line is named.
    page.fill("#id_pattern", "\\\\binom\n\\bchoose\\b")
    page.wait_for_selector("#matched-count:text-is('2')")
    # Each line's share: what it matches, right and wrong, and what only it finds.
    # (text_content: the table is folded while no branch is more often wrong than right)
    rows = page.locator("#preview-branches tbody tr")
    assert rows.count() == 2 and rows.nth(1).locator("td").nth(1).text_content() == "\\bchoose\\b"
    assert [rows.nth(1).locator("td").nth(k).text_content() for k in (2, 3, 4, 5)] == ["2", "2", "0", "1"]
    page.fill("#id_pattern", "\\\\binom\n(unclosed")
    page.wait_for_selector("#rule-preview .errorlist:has-text('line 2, column 1: missing ), unterminated subpattern')")
    assert page.evaluate("window.__loaded") is True


def test_the_pattern_box_counts_its_characters_as_you_type_and_warns_near_the_limit(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    concept_factory("nchoosek")
    problem_factory("Choose 2 of 5.", title="Words", labels=["nchoosek"])
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    counter = page.locator("#rule-form .pattern-length")
    assert counter.inner_text() == "0 of 4,000 characters"
    page.fill("#id_pattern", "\\bchoose\\b")
    page.wait_for_selector("#rule-form .pattern-length-count:text-is('10')")
    assert "near the limit" not in counter.inner_text() and "muted" in (counter.get_attribute("class") or "")
    # A branch per line: each line break counts as the `|` it stands for.
    long_lines = "\n".join(f"\\bword{i}\\b" for i in range(400))[:3850]
    page.fill("#id_pattern", long_lines)
    page.wait_for_selector("#rule-form .pattern-length-count:text-is('3850')")
    assert "near the limit" in counter.inner_text() and "bad" in (counter.get_attribute("class") or "")
    page.fill("#id_pattern", "\\bchoose\\b")  # shortened again: the warning goes
    page.wait_for_selector("#rule-form .pattern-length-count:text-is('10')")
    assert "near the limit" not in counter.inner_text()


@pytest.fixture
def binom_in_working(problem_factory: Any, concept_factory: Any) -> None:
    """nchoosek asked for in one statement; in another problem `\\binom` is only a solution's working."""
    concept_factory("nchoosek")
    concept_factory("counting-principle")
    problem_factory("Choose a committee: $\\binom{10}{3}$ ways.", title="Asked", labels=["nchoosek"])
    problem_factory(
        "A code is 2 letters then 3 digits. How many codes?", title="Working", labels=["counting-principle"],
        solution="$26^2 \\cdot 10^3$, not $\\binom{26}{2}$: order matters.",
    )


def test_typing_in_the_statement_only_box_previews_live_and_leaving_unsaved_warns(
    page: Any, live_server: Any, login: Any, alice: Any, binom_in_working: None, dismissed_dialogs: list[str]
) -> None:
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.fill("#id_pattern", "\\\\binom")
    page.wait_for_selector("#matched-count:text-is('2')")  # the solution's working too
    assert "FP 1" in page.locator("#preview-counts").inner_text()
    # The branch moved to the second box: typing there previews it, in the statements alone.
    page.fill("#id_pattern", "")
    page.fill("#id_statement_pattern", "\\\\binom")
    page.wait_for_selector("#matched-count:text-is('1')")
    assert "FP 0" in page.locator("#preview-counts").inner_text()
    page.fill("#id_statement_pattern", "\\\\binom\n[x")
    page.wait_for_selector("#rule-preview .errorlist:has-text('In the statement-only box')")
    page.fill("#id_statement_pattern", "\\\\binom")
    page.wait_for_selector("#matched-count:text-is('1')")
    # Unsaved in the second box alone: leaving asks first.
    dialogs = dismissed_dialogs
    page.click("text=← Concepts", no_wait_after=True)
    page.wait_for_timeout(300)
    assert dialogs == ["beforeunload"] and page.url.endswith("/concepts/nchoosek/rule/")


def test_moving_a_line_that_misfires_on_solutions_to_the_statement_box_in_one_click(
    page: Any, live_server: Any, login: Any, alice: Any, binom_in_working: None
) -> None:
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.fill("#id_pattern", "\\bchoose\\b\n\\\\binom")
    page.wait_for_selector("#branches-in-solution")  # the table opens on a line that misfires on solutions
    assert "FP 1" in page.locator("#preview-counts").inner_text()
    page.click("#move-line-2")
    page.wait_for_selector("#fp-count:text-is('FP 0')")
    assert page.input_value("#id_pattern") == "\\bchoose\\b" and page.input_value("#id_statement_pattern") == "\\\\binom"
    assert page.url.endswith("/concepts/nchoosek/rule/")  # moved in the page, not by following the link
    assert page.locator("#branch-line-s1").count() == 1


def test_typing_while_a_preview_is_in_flight_logs_no_error_and_shows_only_the_last_text(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    concept_factory("nchoosek")
    problem_factory("Choose a committee: $\\binom{10}{3}$ ways.", title="Committee", labels=["nchoosek"])
    problem_factory("In how many ways can we choose 2 of 5?", title="Words", labels=["nchoosek"])
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    # The first preview's answer is held back, so the next one is asked for while it is in flight.
    held: list[Any] = []
    page.route("**/concepts/rules/preview/", lambda route: held.append(route) if not held else route.continue_())
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    # Every count the preview shows, in order (the preview is replaced whole on each answer).
    page.evaluate("""() => {
      window.__shown = [];
      new MutationObserver(() => {
        const count = document.querySelector('#matched-count');
        if (count) window.__shown.push(count.textContent);
      }).observe(document.querySelector('#rule-preview').parentNode, {childList: true});
    }""")

    page.fill("#id_pattern", "\\\\binom")  # matches 1
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the first preview was never asked for"
    page.locator("#id_pattern").press_sequentially("|\\bchoose\\b", delay=20)  # matches 2
    page.wait_for_timeout(800)  # past the 300 ms pause: the next preview is due while the first is held
    try:
        held[0].continue_()
    except Exception:  # noqa: BLE001 (aborted by the page already: nothing to answer)
        pass
    page.wait_for_selector("#matched-count:text-is('2')")
    page.wait_for_load_state("networkidle")
    assert page.input_value("#id_pattern") == "\\\\binom|\\bchoose\\b"
    assert page.locator("#matched-count").inner_text() == "2"
    assert page.evaluate("window.__shown") == ["2"]  # the answer for the older text was never shown
    assert errors == []


def test_the_live_preview_says_its_counts_and_errors_to_a_screen_reader(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    """The preview panel was an aria-live region that htmx replaced whole on every keystroke: a new
    live region is not announced, so a screen-reader user typing a pattern heard neither the counts
    nor "Invalid pattern". Its summary now goes to the page's live region, which stays in place."""
    three_problems(problem_factory, concept_factory)
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")

    page.fill("#id_pattern", "\\\\binom")
    page.wait_for_selector("#matched-count:text-is('1')")
    page.wait_for_selector("[role=status]#live-status:text-is('1 of 3 problems match; FP 0, FN 1')", state="attached")
    page.fill("#id_pattern", "(unclosed")
    page.wait_for_selector("#live-status:has-text('Invalid pattern: missing ), unterminated subpattern')", state="attached")
    # The panel itself is no live region: swapped whole, it would be silent or read out in full.
    assert page.locator("#rule-preview[aria-live]").count() == 0
