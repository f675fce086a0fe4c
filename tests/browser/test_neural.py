from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

RESULTS = {
    "rounds": 2, "seed": 0, "config": {}, "word_vectors": "glove-trained-on-bank", "vocabulary": {"all": 9, "selected": 3},
    "concepts": {"nchoosek": {"positives": 4, "negatives": 6}},
    "schemes": {
        "down-sampling": {"label": "Down-sampling", "concepts": {"nchoosek": {"fn": 0.5, "fn_sd": 0.1, "fp": 0.25, "fp_sd": 0.1}}, "fn": 0.5, "fp": 0.25, "fn_reduction": 0.0, "fp_reduction": 0.0},
        "negative-pretraining": {"label": "Negative pre-training", "concepts": {"nchoosek": {"fn": 0.25, "fn_sd": 0.1, "fp": 0.25, "fp_sd": 0.1}}, "fn": 0.25, "fp": 0.25, "fn_reduction": 0.5, "fp_reduction": 0.0},
    },
    "best": {"nchoosek": "negative-pretraining"},
    "seconds": 1.0,
}


def test_a_ta_watches_an_experiment_finish_and_accepts_a_neural_suggestion(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    from concepts.models import GroundTruthLabel, NeuralExperiment, NeuralSuggestion

    concept = concept_factory("nchoosek")
    problem = problem_factory("Choose 3 of 10 people: $\\binom{10}{3}$.", title="Committee")
    experiment = NeuralExperiment.objects.create(concepts=["nchoosek"], schemes=list(RESULTS["schemes"]), rounds=2, status="running", progress=0.4)
    login("alice")
    page.goto(f"{live_server.url}/concepts/neural/{experiment.pk}/")
    assert page.locator("#run-status progress").count() == 1 and page.locator("#table3").count() == 0
    # The worker finishes: the page, polling every 2 s, reloads itself and shows the table.
    NeuralExperiment.objects.filter(pk=experiment.pk).update(status="done", progress=1.0, results=RESULTS)
    NeuralSuggestion.objects.create(
        experiment=experiment, problem=problem, concept=concept, scheme="negative-pretraining",
        probability=0.93, predicted=True, in_labels=None, in_rules=False,
    )
    page.wait_for_selector("#table3", timeout=10_000)
    rows = page.locator("#table3 tbody tr")
    assert rows.count() == 2 and "Negative pre-training" in rows.nth(1).inner_text() and "50.0%" in rows.nth(1).inner_text()
    assert "Committee" in page.locator("#neural-unlabelled").inner_text()

    page.click("#neural-unlabelled >> text=Committee")
    page.wait_for_selector('#suggestions .suggestion.neural[data-slug="nchoosek"]')
    assert "neural 0.93" in page.locator("#suggestions").inner_text()
    page.locator("body").click()
    page.keyboard.press("a")  # accept the extractor's suggestion
    page.wait_for_selector('#chosen .chip[data-slug="nchoosek"]')
    with page.expect_navigation():
        page.keyboard.press("s")  # save
    assert list(GroundTruthLabel.objects.filter(problem=problem).values_list("concept__slug", flat=True)) == ["nchoosek"]
