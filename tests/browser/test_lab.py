from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_lab_page_shows_table_1_and_the_concept_explorer_updates_in_place(
    page: Any, live_server: Any, login: Any, alice: Any, hana: Any, problem_factory: Any
) -> None:
    from embeddings.services import triplet_create, triplet_decide

    # In skip-gram two concepts are near when they share contexts, so each family has three concepts.
    counting = ["nchoosek", "permutations", "counting-principle"]
    bayes = ["Bayes-formula", "conditional-probability", "law-of-total-probability"]
    made = [problem_factory(f"Count {i}", module="m", labels=counting[:2] if i == 0 else counting) for i in range(4)]
    made += [problem_factory(f"Bayes {i}", module="m", labels=bayes[:2] if i == 0 else bayes) for i in range(4)]
    triplet_decide(triplet=triplet_create(anchor=made[0], positive=made[1], negative=made[4]), decision="accept", user=hana)
    call_command("rebuild_embeddings", "--method", "onehot", stdout=io.StringIO())
    call_command("rebuild_embeddings", "--method", "prob2vec", stdout=io.StringIO())
    login("alice")
    page.goto(f"{live_server.url}/lab/")
    assert page.locator('.acc[data-method="onehot"][data-source="labels"]').inner_text() == "100.00%"
    assert page.locator('.acc[data-method="prob2vec"][data-source="labels"]').count() == 1
    assert page.locator("#gap-histograms svg").count() >= 2
    page.click("text=Concept continuity explorer")
    page.select_option("#id_concept", "nchoosek")
    page.wait_for_selector("#neighbours")  # swapped in by htmx on change
    nearest = [page.locator("#neighbours tbody tr").nth(i).locator("td").nth(1).inner_text() for i in range(2)]
    assert set(nearest) == {"permutations", "counting-principle"}
