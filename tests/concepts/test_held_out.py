"""Problems held out from rule writing: their labels measure the rules and never tune them."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from concepts import selectors
from concepts.models import ExtractedConcept, ExtractionRun, ExtractorReport, HeldOutProblem
from concepts.selectors import label_queue_ids
from concepts.services import held_out_set, rule_save


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any, hana: Any) -> dict[str, Any]:
    """The nchoosek rule was written from "seen" (it says "choose"); "fresh" says "select", is held out,
    and the rule misses it; "fresh-found" is held out and found; "wrong" is held out, matched, and not
    labelled nchoosek."""
    nchoosek = concept_factory("nchoosek")
    concept_factory("permutations")
    problems = {
        "seen": problem_factory("Choose 3 of 10.", title="Seen", labels=["nchoosek"]),
        "fresh": problem_factory("Select a committee of 3 from 10.", title="Fresh", labels=["nchoosek"]),
        "fresh-found": problem_factory("Choose 2 of 5.", title="Fresh found", labels=["nchoosek"]),
        "wrong": problem_factory("Choose an order for 4 books.", title="Wrong", labels=["permutations"]),
        "unlabelled": problem_factory("Choose 1 of 2.", title="Unlabelled"),
    }
    rule_save(concept=nchoosek, pattern=r"\bchoose\b", user=hana)
    held_out_set(problem_ids=[problems[k].pk for k in ("fresh", "fresh-found", "wrong")], held_out=True, user=hana)
    return problems


def test_holding_out_keeps_who_marked_it_and_returning_removes_it(problem_factory: Any, hana: Any, alice: Any) -> None:
    p, q = problem_factory("a"), problem_factory("b")
    assert held_out_set(problem_ids=[p.pk], held_out=True, user=hana) == 1
    assert held_out_set(problem_ids=[p.pk, q.pk], held_out=True, user=alice) == 1  # p stays hana's
    assert dict(HeldOutProblem.objects.values_list("problem_id", "marked_by__username")) == {p.pk: "hana", q.pk: "alice"}
    assert held_out_set(problem_ids=[p.pk], held_out=False) == 1
    assert selectors.held_out_ids() == {q.pk}


def test_the_rule_editor_treats_held_out_problems_as_unlabelled(bank: dict[str, Any]) -> None:
    from concepts.models import Concept

    nchoosek = Concept.objects.get(slug="nchoosek")
    preview = selectors.rule_preview(concept=nchoosek, pattern=r"\bchoose\b", ignore_case=True)
    # Judged on "seen" alone: the other labelled problems are held out.
    assert (preview.stats.tp, preview.stats.fp, preview.stats.fn, preview.stats.tn) == (1, 0, 0, 0)
    assert preview.missed_ids == [] and preview.false_positive_ids == []
    verdicts = {row.problem_id: row.verdict for row in preview.rows}
    assert verdicts == {bank["seen"].pk: "tp", bank["fresh-found"].pk: "unlabelled", bank["wrong"].pk: "unlabelled",
                        bank["unlabelled"].pk: "unlabelled"}
    # Mining phrases for the rule sees one positive ("seen") and no miss to recover.
    suggestions = selectors.rule_suggestions(concept=nchoosek, pattern=r"\bchoose\b", ignore_case=True)
    assert (suggestions.positives, suggestions.missed) == (1, 0)
    result = selectors.rules_analysis()
    assert bank["fresh"].pk not in result.no_concept_ids  # no rule matches it, and it is not listed to write one from
    analysis = result.analysis
    assert analysis.labelled == 1
    assert [(r.slug, r.tp, r.fp, r.fn) for r in analysis.rules] == [("nchoosek", 1, 0, 0)]
    # The report's drill-down lists no held-out problem either.
    assert selectors.report_problems(concept=nchoosek, kind="fn") == []
    assert selectors.report_problems(concept=nchoosek, kind="fp") == []
    # Returned to rule writing, "fresh" is a miss again and "wrong" a false match: the bank's key follows the marks.
    held_out_set(problem_ids=[bank["fresh"].pk, bank["wrong"].pk], held_out=False)
    preview = selectors.rule_preview(concept=nchoosek, pattern=r"\bchoose\b", ignore_case=True)
    assert preview.missed_ids == [bank["fresh"].pk] and preview.false_positive_ids == [bank["wrong"].pk]
    assert [p.pk for p, _, _ in selectors.report_problems(concept=nchoosek, kind="fn")] == [bank["fresh"].pk]


def test_extractor_queues_leave_held_out_problems_out_and_they_have_their_own(bank: dict[str, Any], hana: Any) -> None:
    from concepts.models import Concept

    run = ExtractionRun.objects.create(status="done")
    for key in ("seen", "fresh-found", "wrong", "unlabelled"):
        ExtractedConcept.objects.create(run=run, problem=bank[key], concept=Concept.objects.get(slug="nchoosek"))
    assert label_queue_ids(queue="rules", user=hana) == []  # "fresh" (missed) and "wrong" are held out
    assert label_queue_ids(queue="norule", user=hana) == []  # "fresh" is the only problem no rule matches
    assert label_queue_ids(queue="heldout", user=hana) == [bank["fresh"].pk, bank["fresh-found"].pk, bank["wrong"].pk]
    held_out_set(problem_ids=[bank["fresh"].pk], held_out=False)
    assert label_queue_ids(queue="rules", user=hana) == [bank["fresh"].pk]
    assert label_queue_ids(queue="norule", user=hana) == [bank["fresh"].pk]


def test_extractor_report_held_out_measures_on_them_alone_in_the_same_json_shape(bank: dict[str, Any]) -> None:
    out = io.StringIO()
    call_command("extractor_report", "--json", stdout=out)
    every = json.loads(out.getvalue())
    out = io.StringIO()
    call_command("extractor_report", "--held-out", "--json", stdout=out)
    held = json.loads(out.getvalue())
    assert set(held) == set(every) == {"problems", "source", "average", "concepts"}
    assert (every["problems"], held["problems"]) == (4, 3)
    # On the held-out three: one of two nchoosek found, one false match out of one negative.
    assert held["concepts"]["nchoosek"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 0, "fp_rate": 1.0, "fn_rate": 0.5}
    assert every["concepts"]["nchoosek"]["fn"] == 1 and every["concepts"]["nchoosek"]["tp"] == 2
    text = io.StringIO()
    call_command("extractor_report", "--held-out", stdout=text)
    assert text.getvalue().startswith("3 labelled problems held out from rule writing, 1 rules, source rules")


def test_a_held_out_report_with_nothing_held_out_fails_saying_what_to_do(problem_factory: Any, concept_factory: Any) -> None:
    concept_factory("nchoosek")
    problem_factory("Choose 3 of 10.", collection="book", labels=["nchoosek"])
    with pytest.raises(CommandError, match="no problem in collection 'book' is both labelled and held out from rule writing"):
        call_command("extractor_report", "--held-out", "--collection", "book", stdout=io.StringIO())
    assert ExtractorReport.objects.get().status == "failed"


def write(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_import_labels_held_out_marks_every_problem_of_the_file_and_export_reads_them_back(
    tmp_path: Path, problem_factory: Any, concept_factory: Any
) -> None:
    concept_factory("nchoosek")
    one, two, other = (problem_factory("x", collection="c", source_id=s) for s in ("1", "2", "3"))
    bad = write(tmp_path, [{"id": "1", "concepts": ["nchoosek"]}, {"id": "2", "concepts": ["made-up"]}])
    with pytest.raises(CommandError, match="1 bad line"):
        call_command("import_labels", str(bad), "--collection", "c", "--held-out", stderr=io.StringIO())
    assert not HeldOutProblem.objects.exists()  # a bad line: nothing labelled, nothing held out
    good = write(tmp_path, [{"id": "1", "concepts": ["nchoosek"]}, {"id": "2", "concepts": ["nchoosek"]}])
    out = io.StringIO()
    call_command("import_labels", str(good), "--collection", "c", "--held-out", stdout=out)
    assert "2 problems labelled (ground truth, held out from rule writing)" in out.getvalue()
    assert selectors.held_out_ids() == {one.pk, two.pk}
    call_command("import_labels", str(write(tmp_path, [{"id": "3", "concepts": ["nchoosek"]}])), "--collection", "c", stdout=io.StringIO())
    assert other.pk not in selectors.held_out_ids()
    exported = tmp_path / "held.jsonl"
    call_command("export_labels", str(exported), "--collection", "c", "--held-out", stderr=io.StringIO())
    assert [json.loads(x)["id"] for x in exported.read_text().splitlines()] == ["1", "2"]


def test_a_head_ta_holds_a_problem_out_on_its_labelling_page_which_then_suggests_nothing(
    client: Any, hana: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    nchoosek = concept_factory("nchoosek")
    p = problem_factory("Choose 3 of 10.", title="Target")
    run = ExtractionRun.objects.create(status="done")
    ExtractedConcept.objects.create(run=run, problem=p, concept=nchoosek)
    url = reverse("concepts:label", args=[p.pk])
    client.force_login(alice)
    page = client.get(url).content.decode()
    assert 'class="suggestion" data-slug="nchoosek"' in page and 'id="held-out-toggle"' not in page  # a TA cannot mark
    assert client.post(reverse("concepts:label-held-out", args=[p.pk]), {"held_out": "1"}).status_code == 403
    client.force_login(hana)
    response = client.post(reverse("concepts:label-held-out", args=[p.pk]) + "?queue=mine", {"held_out": "1"}, follow=True)
    page = response.content.decode()
    assert response.redirect_chain[-1][0] == url + "?queue=mine"
    assert "Held out from rule writing." in page and "held out from rule writing</span>" in page
    assert 'data-slug="nchoosek"' not in page.split('id="labeler"')[1].split('id="concept-search"')[0]  # no suggestion
    assert HeldOutProblem.objects.get().marked_by == hana
    client.force_login(alice)
    assert "held out from rule writing</span>" in client.get(url).content.decode()  # everyone sees the mark
    client.force_login(hana)
    client.post(reverse("concepts:label-held-out", args=[p.pk]), {"held_out": "0"})
    assert not HeldOutProblem.objects.exists()


def test_a_held_out_report_page_lists_no_problem(
    client: Any, hana: Any, bank: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(hana)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("concepts:reports"), {"collection": "", "source": "rules", "held_out": "on"})
    report = ExtractorReport.objects.get()
    assert report.held_out and response.url == reverse("concepts:report", args=[report.pk])
    page = client.get(response.url).content.decode()
    assert "3</strong> labelled problems held out from rule writing" in page and 'id="held-out-note"' in page
    assert reverse("concepts:report-drilldown", args=[report.pk, "nchoosek", "fn"]) not in page
    drill = client.get(reverse("concepts:report-drilldown", args=[report.pk, "nchoosek", "fn"]), follow=True)
    assert "A held-out report lists no problems" in drill.content.decode()
    # The history chart is of the ordinary reports only.
    assert selectors.report_history() == []


def test_the_api_starts_a_held_out_report(client: Any, hana: Any, bank: dict[str, Any], django_capture_on_commit_callbacks: Any) -> None:
    client.force_login(hana)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/reports/", {"held_out": True}, content_type="application/json")
    assert response.status_code == 202 and response.json()["held_out"] is True
    report = client.get(f"/api/reports/{response.json()['id']}/").json()
    assert (report["status"], report["problems"], report["held_out"]) == ("done", 3, True)


@pytest.fixture
def book(problem_factory: Any, concept_factory: Any) -> dict[str, list[Any]]:
    """A collection of three chapters (20 / 10 / 10 problems), two of them labelled already."""
    concept_factory("nchoosek")
    chapters = {"ch1": 20, "ch2": 10, "ch3": 10}
    out = {name: [problem_factory(f"{name} {i}", collection="book", module=name) for i in range(n)] for name, n in chapters.items()}
    out["labelled"] = [problem_factory("labelled", collection="book", module="ch1", labels=["nchoosek"]),
                       problem_factory("labelled 2", collection="book", module="ch2", labels=["nchoosek"])]
    return out


def test_a_draw_holds_out_unlabelled_problems_spread_over_the_modules_and_reproducibly(book: dict[str, list[Any]], hana: Any) -> None:
    from concepts.services import HeldOutRejected, held_out_draw

    assert held_out_draw(collection="book", count=8, seed=5, user=hana) == {"ch1": 4, "ch2": 2, "ch3": 2}
    first = selectors.held_out_ids("book")
    assert len(first) == 8 and not first & {p.pk for p in book["labelled"]}
    assert HeldOutProblem.objects.filter(marked_by=hana).count() == 8
    HeldOutProblem.objects.all().delete()
    held_out_draw(collection="book", count=8, seed=5)
    assert selectors.held_out_ids("book") == first  # the same bank and seed: the same problems
    # A second draw takes from what is left; past that, all that is left; then a clear refusal.
    assert sum(held_out_draw(collection="book", count=100).values()) == 32
    with pytest.raises(HeldOutRejected, match="every problem of 'book' is labelled or held out already"):
        held_out_draw(collection="book", count=1)
    with pytest.raises(HeldOutRejected, match="no collection 'nope'"):
        held_out_draw(collection="nope", count=1)


def test_the_hold_out_command_prints_the_draw_and_refuses_clearly(book: dict[str, list[Any]], hana: Any) -> None:
    out = io.StringIO()
    call_command("hold_out", "--collection", "book", "--count", "4", "--user", "hana", "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"collection": "book", "held_out": 4, "modules": {"ch1": 2, "ch2": 1, "ch3": 1}}
    text = io.StringIO()
    call_command("hold_out", "--collection", "book", "--count", "100", stdout=text)
    assert text.getvalue().startswith("36 problems of book held out from rule writing (only 36 unlabelled problems were left):")
    for args, message in ((["--collection", "book", "--count", "1"], "nothing left to draw"),
                          (["--collection", "nope", "--count", "1"], "no collection 'nope'"),
                          (["--collection", "book", "--count", "0"], "at least one"),
                          (["--collection", "book", "--count", "1", "--user", "nobody"], "no user 'nobody'")):
        with pytest.raises(CommandError, match=message):
            call_command("hold_out", *args, stdout=io.StringIO())
    assert len(selectors.held_out_ids("book")) == 40


def test_a_head_ta_holds_out_a_draw_from_the_labelling_home_page(client: Any, hana: Any, alice: Any, book: dict[str, list[Any]]) -> None:
    home = reverse("concepts:label-home")
    client.force_login(alice)
    assert 'id="hold-out-form"' not in client.get(home).content.decode()
    assert client.post(reverse("concepts:label-hold-out"), {"collection": "book", "count": 5}).status_code == 403
    client.force_login(hana)
    assert 'id="hold-out-form"' in client.get(home).content.decode()
    response = client.post(reverse("concepts:label-hold-out"), {"collection": "book", "count": 5}, follow=True)
    assert response.redirect_chain[-1][0] == home + "?collection=book"
    page = response.content.decode()
    assert "Held out 5 unlabelled problems of book from rule writing (ch1 3, ch2 1, ch3 1)" in page
    assert 'id="queue-heldout">5<' in page
    bad = client.post(reverse("concepts:label-hold-out"), {"collection": "book", "count": 0}, follow=True).content.decode()
    assert "Choose a collection and how many problems to hold out" in bad and len(selectors.held_out_ids()) == 5


def test_an_ordinary_report_says_whether_any_of_its_problems_are_held_out_and_offers_the_held_out_report(
    client: Any, hana: Any, problem_factory: Any, concept_factory: Any, django_capture_on_commit_callbacks: Any
) -> None:
    concept_factory("nchoosek")
    problems = [problem_factory(f"Choose {i} of 10.", labels=["nchoosek"]) for i in range(3)]
    client.force_login(hana)

    def report_page() -> str:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("concepts:reports"), {"collection": "", "source": "rules"})
        return client.get(response.url).content.decode()

    page = report_page()
    assert 'id="held-out-hint"' in page and "None of these problems is held out from rule writing" in page
    held_out_set(problem_ids=[problems[0].pk, problems[1].pk], held_out=True, user=hana)
    page = report_page()
    assert "<strong>2</strong> of these problems are held out from rule writing" in page and 'id="held-out-report"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("concepts:reports"), {"collection": "", "source": "rules", "held_out": "on"})
    held = client.get(response.url).content.decode()
    assert ExtractorReport.objects.order_by("-id").first().problems == 2 and 'id="held-out-hint"' not in held


def test_the_labels_api_says_a_problem_is_held_out_and_suggests_nothing_for_it(
    client: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    nchoosek = concept_factory("nchoosek")
    p = problem_factory("Choose 3 of 10.")
    ExtractedConcept.objects.create(run=ExtractionRun.objects.create(status="done"), problem=p, concept=nchoosek)
    client.force_login(alice)
    before = client.get(f"/api/problems/{p.pk}/labels/").json()
    assert (before["held_out"], before["suggestions"]) == (False, ["nchoosek"])
    held_out_set(problem_ids=[p.pk], held_out=True)
    after = client.get(f"/api/problems/{p.pk}/labels/").json()
    assert (after["held_out"], after["suggestions"]) == (True, [])


def test_the_neural_experiment_page_lists_no_held_out_problem(client: Any, hana: Any, bank: dict[str, Any]) -> None:
    """Its lists say what the extractor (and the rules) find on each problem: for a held-out one that is
    the suggestion its labelling page hides, and a rule's miss or false match the drill-downs hide."""
    from concepts.models import Concept, NeuralExperiment, NeuralSuggestion

    nchoosek = Concept.objects.get(slug="nchoosek")
    experiment = NeuralExperiment.objects.create(concepts=["nchoosek"], schemes=["down-sampling"], rounds=1, status="done")
    problem_held = bank["unlabelled"]
    held_out_set(problem_ids=[problem_held.pk], held_out=True, user=hana)
    rows = {  # problem: (predicted, in_labels, in_rules)
        bank["seen"]: (False, True, True),  # disagrees with the labels and the rules: listed
        bank["fresh"]: (True, True, False),  # held out: the rules miss it
        bank["wrong"]: (False, False, True),  # held out: the rules' false match
        problem_held: (True, None, True),  # held out and unlabelled: a suggestion to label it by
    }
    for problem, (predicted, in_labels, in_rules) in rows.items():
        NeuralSuggestion.objects.create(experiment=experiment, problem=problem, concept=nchoosek, scheme="down-sampling",
                                        probability=0.9, predicted=predicted, in_labels=in_labels, in_rules=in_rules)
    lists = selectors.neural_suggestion_lists(experiment)
    assert [s.problem_id for s in lists["disagree"]] == [bank["seen"].pk] and lists["disagree_count"] == 1
    assert lists["unlabelled"] == [] and lists["unlabelled_count"] == 0
    client.force_login(hana)
    page = client.get(reverse("concepts:neural", args=[experiment.pk])).content.decode()
    for key in ("fresh", "wrong", "unlabelled"):
        assert reverse("concepts:label", args=[bank[key].pk]) + "?" not in page
    assert reverse("concepts:label", args=[bank["seen"].pk]) + "?queue=neural" in page


def test_an_ordinary_reports_drilldown_says_its_held_out_misses_are_counted_and_not_listed(
    client: Any, hana: Any, bank: dict[str, Any]
) -> None:
    """The report's nchoosek FN (1: "fresh") links to a list that shows none: the page says why."""
    from concepts.models import ExtractorReport
    from concepts.services import extractor_report_compute

    report = ExtractorReport.objects.create(created_by=hana)
    extractor_report_compute(report_id=report.pk)
    assert ExtractorReport.objects.get().concepts["nchoosek"]["fn"] == 1
    client.force_login(hana)
    page = client.get(reverse("concepts:report-drilldown", args=[report.pk, "nchoosek", "fn"])).content.decode()
    listed = page.split('id="drilldown-problems"')[1].split("</ol>")[0]
    assert "None under the current rules." in listed
    assert 'id="drilldown-held-out"' in page and "the 3 labelled problems" in page
