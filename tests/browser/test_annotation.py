from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_ta_labels_a_problem_with_the_keyboard_alone(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    from concepts.models import ExtractedConcept, ExtractionRun, GroundTruthLabel

    for slug in ["nchoosek", "permutations", "equally-likely-outcomes"]:
        concept_factory(slug)
    first = problem_factory("Pick a committee of 3 from 10: $\\binom{10}{3}$ ways, each equally likely.", title="Committee")
    second = problem_factory("Arrange the letters of WORD.", title="Letters")
    run = ExtractionRun.objects.create(status="done", fingerprint="x")
    ExtractedConcept.objects.create(run=run, problem=first, concept=concept_factory("equally-likely-outcomes"))
    login("alice")
    page.goto(f"{live_server.url}/concepts/label/{first.pk}/?queue=mine")

    page.keyboard.type("nchoo")  # the search box has the focus
    page.wait_for_selector("#concept-options .option.default")  # Enter takes the first option
    page.keyboard.press("Enter")
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]')
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # accept the rule's suggestion
    page.wait_for_selector('#chosen .chip[data-slug="equally-likely-outcomes"]')
    page.keyboard.press("s")  # save and go to the next problem in the queue
    page.wait_for_url(f"**/concepts/label/{second.pk}/?queue=mine")
    assert set(GroundTruthLabel.objects.filter(problem=first).values_list("concept__slug", flat=True)) == {
        "nchoosek",
        "equally-likely-outcomes",
    }
    assert page.locator("#prev-link").count() == 0  # the labelled problem has left the "not yet labelled by me" queue


def test_a_ta_labels_a_new_book_where_no_rule_matches_and_keeps_to_that_book(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    from concepts.models import GroundTruthLabel
    from concepts.services import rule_save

    rule_save(concept=concept_factory("nchoosek"), pattern=r"\\binom")
    concept_factory("permutations")
    problem_factory("Arrange 4 books on a shelf.", title="Ours", collection="week1")  # no rule matches it either
    found = problem_factory("Choose 2 of 5: $\\binom{5}{2}$.", title="Found", collection="newbook")
    first = problem_factory("In how many orders can 6 runners finish?", title="Runners", collection="newbook")
    second = problem_factory("Seat 5 guests in a row.", title="Guests", collection="newbook")
    login("alice")
    page.goto(f"{live_server.url}/concepts/label/")
    page.select_option("#label-collection-select", "newbook")
    page.click("#label-collection button")
    page.wait_for_url("**/concepts/label/?collection=newbook")
    assert page.locator("#queue-norule").inner_text() == "2"  # Runners and Guests; Found has a rule concept
    page.locator('a[href*="queue=norule"]').click()
    page.wait_for_url(f"**/concepts/label/{first.pk}/?queue=norule&collection=newbook")
    page.keyboard.type("permut")
    page.wait_for_selector("#concept-options .option.default")
    page.keyboard.press("Enter")
    page.wait_for_selector('#chosen .chip[data-slug="permutations"]')
    page.keyboard.press("Escape")
    page.keyboard.press("s")  # save and go on in the same book's queue
    page.wait_for_url(f"**/concepts/label/{second.pk}/?queue=norule&collection=newbook")
    assert "No rule matches in newbook" in page.locator("main").inner_text()
    assert list(GroundTruthLabel.objects.filter(problem=first).values_list("concept__slug", flat=True)) == ["permutations"]
    assert found.pk not in (first.pk, second.pk)


def test_a_head_ta_holds_a_problem_out_and_the_rule_editor_no_longer_counts_it(
    page: Any, live_server: Any, login: Any, hana: Any, problem_factory: Any, concept_factory: Any
) -> None:
    """The head TA holds a labelled problem out on its labelling page: the rules' suggestion leaves the
    page, the problem joins the "Held out from rule writing" queue, and the rule editor's live panel
    stops listing it as a miss. Then a draw of a book's unlabelled problems from the home page's form."""
    from concepts.models import ExtractedConcept, ExtractionRun
    from concepts.services import rule_save

    nchoosek = concept_factory("nchoosek")
    concept_factory("equally-likely-outcomes")
    rule_save(concept=nchoosek, pattern=r"\\binom", user=hana)
    missed = problem_factory("Select a committee of 3 from 10.", title="Committee", labels=["nchoosek"])
    for i in range(3):
        problem_factory(f"Book problem {i}.", title=f"Book {i}", collection="book")
    run = ExtractionRun.objects.create(status="done", fingerprint="x")
    ExtractedConcept.objects.create(run=run, problem=missed, concept=concept_factory("equally-likely-outcomes"))
    login("hana")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.wait_for_selector("#preview-missed")
    assert "Missed (FN): 1" in page.locator("#preview-missed summary").inner_text()
    assert "Committee" in page.locator("#preview-missed").inner_text()
    page.goto(f"{live_server.url}/concepts/label/{missed.pk}/?queue=mine")
    assert page.locator('#suggestions li.suggestion[data-slug="equally-likely-outcomes"]').count() == 1
    page.click("#held-out-toggle")
    page.wait_for_url(f"**/concepts/label/{missed.pk}/?queue=mine")
    assert "held out from rule writing" in page.locator("#held-out").inner_text()
    assert page.locator("#suggestions").count() == 0  # labelled without seeing what the extractors find
    page.goto(f"{live_server.url}/concepts/label/")
    assert page.locator("#queue-heldout").inner_text() == "1"
    # A whole draw at once: two of the book's three unlabelled problems, from the home page's form.
    page.select_option("#hold-out-collection", "book")
    page.fill("#hold-out-count", "2")
    page.click("#hold-out-form button")
    page.wait_for_url("**/concepts/label/?collection=book")
    assert page.locator("#queue-heldout").inner_text() == "2"
    assert "Held out 2 unlabelled problems of book" in page.locator("main").inner_text()
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.wait_for_selector("#preview-missed", state="attached")
    assert "Missed (FN): 0" in page.locator("#preview-missed summary").inner_text()
    assert "Committee" not in page.locator("#preview-missed").inner_text()


def test_a_ta_votes_on_a_triplet_and_the_head_ta_accepts_it(
    browser: Any, page: Any, live_server: Any, login: Any, alice: Any, bob: Any, hana: Any, problem_factory: Any
) -> None:
    from embeddings.models import SimilarityTriplet, TripletVote
    from embeddings.selectors import candidates_swapped
    from embeddings.services import triplet_create

    a = problem_factory("Choose 3 of 10: $\\binom{10}{3}$.", title="Anchor")
    b = problem_factory("Choose 2 of 8: $\\binom{8}{2}$.", title="Close")
    c = problem_factory("Arrange 5 books.", title="Far")
    triplet = triplet_create(anchor=a, positive=b, negative=c, user=alice)
    login("bob")
    page.goto(f"{live_server.url}/triplets/judge/")
    page.wait_for_selector(".triplet-card.anchor .katex")
    key = "2" if candidates_swapped(triplet, bob) else "1"  # the side where bob sees "Close"
    assert page.locator(f".triplet-card.{'right' if key == '2' else 'left'} h3").inner_text() == "Close"
    page.keyboard.press(key)
    page.wait_for_selector("#nothing-to-judge")
    assert TripletVote.objects.get(voter=bob).choice == "positive"

    context = browser.new_context()
    head = context.new_page()
    head.goto(f"{live_server.url}/login/")
    head.fill("#id_username", "hana")
    head.fill("#id_password", "password-123")
    head.click("button[type=submit]")
    head.goto(f"{live_server.url}/triplets/consensus/")
    row = head.locator(f"#triplet-{triplet.pk}")
    assert "1 · 0 · 0" in row.inner_text()
    row.locator("button[value=accept]").click()
    head.wait_for_selector("text=accepted.")
    context.close()
    assert SimilarityTriplet.objects.get().status == "accepted"


def test_backspace_takes_back_the_last_chip_added_arrow_down_starts_at_the_first_option_and_decisions_undo(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    from concepts.models import ExtractedConcept, ExtractionRun

    for slug, module in [("permutations", "counting"), ("nchoosek", "counting"), ("Bayes-formula", "conditional probability")]:
        concept_factory(slug, module)
    problem = problem_factory("Pick a committee of 3 from 10.", title="Committee")
    run = ExtractionRun.objects.create(status="done", fingerprint="x")
    ExtractedConcept.objects.create(run=run, problem=problem, concept=concept_factory("nchoosek"))
    login("alice")
    page.goto(f"{live_server.url}/concepts/label/{problem.pk}/?queue=mine")

    # Added in the order Bayes-formula, then permutations: module order would put permutations first.
    page.keyboard.type("Bayes")
    page.wait_for_selector("#concept-options .option.default")
    page.keyboard.press("Enter")
    page.keyboard.type("permut")
    page.wait_for_selector("#concept-options .option.default[data-slug='permutations']")
    page.keyboard.press("Enter")
    assert page.locator("#chosen .chip").evaluate_all("els => els.map(e => e.dataset.slug)") == ["Bayes-formula", "permutations"]
    page.keyboard.press("Backspace")
    assert page.locator("#chosen .chip").evaluate_all("els => els.map(e => e.dataset.slug)") == ["Bayes-formula"]

    # ↓ highlights the first option (not the second); Enter takes the highlighted one.
    page.keyboard.type("e")
    page.wait_for_selector("#concept-options .option.default")
    first = page.locator("#concept-options .option").first.get_attribute("data-slug")
    page.keyboard.press("ArrowDown")
    assert page.locator("#concept-options .option.active").get_attribute("data-slug") == first
    page.keyboard.press("Escape")

    # Accepting the rule's suggestion can be undone (u), and so can rejecting it (its button).
    page.keyboard.press("a")
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]')
    page.keyboard.press("u")
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]', state="detached")
    assert page.locator("#suggestions .suggestion.done").count() == 0
    page.click("#suggestions .reject")
    page.wait_for_selector("#suggestions .suggestion.rejected")
    page.click("#suggestions .undo")
    page.wait_for_selector("#suggestions .suggestion.rejected", state="detached")
    assert page.locator("#suggestions .accept").is_visible()
    assert "is a suggestion again" in page.locator("#labeler-status").inner_text()


def test_the_labeller_says_which_concept_enter_added_and_backspace_removed(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    """The chips were redrawn whole in an aria-live list: a screen reader read out every chip again
    (or "none yet") and never which one Enter had added or Backspace, pressed once too often in an
    empty box, had taken away. The labeller's status line now says it."""
    for slug in ["nchoosek", "permutations"]:
        concept_factory(slug)
    problem = problem_factory("Arrange the letters of WORD and pick 2 of them.", title="Letters")
    login("alice")
    page.goto(f"{live_server.url}/concepts/label/{problem.pk}/?queue=mine")
    status = page.locator("[role=status]#labeler-status")

    page.keyboard.type("nchoo")
    page.wait_for_selector("#concept-options .option.default")
    page.keyboard.press("Enter")
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]')
    assert status.text_content() == "Added nchoosek."
    page.keyboard.type("permu")
    page.wait_for_selector("#concept-options .option.default")
    page.keyboard.press("Enter")
    assert status.text_content() == "Added permutations."

    page.keyboard.press("Backspace")  # the box is empty: the last chip added goes
    page.wait_for_selector('#chosen .chip[data-slug="permutations"]', state="detached")
    assert status.text_content() == "Removed permutations."
    assert page.locator("#chosen[aria-live]").count() == 0  # redrawn whole, it would read every chip again


def test_removing_a_chip_from_the_keyboard_keeps_the_focus_in_the_labeller(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    """A chip's × button is redrawn with the chips when pressed: the focus fell to the page's body,
    so a keyboard user's next Tab started again from the skip link. It now lands in the search box."""
    concept_factory("nchoosek")
    problem = problem_factory("Pick 2 of 5.", title="Pick")
    login("alice")
    page.goto(f"{live_server.url}/concepts/label/{problem.pk}/?queue=mine")
    page.keyboard.type("nchoo")
    page.wait_for_selector("#concept-options .option.default")
    page.keyboard.press("Enter")
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]')
    page.focus("#chosen button[aria-label='remove nchoosek']")
    page.keyboard.press("Enter")
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]', state="detached")
    assert page.evaluate("document.activeElement.id") == "concept-search"
