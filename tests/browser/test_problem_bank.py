from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_ta_logs_in_searches_opens_a_problem_and_sees_rendered_math(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    problem_factory("Choose a committee of 3 from 10 people: $\\binom{10}{3}$ ways.", title="Committee", labels=["nchoosek"])
    problem_factory("Roll two dice and find $P(X+Y=7)$.", title="Dice sum", module="events and axioms")
    login("alice")

    assert page.locator("#problem-results .problem-link").count() == 2
    page.fill("#id_q", "committee")
    # The list updates in place (htmx, debounced) without a page load; the URL follows the search.
    page.wait_for_selector("#problem-results .problem-link:text-is('Dice sum')", state="detached")  # the CSP refuses wait_for_function's eval
    assert "q=committee" in page.url
    assert page.locator("#problem-results .problem-link").inner_text() == "Committee"

    page.click("text=Committee")
    page.wait_for_selector("#problem-text .katex")
    assert page.locator("#problem-text .katex").count() == 1
    # Typeset by KaTeX: the TeX source survives only in the MathML annotation, no raw $ is left.
    assert page.locator("#problem-text .katex-mathml annotation").text_content() == "\\binom{10}{3}"
    assert "$" not in page.locator("#problem-text").inner_text()
    assert "nchoosek" in page.content()


def test_math_renders_again_after_an_htmx_swap(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    for i in range(30):
        problem_factory(f"Problem {i}: find $\\frac{{{i}}}{{2}}$.", title=f"Fraction $\\frac{{{i}}}{{2}}$ {i:02d}")
    login("alice")
    page.wait_for_selector("#problem-results .katex")
    page.click("text=Next →")
    page.wait_for_url("**page=2**")
    page.wait_for_selector("#problem-results .katex")
    assert page.locator("#problem-results .katex").count() == 5
    assert page.locator("#problem-results").count() == 1  # the fragment replaces itself, never nests



def test_the_filters_trigger_parses_and_next_after_a_search_shows_the_next_page(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    """htmx read `from:#problem-filters select` only to the first space: five syntax errors on every
    load, and the whole form fired on any change (the search box losing focus), so "Next →" right
    after typing sent two requests and the list could stay on page 1 under a page-2 address."""
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    for i in range(30):
        problem_factory(f"Toss a coin {i} times.", title=f"Coin {i:02d}")
    login("alice")
    page.wait_for_selector("#problem-results .problem-link")
    page.fill("#id_q", "coin")
    page.wait_for_url("**q=coin**")
    page.click("text=Next →")  # the search box loses focus: a change event, which must not send the form
    page.wait_for_url("**page=2**")
    page.wait_for_selector("#problem-results :text('Page 2 of')")
    page.wait_for_timeout(600)  # past the debounce: a second request, if any, would have landed by now
    assert "Page 2 of" in page.locator("#problem-results").inner_text() and "page=2" in page.url
    assert not [e for e in errors if "htmx" in e], errors

# Real textbook markup (../shared/data): OpenIntro's parts and align*, a spanning table header, and
# Grinstead & Snell's eqnarray*, \emx and \ref, which pages showed as LaTeX source before stop 32.
TEXTBOOK = (
    "\\begin{center}\\begin{tabular}{lcc} & \\multicolumn{2}{c}{Pain free} \\\\ Group & Yes & No \\end{tabular}\\end{center}\n"
    "An \\emx {event} from Exercise \\ref{ex:coins}, with\n\\begin{align*} P(A) &= 0.4 \\\\ P(B) &= 0.5 \\end{align*}\n"
    "and \\begin{eqnarray*} s & = & (5, 1)\\ , \\\\ r & = & (2, 1)\\ . \\end{eqnarray*}\n\n"
    "\\begin{parts}\n\\item What percent were pain free?\n\\item Which group did better?\n\\end{parts}"
)


def typeset_problem_text(page: Any, live_server: Any, login: Any, problem: Any) -> Any:
    """The problem's text on its page, as alice sees it once KaTeX has typeset its display math, which
    has no KaTeX error box."""
    login("alice")
    page.goto(f"{live_server.url}/problems/{problem.pk}/")
    page.wait_for_selector("#problem-text .katex-display")
    text = page.locator("#problem-text")
    assert text.locator(".katex-error").count() == 0
    return text


def test_textbook_markup_is_typeset_not_shown_as_source(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    text = typeset_problem_text(page, live_server, login, problem_factory(TEXTBOOK, title="Migraine and acupuncture"))
    assert text.locator(".katex-display").count() == 2  # align* and the eqnarray*, both displayed
    shown = text.inner_text()
    assert "\\" not in shown.replace("\\ ", "")  # no \command is left to read, outside KaTeX's own output
    assert "Exercise [link]" in shown
    assert text.locator("td[colspan='2']").inner_text() == "Pain free"
    parts = text.locator("ol.parts > li")
    assert parts.count() == 2
    assert parts.first.evaluate("li => getComputedStyle(li, '::before').content") == '"(" counter(part, lower-alpha) ") "'


def test_an_answer_written_as_math_mode_latex_is_typeset(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    """MATH's answers are the inside of a \\boxed{}, with no $: the page showed `\\frac{1}{2}` as source."""
    problem = problem_factory(
        "What is the probability that flipping a fair coin three times produces fewer than two heads?",
        answer="\\frac{1}{2}",
    )
    login("alice")
    page.goto(f"{live_server.url}/problems/{problem.pk}/")
    page.wait_for_selector("p:has(> strong:text-is('Answer:')) .katex")
    answer = page.locator("p:has(> strong:text-is('Answer:'))")
    assert answer.locator(".katex-mathml annotation").text_content() == "\\frac{1}{2}"
    assert "\\" not in answer.inner_text()


# Grinstead & Snell writes its matrices with its own \mat and distributions with plain TeX's \pmatrix and \cr.
GS_MACROS = (
    "Write a program to simulate the outcomes of a Markov chain, given the transition matrix $\\mat{P}$.\n"
    "A random variable $X$ has the distribution\n"
    "$$ p_X = \\pmatrix{ 0 & 1 & 2 & 4 \\cr 1/3 & 1/3 & 1/6 & 1/6 \\cr}\\ .\n$$\n"
    "Show that $1 = P(\\mbox{higher}) + P(\\mbox{lower})$."
)


def test_grinstead_and_snell_s_macros_are_typeset_not_shown_in_red(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    text = typeset_problem_text(page, live_server, login, problem_factory(GS_MACROS, title="Markov chain simulation"))
    # An undefined command is drawn in KaTeX's error colour, inside the formula.
    assert text.locator("mstyle[mathcolor='#cc0000']").count() == 0
    assert "\\" not in "".join(text.locator(".katex-html").all_inner_texts())
    assert text.locator(".katex-mathml mi[mathvariant='bold']").first.text_content() == "P"
    assert text.locator(".katex-display mtable mtr").count() == 2  # the distribution's two rows


def test_the_live_search_says_how_many_problems_it_found(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    """The list is swapped in by htmx as you type: a screen reader heard nothing of it, so a blind user
    could not tell that the search had found one problem, or none. The count is now written into the
    page's live region (role=status), which stays in place across swaps."""
    problem_factory("Choose a committee of 3 from 10 people.", title="Committee")
    problem_factory("Roll two dice.", title="Dice sum")
    problem_factory("Roll three dice.", title="Dice triple")
    login("alice")
    live = page.locator("[role=status]#live-status")
    assert live.count() == 1
    assert live.text_content() == ""  # nothing said on the first load

    page.fill("#id_q", "dice")
    page.wait_for_selector("#problem-results .problem-link:text-is('Committee')", state="detached")
    page.wait_for_selector("#live-status:text-is('2 problems')", state="attached")
    page.fill("#id_q", "nothing like this")
    page.wait_for_selector("#live-status:text-is('0 problems')", state="attached")
    assert live.evaluate("el => el.closest('#problem-results') === null")  # outside what htmx replaces


def test_paging_the_list_from_the_keyboard_keeps_the_focus_on_the_list(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    """"Next →" lies inside the list htmx replaces: pressed with Enter, the link went with the old list
    and the focus fell to the page's body, so the next Tab began again at the skip link. The focus now
    goes to the new list, and Tab goes on inside it."""
    for i in range(30):
        problem_factory(f"Toss a coin {i} times.", title=f"Coin {i:02d}")
    login("alice")
    page.wait_for_selector("#problem-results .problem-link")
    page.focus("#problem-results a:text-is('Next →')")
    page.keyboard.press("Enter")
    page.wait_for_url("**page=2**")
    page.wait_for_selector("#problem-results a:text-is('← Previous')")
    page.wait_for_selector("#problem-results:focus")  # moved once htmx has settled the swap (a selector: the CSP refuses eval)
    assert page.evaluate("document.activeElement.id") == "problem-results"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#problem-results') !== null")
