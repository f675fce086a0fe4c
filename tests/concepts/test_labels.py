from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from concepts.models import GroundTruthLabel, LabelSet
from concepts.selectors import label_queue_ids
from concepts.services import LabelsRejected, labels_resolve, labels_set


def truth(problem: Any) -> set[str]:
    return set(GroundTruthLabel.objects.filter(problem=problem).values_list("concept__slug", flat=True))


@pytest.fixture
def concepts(concept_factory: Any) -> dict[str, Any]:
    return {s: concept_factory(s) for s in ["nchoosek", "permutations", "Bayes-formula"]}


def test_one_annotator_sets_the_ground_truth_and_disagreement_waits_for_the_head_ta(
    problem_factory: Any, concepts: dict[str, Any], alice: Any, bob: Any, hana: Any
) -> None:
    p = problem_factory("Choose 3 of 10.", labels=["permutations"])  # imported labels
    labels_set(problem=p, annotator=alice, concepts=[concepts["nchoosek"]])
    assert truth(p) == {"nchoosek"}
    labels_set(problem=p, annotator=bob, concepts=[concepts["nchoosek"], concepts["permutations"]])
    assert truth(p) == {"nchoosek"}  # they disagree: unchanged until resolved
    assert label_queue_ids(queue="disagreement", user=hana) == [p.pk]
    labels_resolve(problem=p, concepts=[concepts["nchoosek"], concepts["Bayes-formula"]], user=hana)
    assert truth(p) == {"nchoosek", "Bayes-formula"}
    assert label_queue_ids(queue="disagreement", user=hana) == []
    labels_set(problem=p, annotator=alice, concepts=[concepts["permutations"]])
    assert truth(p) == {"nchoosek", "Bayes-formula"}  # the resolution wins
    assert [(ls.annotator.username, sorted(c.slug for c in ls.concepts.all())) for ls in LabelSet.objects.order_by("annotator__username")] == [
        ("alice", ["permutations"]),
        ("bob", ["nchoosek", "permutations"]),
    ]


def test_an_empty_label_set_is_refused(problem_factory: Any, alice: Any) -> None:
    p = problem_factory()
    with pytest.raises(LabelsRejected, match="empty label set"):
        labels_set(problem=p, annotator=alice, concepts=[])
    assert not LabelSet.objects.exists()


def test_queues(problem_factory: Any, concepts: dict[str, Any], alice: Any) -> None:
    labelled = problem_factory("a", labels=["nchoosek"])
    bare = problem_factory("b")
    assert label_queue_ids(queue="unlabelled", user=alice) == [bare.pk]
    assert set(label_queue_ids(queue="mine", user=alice)) == {labelled.pk, bare.pk}
    labels_set(problem=bare, annotator=alice, concepts=[concepts["nchoosek"]])
    assert label_queue_ids(queue="mine", user=alice) == [labelled.pk]
    assert label_queue_ids(queue="unlabelled", user=alice) == []


def test_the_rules_queue_holds_labelled_problems_the_latest_finished_run_gets_wrong(
    problem_factory: Any, concepts: dict[str, Any], alice: Any
) -> None:
    from concepts.models import ExtractedConcept, ExtractionRun
    from concepts.selectors import label_queue_counts

    agrees = problem_factory("a", labels=["nchoosek"])
    missed = problem_factory("b", labels=["nchoosek", "permutations"])
    extra = problem_factory("c", labels=["nchoosek"])
    nothing_found = problem_factory("d", labels=["permutations"])
    unlabelled = problem_factory("e")
    assert label_queue_ids(queue="rules", user=alice) == []  # no extraction run yet
    run = ExtractionRun.objects.create(status="done")
    for problem, slugs in [(agrees, ["nchoosek"]), (missed, ["nchoosek"]), (extra, ["nchoosek", "Bayes-formula"]),
                           (unlabelled, ["Bayes-formula"])]:
        for slug in slugs:
            ExtractedConcept.objects.create(run=run, problem=problem, concept=concepts[slug])
    ExtractionRun.objects.create(status="running")  # not finished: not read
    assert label_queue_ids(queue="rules", user=alice) == [missed.pk, extra.pk, nothing_found.pk]  # bank order
    assert label_queue_counts(alice)["rules"] == 3
    ExtractedConcept.objects.create(run=run, problem=missed, concept=concepts["permutations"])
    assert label_queue_ids(queue="rules", user=alice) == [extra.pk, nothing_found.pk]


def test_the_labelling_page_saves_and_moves_on(client: Any, alice: Any, problem_factory: Any, concepts: dict[str, Any]) -> None:
    first, second = problem_factory("First", title="First"), problem_factory("Second", title="Second")
    client.force_login(alice)
    page = client.get(reverse("concepts:label", args=[first.pk]) + "?queue=mine").content.decode()
    assert 'id="concept-data"' in page and 'name="concepts" value="nchoosek"' in page
    response = client.post(reverse("concepts:label", args=[first.pk]), {"queue": "mine", "concepts": ["nchoosek", "permutations"], "then": "next"})
    assert response.url == reverse("concepts:label", args=[second.pk]) + "?queue=mine"
    assert truth(first) == {"nchoosek", "permutations"}
    empty = client.post(reverse("concepts:label", args=[second.pk]), {"queue": "mine", "concepts": []}, follow=True)
    assert "An empty label set" in empty.content.decode() and not LabelSet.objects.filter(problem=second).exists()


def test_only_head_tas_see_other_annotators_and_resolve(
    client: Any, alice: Any, bob: Any, hana: Any, problem_factory: Any, concepts: dict[str, Any]
) -> None:
    p = problem_factory("x")
    labels_set(problem=p, annotator=bob, concepts=[concepts["Bayes-formula"]])
    client.force_login(alice)
    page = client.get(reverse("concepts:label", args=[p.pk])).content.decode()
    assert "bob:" not in page and 'value="resolve"' not in page
    client.post(reverse("concepts:label", args=[p.pk]), {"concepts": ["nchoosek"], "action": "resolve"})
    assert truth(p) == {"Bayes-formula"}
    client.force_login(hana)
    assert ">bob</th>" in client.get(reverse("concepts:label", args=[p.pk])).content.decode()
    client.post(reverse("concepts:label", args=[p.pk]), {"concepts": ["nchoosek"], "action": "resolve"})
    assert truth(p) == {"nchoosek"}


def test_a_head_ta_starts_from_what_the_annotators_agree_on_and_sees_where_they_differ(
    client: Any, alice: Any, bob: Any, hana: Any, problem_factory: Any, concepts: dict[str, Any]
) -> None:
    import re

    p = problem_factory("x")
    labels_set(problem=p, annotator=alice, concepts=[concepts["nchoosek"], concepts["permutations"]])
    labels_set(problem=p, annotator=bob, concepts=[concepts["nchoosek"], concepts["Bayes-formula"]])
    client.force_login(hana)
    page = client.get(reverse("concepts:label", args=[p.pk])).content.decode()
    ticked = set(re.findall(r'name="concepts" value="([^"]+)" checked', page))
    assert ticked == {"nchoosek"}  # agreed by both; the disputed ones wait for the head TA
    rows = re.findall(r'<tr class="(agreed|disagree)" data-slug="([^"]+)">', page)
    assert rows == [("disagree", "Bayes-formula"), ("disagree", "permutations"), ("agreed", "nchoosek")]
    assert page.count("✓ chose") == 4 and page.count("— not chosen") == 2
    # Once resolved, the page starts from the resolution.
    client.post(reverse("concepts:label", args=[p.pk]), {"concepts": ["nchoosek", "permutations"], "action": "resolve"})
    page = client.get(reverse("concepts:label", args=[p.pk])).content.decode()
    assert set(re.findall(r'name="concepts" value="([^"]+)" checked', page)) == {"nchoosek", "permutations"}
    # A TA (no resolving) still starts from their own labels.
    client.force_login(alice)
    page = client.get(reverse("concepts:label", args=[p.pk])).content.decode()
    assert set(re.findall(r'name="concepts" value="([^"]+)" checked', page)) == {"nchoosek", "permutations"}
    assert "annotator-diff" not in page


@pytest.mark.parametrize("name", ["concepts:label-home", "concepts:label-agreement"])
def test_students_never_see_labels(client: Any, sam: Any, name: str) -> None:
    client.force_login(sam)
    assert client.get(reverse(name)).status_code in (302, 403)


def test_agreement_page(client: Any, alice: Any, bob: Any, hana: Any, problem_factory: Any, concepts: dict[str, Any]) -> None:
    p1, p2 = problem_factory("1"), problem_factory("2")
    labels_set(problem=p1, annotator=alice, concepts=[concepts["nchoosek"]])
    labels_set(problem=p1, annotator=bob, concepts=[concepts["nchoosek"]])
    labels_set(problem=p2, annotator=alice, concepts=[concepts["permutations"]])
    labels_set(problem=p2, annotator=bob, concepts=[concepts["permutations"]])
    client.force_login(hana)
    page = client.get(reverse("concepts:label-agreement")).content.decode()
    assert 'id="mean-alpha">1.000' in page and "over the 2 problems labelled by at least two of the 2 annotators" in page


def write(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_import_labels_all_or_nothing_with_line_numbers(tmp_path: Path, problem_factory: Any, concepts: dict[str, Any]) -> None:
    p = problem_factory("x", collection="c", source_id="1", labels=["permutations"])
    path = write(tmp_path, [
        {"id": "1", "concepts": ["nchoosek"]},
        {"id": "nope", "concepts": ["nchoosek"]},
        {"id": "1", "concepts": []},
        {"id": "1", "concepts": ["made-up"]},
        "{bad",
    ])
    err = io.StringIO()
    with pytest.raises(CommandError, match="4 bad line"):
        call_command("import_labels", str(path), "--collection", "c", stderr=err)
    assert ":2: no problem 'nope' in collection 'c'" in err.getvalue()
    assert ":3: an empty label set" in err.getvalue() and ":4: unknown concept(s): made-up" in err.getvalue()
    assert ":5: bad JSON" in err.getvalue()
    assert truth(p) == {"permutations"}
    good = write(tmp_path, [{"id": "1", "concepts": ["nchoosek", "Bayes-formula"], "note": "ignored"}])
    call_command("import_labels", str(good), "--collection", "c", stdout=io.StringIO())
    assert truth(p) == {"nchoosek", "Bayes-formula"}
    out = tmp_path / "out.jsonl"
    call_command("export_labels", str(out), "--collection", "c", stderr=io.StringIO())
    assert [json.loads(x) for x in out.read_text().splitlines()] == [{"id": "1", "concepts": ["Bayes-formula", "nchoosek"]}]


def test_import_labels_as_an_annotator(tmp_path: Path, problem_factory: Any, concepts: dict[str, Any], alice: Any) -> None:
    p = problem_factory("x", collection="c", source_id="1")
    call_command("import_labels", str(write(tmp_path, [{"id": 1, "concepts": ["nchoosek"]}])), "--collection", "c", "--annotator", "alice", stdout=io.StringIO())
    assert LabelSet.objects.get().annotator == alice and truth(p) == {"nchoosek"}


def test_a_queue_can_be_narrowed_to_one_collection(problem_factory: Any, concepts: dict[str, Any], alice: Any) -> None:
    ours = problem_factory("a", collection="week1")
    book = [problem_factory("b", collection="openstax"), problem_factory("c", collection="openstax")]
    assert set(label_queue_ids(queue="unlabelled", user=alice)) == {ours.pk, *(p.pk for p in book)}
    assert label_queue_ids(queue="unlabelled", user=alice, collection="openstax") == [p.pk for p in book]
    labels_set(problem=book[0], annotator=alice, concepts=[concepts["nchoosek"]])
    assert label_queue_ids(queue="unlabelled", user=alice, collection="openstax") == [book[1].pk]
    assert label_queue_ids(queue="mine", user=alice, collection="week1") == [ours.pk]


def test_the_labelling_pages_keep_to_the_collection_chosen(client: Any, problem_factory: Any, concepts: dict[str, Any], alice: Any) -> None:
    problem_factory("a", collection="week1")
    first, second = problem_factory("b", collection="openstax"), problem_factory("c", collection="openstax")
    client.force_login(alice)
    home = client.get(reverse("concepts:label-home"), {"collection": "openstax"}).content.decode()
    assert 'id="queue-unlabelled">2<' in home and '<option value="openstax" selected>' in home
    assert f'{reverse("concepts:label-next")}?queue=unlabelled&amp;collection=openstax' in home
    start = client.get(reverse("concepts:label-next"), {"queue": "unlabelled", "collection": "openstax"})
    assert start.status_code == 302 and start.url == f"{reverse('concepts:label', args=[first.pk])}?queue=unlabelled&collection=openstax"
    page = client.get(start.url).content.decode()
    assert "Unlabelled in openstax: 1 of 2" in page and 'name="collection" value="openstax"' in page
    assert f'id="next-link" href="{reverse("concepts:label", args=[second.pk])}?queue=unlabelled&amp;collection=openstax"' in page
    # Saving goes on to the next problem of the same collection and queue.
    saved = client.post(start.url, {"concepts": ["nchoosek"], "queue": "unlabelled", "collection": "openstax"})
    assert saved.status_code == 302 and saved.url == f"{reverse('concepts:label', args=[second.pk])}?queue=unlabelled&collection=openstax"
    # An unknown collection means every collection, as before.
    home = client.get(reverse("concepts:label-home"), {"collection": "no-such-book"}).content.decode()
    assert 'id="queue-unlabelled">2<' in home and '<option value="" selected' not in home
    # An empty queue of one collection goes back to that collection's queues.
    client.post(reverse("concepts:label", args=[second.pk]), {"concepts": ["nchoosek"], "queue": "unlabelled", "collection": "openstax"})
    empty = client.get(reverse("concepts:label-next"), {"queue": "unlabelled", "collection": "openstax"})
    assert empty.status_code == 302 and empty.url == f"{reverse('concepts:label-home')}?collection=openstax"
