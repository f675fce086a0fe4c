"""The practice bank in process memory against a changing course: a recommendation is read through the
bank it was computed from, and module renames and open/close swaps reach practice at the next recheck."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from practice.models import Attempt
from practice.selectors import class_progress, next_problem_for, practice_bank
from practice.services import attempt_record
from problems.models import Module
from tests.practice.course import COUNTING
from tests.practice.test_practice_api import token_client


def remember_the_bank(settings: Any) -> None:
    """As in production between two rechecks: the process keeps the bank it has read (no recheck, no count)."""
    practice_bank()
    settings.PRACTICE_BANK_RECHECK_SECONDS = settings.PRACTICE_BANK_COUNT_SECONDS = 3600


# --- a recommendation and the bank it came from ------------------------------------------------------


@pytest.mark.django_db
def test_because_of_names_the_failed_problem_when_the_offered_one_was_deleted(settings: Any, sam: Any, course: dict[str, Any]) -> None:
    """The problem the remembered bank recommends is gone: the bank is read again and the recommendation
    comes from the new one. Its rows (`because_of`) are rows of that bank: read through the bank remembered
    before, the row of "Count two" would name the deleted "Count one"."""
    attempt_record(student=sam, problem=course["count2"], answer="7")  # wrong
    remember_the_bank(settings)
    offered, rec = next_problem_for(sam)
    assert offered == course["count1"] and rec.kind == "retry-similar"
    deleted = offered.pk
    offered.delete()  # the remembered bank still holds it, before "Count two"

    body = token_client(sam).get(f"/api/students/{sam.pk}/next").json()
    assert body["problem"]["id"] not in (deleted, course["count2"].pk)
    assert body["because_of"] == course["count2"].pk and "“Count two”" in body["reason"]
    assert deleted not in practice_bank().row  # the bank was read again


@pytest.mark.django_db
def test_an_attempt_on_a_problem_added_since_the_bank_was_read_is_answered_with_its_next_problem(
    settings: Any, sam: Any, course: dict[str, Any], problem_factory: Any
) -> None:
    """Problems added and one deleted while a process keeps its bank: the attempt's reply names the
    attempted problem, whose row exists only in the bank read again (never an IndexError, a 500 after the
    attempt is stored)."""
    remember_the_bank(settings)
    first, _ = next_problem_for(sam)
    problem_factory("Choose 4 of 7.", title="Count three", labels=COUNTING, answer="35")
    added = problem_factory("Choose 5 of 8.", title="Count four", labels=COUNTING, answer="56")
    call_command("rebuild_embeddings", "--method", "prob2vec", stdout=io.StringIO())  # unseen by the remembered bank too
    first.delete()

    reply = token_client(sam).post("/api/attempts", {"problem": added.pk, "answer": "7"}, format="json")
    assert reply.status_code == 201 and Attempt.objects.get().problem_id == added.pk
    after = reply.json()["next"]
    assert after["because_of"] == added.pk and after["kind"] == "retry-similar" and "“Count four”" in after["reason"]
    assert after["problem"]["id"] not in (first.pk, added.pk)
    assert after["embedding_run"] == practice_bank().run_id


# --- module changes ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_renamed_module_keeps_its_class_progress_column(client: Any, alice: Any, sam: Any, course: dict[str, Any]) -> None:
    attempt_record(student=sam, problem=course["count2"], answer="20")  # right
    assert class_progress().students[0].modules["counting"] > 0.5
    Module.objects.filter(name="counting").update(name="combinatorics")  # no problem row changes

    progress = class_progress()
    assert [m.name for m in progress.modules] == ["bayes", "combinatorics"]
    assert progress.students[0].modules["combinatorics"] > 0.5 and progress.class_modules["combinatorics"] > 0.5
    client.force_login(alice)
    html = client.get(reverse("practice:practice-class")).content.decode()
    row = html.split(">sam</a>")[1].split("</tr>")[0]
    counting_cell = row.split('<td class="heat"')[2].split(">")[1].split("<")[0]
    assert counting_cell.isdigit() and int(counting_cell) > 50  # not the blank "·"


@pytest.mark.django_db
def test_a_renamed_concept_is_named_by_its_new_name_in_the_next_reason(sam: Any, course: dict[str, Any]) -> None:
    """A rename changes no problem or label row: the bank read before it named the old name for good."""
    from concepts.models import Concept

    attempt_record(student=sam, problem=course["count2"], answer="20")  # right: binomial comes next
    assert "Binomial distribution" in next_problem_for(sam)[1].reason
    Concept.objects.filter(slug="binomial-distribution").update(name="Binomial law")
    assert "adds Binomial law" in next_problem_for(sam)[1].reason


@pytest.mark.django_db
def test_closing_one_module_and_opening_another_changes_what_is_offered(sam: Any, course: dict[str, Any]) -> None:
    """The same number of open modules and the same highest module id as before: still a change."""
    api = token_client(sam)
    assert api.get(f"/api/students/{sam.pk}/next").json()["problem"]["module"] == "counting"
    Module.objects.filter(name="counting").update(open_for_practice=False)
    Module.objects.filter(name="later").update(open_for_practice=True)

    practice = practice_bank()
    assert not practice.open_mask[practice.row[course["count1"].pk]] and practice.open_mask[practice.row[course["closed"].pk]]
    offered = set()
    for key in range(4):
        body = api.get(f"/api/students/{sam.pk}/next").json()
        assert body["problem"]["module"] in ("bayes", "later")
        offered.add(body["problem"]["id"])
        api.post("/api/attempts", {"problem": body["problem"]["id"], "skip": True, "client_key": f"k{key}"}, format="json")
    assert offered == {course["bayes"].pk, course["closed"].pk}


# --- the concepts of problems nobody labelled -------------------------------------------------------


@pytest.mark.django_db
def test_with_an_embedding_on_rule_concepts_an_unlabelled_problem_has_the_concepts_its_rules_found(
    sam: Any, course: dict[str, Any], problem_factory: Any
) -> None:
    """A book just imported has hundreds of problems nobody labelled. With the active embedding on rule
    concepts, practice knows them by the concepts that run found, not as problems with no concept (a
    first problem, a mastery, a reason: none had anything to go on). Labelled problems keep their labels."""
    from concepts.models import Concept
    from concepts.services import rule_save

    imported = problem_factory("Two dice are rolled; find the chance of a double, by Bayes' rule.", title="Imported")
    rule_save(concept=Concept.objects.get(slug="Bayes-formula"), pattern=r"bayes|choose 2")  # and the labelled "Count one"
    call_command("extract_concepts", stdout=io.StringIO())
    practice = practice_bank()
    assert practice.bank.concepts[practice.row[imported.pk]] == frozenset()  # the active run is on the labels

    call_command("rebuild_embeddings", "--method", "prob2vec", "--source", "rules", "--activate", stdout=io.StringIO())
    practice = practice_bank()
    slugs = practice.concept_slugs
    assert {slugs[c] for c in practice.bank.concepts[practice.row[imported.pk]]} == {"Bayes-formula"}
    assert {slugs[c] for c in practice.bank.concepts[practice.row[course["count1"].pk]]} == {"nchoosek"}  # its labels
