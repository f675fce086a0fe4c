"""Every chart page in Chromium: the SVG renders with a real size, and the continuity map keeps ?concept= on reload."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def _chart_box(page: Any, figure_id: str) -> dict[str, float]:
    svg = page.locator(f"#{figure_id} svg.chart-svg")
    assert svg.count() == 1, f"no chart SVG in #{figure_id}"
    box = svg.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 40, f"#{figure_id} is drawn {box}"
    return box


def test_every_chart_renders_and_the_continuity_map_keeps_the_concept_in_the_url(
    page: Any, live_server: Any, login: Any, alice: Any, bob: Any, two_concept_families: list[Any]
) -> None:
    from concepts.models import Concept, ExtractorReport, NeuralExperiment
    from concepts.services import labels_set
    from embeddings.models import EmbeddingRun
    from tests.concepts.test_charts import RESULTS, STATS

    made = two_concept_families
    run = EmbeddingRun.objects.get(method="prob2vec")
    report = ExtractorReport.objects.create(status="done", problems=8, fp_rate=0.0098, fn_rate=0.0917, concepts=STATS)
    experiment = NeuralExperiment.objects.create(concepts=["nchoosek"], schemes=list(RESULTS["schemes"]), rounds=1, status="done", results=RESULTS)
    concepts = {c.slug: c for c in Concept.objects.all()}
    for i, p in enumerate(made):
        labels_set(problem=p, annotator=alice, concepts=[concepts["nchoosek"]] + ([concepts["permutations"]] if i < 2 else []))
        labels_set(problem=p, annotator=bob, concepts=[concepts["nchoosek"]] + ([concepts["permutations"]] if i in (0, 2) else []))

    login("hana")
    pages = {
        "/concepts/reports/": ["report-chart"],  # one report: still drawn
        f"/concepts/reports/{report.pk}/": ["report-concepts-chart"],
        "/concepts/label/agreement/": ["agreement-chart"],
        f"/concepts/neural/{experiment.pk}/": ["neural-chart"],
        "/lab/": ["accuracy-chart", "gap-prob2vec", "gap-onehot"],
        f"/lab/runs/{run.pk}/": ["loss-chart"],
        "/lab/concepts/": ["concept-map"],
    }
    for path, figures in pages.items():
        page.goto(f"{live_server.url}{path}")
        for figure_id in figures:
            _chart_box(page, figure_id)
    # The one report's two markers are visible circles, not a polyline with one point.
    page.goto(f"{live_server.url}/concepts/reports/")
    assert page.locator("#report-chart circle").count() == 2
    assert page.locator("#report-chart circle").first.bounding_box()["width"] > 3

    # The map: choose a concept in the list (htmx swaps the page and pushes the URL), reload, same concept.
    page.goto(f"{live_server.url}/lab/concepts/")
    page.select_option("#id_concept", "nchoosek")
    page.wait_for_selector("#neighbours")
    page.wait_for_url("**/lab/concepts/?concept=nchoosek")
    page.reload()
    assert page.locator("#id_concept").input_value() == "nchoosek"
    page.wait_for_selector("#concept-map circle.selected")
    assert page.locator("#concept-map .pointlabel.selected").text_content() == "nchoosek"
    # A point on the map is a link to its concept: the page and the URL follow it, and a reload keeps it.
    page.locator('#concept-map a[href*="concept=Bayes-formula"]').click()
    page.wait_for_url("**/lab/concepts/?concept=Bayes-formula#concept-map")
    page.reload()
    assert page.locator("#id_concept").input_value() == "Bayes-formula"
    assert page.locator("#concept-map .pointlabel.selected").text_content() == "Bayes-formula"
    _chart_box(page, "concept-map")
    # On a phone the charts shrink to the page instead of widening it.
    page.set_viewport_size({"width": 360, "height": 800})
    for path, figures in pages.items():
        page.goto(f"{live_server.url}{path}")
        for figure_id in figures:
            box = page.locator(f"#{figure_id}").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 360, f"{path} #{figure_id} at 360 px: {box}"
            assert _chart_box(page, figure_id)["width"] <= 340
