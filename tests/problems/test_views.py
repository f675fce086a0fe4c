from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from concepts.models import GroundTruthLabel
from problems.models import Problem


@pytest.fixture
def bank(problem_factory: Any) -> dict[str, Problem]:
    return {
        "binom": problem_factory(
            "Choose a committee: $\\binom{10}{3}$ ways.", title="Committee", labels=["nchoosek", "counting-principle"]
        ),
        "perm": problem_factory("Arrange letters of WORD.", title="Arrangements", labels=["permutations"]),
        "bayes": problem_factory(
            "A test for a disease; find $P(D \\mid +)$ by Bayes.",
            title="Disease test",
            module="conditional probability",
            labels=["Bayes-formula", "nchoosek"],
        ),
        "draft": problem_factory("Secret draft about dice.", title="Draft dice", released=False, labels=["nchoosek"]),
    }


def titles(response: Any) -> set[str]:
    content = response.content.decode()
    return {t for t in ["Committee", "Arrangements", "Disease test", "Draft dice"] if f">{t}</a>" in content}


def test_anonymous_users_go_to_login(client: Any, bank: Any) -> None:
    for url in [reverse("problems:list"), reverse("problems:detail", args=[bank["binom"].pk]), reverse("home")]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_students_see_only_released_problems_and_no_staff_data(client: Any, sam: Any, bank: Any) -> None:
    client.force_login(sam)
    assert titles(client.get(reverse("problems:list"))) == {"Committee", "Arrangements", "Disease test"}
    assert client.get(reverse("problems:detail", args=[bank["draft"].pk])).status_code == 404
    page = client.get(reverse("problems:detail", args=[bank["binom"].pk])).content.decode()
    assert "Committee" in page and "nchoosek" not in page and "For course staff" not in page
    assert client.get(reverse("problems:list"), {"released": "no"}).status_code == 200
    assert "Draft dice" not in client.get(reverse("problems:list"), {"released": "no"}).content.decode()


@pytest.mark.parametrize("name", ["problems:create", "problems:import", "problems:export"])
def test_students_cannot_reach_staff_pages(client: Any, sam: Any, name: str) -> None:
    client.force_login(sam)
    assert client.get(reverse(name)).status_code in (302, 403)


def test_students_cannot_edit_or_delete(client: Any, sam: Any, bank: Any) -> None:
    client.force_login(sam)
    pk = bank["binom"].pk
    for name in ["problems:edit", "problems:delete"]:
        response = client.post(reverse(name, args=[pk]), {"title": "hacked", "text": "x"})
        assert response.status_code in (302, 403)
    assert Problem.objects.get(pk=pk).title == "Committee"


def test_tas_see_drafts_and_labels(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    assert titles(client.get(reverse("problems:list"))) == {"Committee", "Arrangements", "Disease test", "Draft dice"}
    page = client.get(reverse("problems:detail", args=[bank["draft"].pk])).content.decode()
    assert "nchoosek" in page and "not released" in page


def test_tas_create_edit_and_delete_problems(client: Any, alice: Any, concept_factory: Any, module_factory: Any) -> None:
    client.force_login(alice)
    concept_factory("nchoosek")
    module = module_factory("counting")
    response = client.post(
        reverse("problems:create"),
        {"text": "How many 5-card hands? $\\binom{52}{5}$.", "module": module.pk, "labels": ["nchoosek"], "released": "on"},
    )
    problem = Problem.objects.get()
    assert response.status_code == 302 and response.url == reverse("problems:detail", args=[problem.pk])
    assert problem.author == alice and problem.title.startswith("How many 5-card hands?") and problem.source_id
    assert list(problem.ground_truth_labels.values_list("concept__slug", flat=True)) == ["nchoosek"]
    client.post(
        reverse("problems:edit", args=[problem.pk]),
        {"title": "Poker hands", "text": problem.text, "module": module.pk, "labels": [], "collection": "course",
         "source_id": problem.source_id},
    )
    problem.refresh_from_db()
    assert problem.title == "Poker hands" and not problem.released and not problem.ground_truth_labels.exists()
    client.post(reverse("problems:delete", args=[problem.pk]))
    assert not Problem.objects.exists()


def test_editing_keeps_the_collection_and_id_the_import_finds_a_problem_by(
    client: Any, alice: Any, problem_factory: Any
) -> None:
    """Blanking them on edit saved an empty collection and id (the export then wrote a record its own
    import rejects, "missing id"), and a second problem blanked so was a 500 (IntegrityError)."""
    first, second = problem_factory("Roll a die.", title="Die"), problem_factory("Toss a coin.", title="Coin")
    client.force_login(alice)
    for problem in (first, second):
        response = client.post(
            reverse("problems:edit", args=[problem.pk]), {"title": "", "text": problem.text, "collection": "", "source_id": ""}
        )
        assert response.status_code == 200
        assert response.context["form"].errors.keys() == {"collection", "source_id"}
        saved = Problem.objects.get(pk=problem.pk)
        assert (saved.collection, saved.source_id) == (problem.collection, problem.source_id)


def test_the_delete_page_says_what_goes_with_the_problem(client: Any, alice: Any, sam: Any, problem_factory: Any) -> None:
    """It said "with its labels", and deleting also took the accepted triplets that name the problem
    (expert judgements, with their votes) and the students' attempts."""
    from embeddings.models import SimilarityTriplet, TripletVote
    from practice.models import Attempt

    anchor = problem_factory("Choose 2 of 5.", title="Count", labels=["nchoosek"])
    positive, negative = problem_factory("Choose 3 of 7."), problem_factory("Roll a die.")
    triplet = SimilarityTriplet.objects.create(anchor=anchor, positive=positive, negative=negative, status="accepted")
    TripletVote.objects.create(triplet=triplet, voter=alice, choice="positive")
    Attempt.objects.create(student=sam, problem=anchor, verdict="correct", outcome=1.0)
    client.force_login(alice)
    page = client.get(reverse("problems:delete", args=[anchor.pk])).content.decode()
    assert "It also deletes: " in page
    for what in ["1 ground truth label", "1 similarity triplet", "1 triplet vote", "1 attempt"]:
        assert what in page
    lonely = problem_factory("Toss a coin.")  # nothing points at it: nothing more to say
    assert "It also deletes" not in client.get(reverse("problems:delete", args=[lonely.pk])).content.decode()


def test_search_finds_words_and_ids(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    assert titles(client.get(reverse("problems:list"), {"q": "committee"})) == {"Committee"}
    assert titles(client.get(reverse("problems:list"), {"q": "disease"})) == {"Disease test"}
    assert titles(client.get(reverse("problems:list"), {"q": bank["perm"].source_id})) == {"Arrangements"}
    assert titles(client.get(reverse("problems:list"), {"q": "zebra"})) == set()


def test_filters_by_module_and_concepts_all_or_any(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    url = reverse("problems:list")
    module = bank["bayes"].module.pk
    assert titles(client.get(url, {"module": module})) == {"Disease test"}
    assert titles(client.get(url, {"concepts": ["nchoosek", "Bayes-formula"], "match": "all"})) == {"Disease test"}
    assert titles(client.get(url, {"concepts": ["permutations", "Bayes-formula"], "match": "any"})) == {
        "Arrangements",
        "Disease test",
    }
    assert titles(client.get(url, {"concepts": ["nchoosek"], "released": "yes"})) == {"Committee", "Disease test"}


def test_sorting_and_pagination(client: Any, alice: Any, problem_factory: Any) -> None:
    for i in range(30):
        problem_factory(title=f"T{i:02d}")
    client.force_login(alice)
    page1 = client.get(reverse("problems:list"), {"sort": "title"}).content.decode()
    assert "T00" in page1 and "T24" in page1 and "T25" not in page1 and "Page 1 of 2" in page1
    page2 = client.get(reverse("problems:list"), {"sort": "title", "page": 2}).content.decode()
    assert "T25" in page2 and "T00" not in page2


def test_htmx_requests_get_only_the_results_fragment(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    response = client.get(
        reverse("problems:list"), {"q": "committee"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="problem-results"
    )
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="problem-results">') and "<html" not in body and "Committee" in body


def test_problem_text_is_escaped_and_math_left_for_katex(client: Any, alice: Any, problem_factory: Any) -> None:
    p = problem_factory("Evil <script>alert(1)</script> and $x<y$\n\n\\begin{tabular}{cc} a & b \\\\ c & d \\end{tabular}")
    client.force_login(alice)
    body = client.get(reverse("problems:detail", args=[p.pk])).content.decode()
    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)" in body
    assert "$x&lt;y$" in body and '<table class="latex-table"><tr><td>a</td><td>b</td></tr>' in body


def test_upload_page_imports_and_reports(client: Any, alice: Any, concept_factory: Any) -> None:
    concept_factory("nchoosek")
    client.force_login(alice)
    data = b'{"id": "u1", "text": "Choose $\\\\binom{4}{2}$", "labels": ["nchoosek", "nope"]}\n'
    response = client.post(
        reverse("problems:import"),
        {"file": SimpleUploadedFile("week1.jsonl", data), "release": "on"},
    )
    body = response.content.decode()
    assert "1 created" in body and "nope (1)" in body
    assert "new module" not in body  # the problem names no module
    # Where to start labelling the new collection: its queues, "No rule matches" first.
    steps = body[body.index('id="label-next-steps"'):]
    assert f'href="{reverse("concepts:label-home")}?collection=week1">week1</a>' in steps and "No rule matches" in steps
    p = Problem.objects.get()
    assert p.collection == "week1" and p.released and p.author == alice


def test_upload_page_lists_a_book_s_new_modules_folded_and_in_its_order(client: Any, alice: Any) -> None:
    client.force_login(alice)
    names = ["1.1 Terminology", "2.1 Histograms", "10.1 Two means"]
    data = "".join(f'{{"id": "{i}", "text": "Problem {i}.", "module": "{name}"}}\n' for i, name in enumerate(names)).encode()
    body = client.post(reverse("problems:import"), {"file": SimpleUploadedFile("book.jsonl", data)}).content.decode()
    start = body.index('<details id="new-modules">')
    folded = body[start : body.index("</details>", start)]
    assert "3 new modules, added to the syllabus after the others" in folded
    assert "".join(f"<li>{name}</li>" for name in names) in folded


def test_upload_page_says_when_many_texts_wait_for_the_sentence_model(client: Any, alice: Any, monkeypatch: Any, settings: Any) -> None:
    import embeddings.services

    monkeypatch.setattr(embeddings.services, "TEXT_VECTOR_HINT_AT", 2)
    client.force_login(alice)
    data = b'{"id": "u1", "text": "Roll two dice."}\n{"id": "u2", "text": "Toss a coin."}\n'
    body = client.post(reverse("problems:import"), {"file": SimpleUploadedFile("w.jsonl", data)}).content.decode()
    assert 'id="text-vectors-hint"' in body and "2 problems have no cached sentence vector yet" in body
    assert "manage.py encode_text_vectors" in body
    settings.EMBEDDING_FALLBACK_TEXT = "lsa"  # the LSA needs no encoding: nothing to say
    body = client.post(reverse("problems:import"), {"file": SimpleUploadedFile("w.jsonl", data)}).content.decode()
    assert "2 unchanged" in body and 'id="text-vectors-hint"' not in body


def test_upload_page_lists_bad_lines_and_imports_nothing(client: Any, alice: Any) -> None:
    client.force_login(alice)
    data = b'{"id": "u1", "text": "fine"}\n{"id": "u2"}\n\xff\xfe\n'
    body = client.post(reverse("problems:import"), {"file": SimpleUploadedFile("w.jsonl", data)}).content.decode()
    assert "Nothing was imported" in body and "line 2: missing &#x27;text&#x27;" in body and "line 3: not UTF-8" in body
    assert not Problem.objects.exists()


def test_upload_page_reports_a_file_name_too_long_for_a_collection_and_ids_repeated_in_one(client: Any, alice: Any) -> None:
    client.force_login(alice)
    data = b'{"id": "u1", "text": "fine"}\n'
    response = client.post(reverse("problems:import"), {"file": SimpleUploadedFile("w" * 101 + ".jsonl", data)})
    body = response.content.decode()
    assert response.status_code == 200 and "Nothing was imported" in body
    assert "line 1: the collection named after the file" in body and "longer than 100 characters" in body
    data = b'{"id": "1", "text": "First.", "collection": "A"}\n{"id": "1", "text": "Second.", "collection": "B"}\n'
    body = client.post(reverse("problems:import"), {"file": SimpleUploadedFile("w.jsonl", data), "collection": "X"}).content.decode()
    assert "Nothing was imported" in body and "line 2: duplicate id &#x27;1&#x27; (first on line 1)" in body
    assert not Problem.objects.exists()


def test_upload_refuses_oversized_files(client: Any, alice: Any, settings: Any) -> None:
    settings.PROBLEM_IMPORT_MAX_BYTES = 100
    client.force_login(alice)
    body = client.post(
        reverse("problems:import"), {"file": SimpleUploadedFile("w.jsonl", b"x" * 200)}
    ).content.decode()
    assert "the limit is 100 bytes" in body


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_of_a_filtered_list_imports_back_to_the_same_bank(
    client: Any, alice: Any, bank: Any, fmt: str, tmp_path: Any
) -> None:
    from django.core.management import call_command

    client.force_login(alice)
    response = client.get(reverse("problems:export"), {"concepts": ["nchoosek"], "format": fmt})
    exported = b"".join(response.streaming_content)
    assert response["Content-Disposition"] == f'attachment; filename="problems.{fmt}"'

    def snapshot() -> list[tuple[Any, ...]]:
        rows = []
        for p in Problem.objects.filter(ground_truth_labels__concept__slug="nchoosek").order_by("source_id"):
            labels = sorted(p.ground_truth_labels.values_list("concept__slug", flat=True))
            rows.append((p.collection, p.source_id, p.title, p.text, p.module.name, p.released, p.answer, tuple(labels)))
        return rows

    before = snapshot()
    assert len(before) == 3
    Problem.objects.all().delete()
    path = tmp_path / f"export.{fmt}"
    path.write_bytes(exported)
    call_command("import_problems", str(path), stdout=io.StringIO())
    assert snapshot() == before


def test_the_api_lists_visible_problems_only(client: Any, sam: Any, alice: Any, bank: Any) -> None:
    client.force_login(sam)
    data = client.get(reverse("api-problem-list")).json()
    assert data["count"] == 3 and "labels" not in client.get(reverse("api-problem-detail", args=[bank["binom"].pk])).json()
    assert client.get(reverse("api-problem-detail", args=[bank["draft"].pk])).status_code == 404
    client.force_login(alice)
    detail = client.get(reverse("api-problem-detail", args=[bank["binom"].pk])).json()
    assert sorted(detail["labels"]) == ["counting-principle", "nchoosek"]
    assert json.loads(json.dumps(client.get(reverse("api-problem-list"), {"q": "committee"}).json()))["count"] == 1
    assert GroundTruthLabel.objects.count() == 6


def test_the_default_sort_follows_module_order_even_after_it_changes(
    client: Any, alice: Any, problem_factory: Any, module_factory: Any
) -> None:
    late = module_factory("late module", 20)
    module_factory("early module", 3)
    problem_factory(title="In late", module="late module")
    problem_factory(title="In early", module="early module")
    problem_factory(title="No module", module="unset").__class__.objects.filter(title="No module").update(module=None)
    client.force_login(alice)

    def order() -> list[str]:
        body = client.get(reverse("problems:list")).content.decode()
        return sorted(["In late", "In early", "No module"], key=lambda t: body.index(f">{t}</a>"))

    assert order() == ["In early", "In late", "No module"]
    late.order = 1
    late.save()
    assert order() == ["In late", "In early", "No module"]


def test_the_filter_form_keeps_the_chosen_modules_and_concepts(client: Any, alice: Any, bank: Any) -> None:
    from problems.models import Module

    client.force_login(alice)
    counting = Module.objects.get(name="counting")
    body = client.get(f"/problems/?module={counting.pk}&concepts=nchoosek&concepts=permutations").content.decode()
    assert f'<option value="{counting.pk}" selected>counting</option>' in body
    assert '<option value="nchoosek" selected>nchoosek</option>' in body
    assert '<option value="permutations" selected>permutations</option>' in body
    assert '<option value="Bayes-formula">Bayes-formula</option>' in body
    assert 'selected>conditional probability' not in body


def test_a_search_longer_than_200_characters_says_so_in_place_of_the_list(client: Any, alice: Any, problem_factory: Any) -> None:
    problem_factory("Choose 2 of 5.", title="Committee")
    client.force_login(alice)
    long = "x" * 250
    for headers in ({}, {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "problem-results"}):
        page = client.get("/problems/", {"q": long}, **headers).content.decode()
        assert 'id="filter-errors"' in page and "at most 200 characters (it has 250)" in page
        assert "Committee" not in page and "problem-link" not in page  # nothing listed, not everything
    # The fragment htmx swaps in carries the error: it shows where the list was.
    fragment = client.get("/problems/", {"q": long}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="problem-results").content.decode()
    assert fragment.lstrip().startswith('<div id="problem-results">')
    export = client.get("/problems/export/", {"q": long, "format": "csv"})
    assert export.status_code == 400 and "at most 200 characters" in export.content.decode()


def test_deleting_a_problem_says_it_deletes_the_students_attempts_on_it(client: Any, alice: Any, make_user: Any, problem_factory: Any) -> None:
    """Attempts go with the problem (students' history and progress): the confirmation says how many,
    and whose, before a TA deletes it; a problem nobody tried says nothing about attempts."""
    from practice.models import Attempt

    tried, untried = problem_factory("Tried.", labels=["nchoosek"]), problem_factory("Untried.")
    for name in ("sam", "sue"):
        student = make_user(name, "student")
        for verdict, outcome in (("incorrect", 0.0), ("correct", 1.0)):
            Attempt.objects.create(student=student, problem=tried, verdict=verdict, outcome=outcome)
    client.force_login(alice)
    page = client.get(reverse("problems:delete", args=[tried.pk])).content.decode()
    assert "4 attempts by 2 students" in page
    assert "attempt" not in client.get(reverse("problems:delete", args=[untried.pk])).content.decode()
    client.post(reverse("problems:delete", args=[tried.pk]))
    assert not Attempt.objects.exists()  # what the page said
