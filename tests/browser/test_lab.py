from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_lab_page_shows_table_1_and_the_concept_explorer_updates_in_place(
    page: Any, live_server: Any, login: Any, alice: Any, two_concept_families: list[Any]
) -> None:
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
