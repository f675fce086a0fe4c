"""The embedding lab's charts: the SVG and its data table carry the right numbers (no browser)."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse

from embeddings.models import EmbeddingRun
from tests.embeddings.test_runs import bank, rebuild  # noqa: F401 (the fixture)


def test_a_prob2vec_run_stores_its_loss_per_epoch_and_the_run_page_draws_the_curve(client: Any, bank: dict[str, Any], alice: Any) -> None:  # noqa: F811
    run = rebuild()
    assert 1 < len(run.losses) <= 250  # one per epoch run (training may stop early at its tolerance)
    # Training lowers the loss. The curve is the data term alone: on a 9-problem bank the prior (l2) then
    # pulls the weights in again, so the last epoch's data loss may sit above the first's (it does at dim 20).
    assert min(run.losses) < run.losses[0] - 0.01
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode()
    assert '<figure class="chart" id="loss-chart">' in page and 'role="img"' in page
    assert f"Training loss over {len(run.losses)} epochs" in page
    assert re.search(r'<path class="line s0" d="M[\d.]+,[\d.]+ L', page)  # the curve itself
    table = page[page.index('id="loss-data"'):]
    assert table.count("<tr>") == len(run.losses) + 1
    assert f"{run.losses[0]:.5f}" in table and f"{run.losses[-1]:.5f}" in table


def test_a_method_that_does_not_train_has_no_curve_and_old_runs_say_why(client: Any, bank: dict[str, Any], alice: Any) -> None:  # noqa: F811
    onehot = rebuild("onehot")
    assert onehot.losses == []
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab-run", args=[onehot.pk])).content.decode()
    assert 'id="loss-chart"' not in page and "does not train" in page
    old = rebuild()
    EmbeddingRun.objects.filter(pk=old.pk).update(losses=[])
    assert "No loss per epoch was stored" in client.get(reverse("embeddings:lab-run", args=[old.pk])).content.decode()


def test_text_runs_train_glove_with_a_curve_and_show_no_concept_source(client: Any, bank: dict[str, Any], alice: Any) -> None:  # noqa: F811
    run = rebuild("glove-avg")
    assert run.status == "done" and len(run.losses) > 1
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode()
    assert "glove-avg on the problem text" in page and 'id="loss-chart"' in page
    lab = client.get(reverse("embeddings:lab")).content.decode()
    row = lab[lab.index(f">#{run.pk}</a>"):]
    row = row[: row.index("</tr>")]
    assert "<td>text</td>" in row and "Expert labels" not in row


def test_the_lab_draws_histograms_with_axes_error_bars_and_a_data_table(client: Any, bank: dict[str, Any], alice: Any) -> None:  # noqa: F811
    rebuild()
    rebuild("onehot")
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab")).content.decode()
    for method in ("prob2vec", "onehot"):
        figure = page[page.index(f'id="gap-{method}"'):]
        figure = figure[: figure.index("</figure>")]
        assert 'role="img"' in figure and f'<title id="gap-{method}-title">Similarity gaps of {method}' in figure
        assert ">\u22121.0</text>" in figure and ">1.0</text>" in figure  # the gap axis
        assert 'class="axislabel"' in figure and "sim(A, B) − sim(A, C)" in figure
        assert figure.count('class="errorbar"') >= 3  # a whisker and two caps per filled bin
    # Both accepted triplets are ordered rightly by onehot: its data row holds them, none in red.
    data = page[page.index('id="gap-histogram-data"'):]
    onehot_row = data[data.index("onehot"):]
    onehot_row = onehot_row[: onehot_row.index("</tr>")]
    assert onehot_row.endswith('<td class="num">2</td>') and 'class="bad"' not in onehot_row
    # Table 1 as a dot-and-whisker chart: one row per built method, with the bootstrap interval.
    chart = page[page.index('id="accuracy-chart"'):]
    chart = chart[: chart.index("</figure>")]
    assert "onehot · expert labels: 100.0%" in chart and "prob2vec · expert labels" in chart


def test_the_continuity_map_places_every_concept_linked_and_keeps_the_choice(client: Any, bank: dict[str, Any], alice: Any) -> None:  # noqa: F811
    run = rebuild()
    client.force_login(alice)
    url = reverse("embeddings:lab-concepts")
    page = client.get(url, {"concept": "nchoosek"}).content.decode()
    chart = page[page.index('<figure class="chart" id="concept-map">'):]
    chart = chart[: chart.index("</figure>")]
    assert 'role="group"' in chart  # a group of links, not one image
    for slug in run.concept_slugs:
        assert f'<a href="{url}?concept={slug}#concept-map"' in chart
    assert chart.count("<circle") == len(run.concept_slugs)
    assert 'class="dot selected"' in chart and ">nchoosek</text>" in chart
    assert chart.count(' fill="#') == len(run.concept_slugs) + 1  # module colours on the points and the legend
    assert "Map of 4 concepts, nchoosek selected" in chart
    assert chart.count('class="legend-item"') == 1  # one module, "m"
    data = page[page.index('id="concept-map-data"'):]
    assert data.count("<tr") == 1 + len(run.concept_slugs) and '<tr class="selected">' in data
    # The select sends htmx requests that push the URL, so a reload shows the same concept.
    assert 'hx-push-url="true"' in page
    assert '<option value="nchoosek" selected>' in page


def test_the_map_without_an_active_run_says_so(client: Any, alice: Any) -> None:
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab-concepts")).content.decode()
    assert 'id="concept-map"' not in page


def test_a_finished_run_s_poll_reloads_its_page_with_the_curve_and_the_runs_list_names_text_sources(client: Any, bank: dict[str, Any], alice: Any) -> None:  # noqa: F811
    run = rebuild()
    text = rebuild("sif")
    client.force_login(alice)
    assert client.get(reverse("embeddings:lab-run", args=[run.pk]), HTTP_HX_REQUEST="true").get("HX-Refresh") == "true"
    assert 'id="loss-chart"' in client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode()
    runs = client.get(reverse("embeddings:lab"), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="lab-runs").content.decode()
    row = runs[runs.index(f">#{text.pk}</a>"):]
    assert row[: row.index("</tr>")].count("<td>text</td>") == 1
