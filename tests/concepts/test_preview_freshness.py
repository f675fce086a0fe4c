"""The live rule preview's figures after the bank's labels change in another tab, since stop 47 keeps
the labels with the bank's texts (concepts.selectors.BankTexts.truth_by_concept), per bank version."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> dict[str, Any]:
    concept_factory("sample-mean", name="Sample mean", module="descriptive")
    concept_factory("dice", module="descriptive")
    return {
        "found": problem_factory("Find the sample mean of 3, 5, 7.", title="Found", module="descriptive", labels=["sample-mean"]),
        "avg1": problem_factory("Compute the average of the data 2, 4, 9.", title="Avg1", module="descriptive", labels=["sample-mean"]),
        "die": problem_factory("Roll a die twice; the sample mean of the faces?", title="DiceMean", module="descriptive", labels=["dice"]),
    }


def preview(client: Any, pattern: str) -> str:
    return client.post(reverse("concepts:rule-preview"), {"concept": "sample-mean", "pattern": pattern, "ignore_case": "on"}).content.decode()


def _admin(client: Any) -> Any:
    from django.contrib.auth.models import User

    staff = type(client)()
    staff.force_login(User.objects.create_superuser("root", password="password-123"))
    return staff


def test_a_label_changed_in_the_admin_counts_in_the_next_preview(client: Any, alice: Any, bank: Any) -> None:
    """The admin's change form of a label (another tab): the preview after it judges by the labels as they
    are, not as the bank's kept labels were (an edit in place kept the labels' count and highest id)."""
    from concepts.models import Concept, GroundTruthLabel

    client.force_login(alice)
    body = preview(client, r"\bsample mean\b")
    assert 'id="fn-count">FN 1<' in body and 'id="fp-count">FP 1<' in body  # Avg1 missed, DiceMean wrong
    label = GroundTruthLabel.objects.get(problem=bank["die"])
    response = _admin(client).post(
        reverse("admin:concepts_groundtruthlabel_change", args=[label.pk]),
        {"problem": bank["die"].pk, "concept": Concept.objects.get(slug="sample-mean").pk, "created_by": ""},
    )
    assert response.status_code == 302
    right = GroundTruthLabel.objects.filter(problem=bank["die"], concept__slug="sample-mean").exists()
    body = preview(client, r"\bsample mean\b")
    assert f'id="fp-count">FP {0 if right else 1}<' in body and f'<span class="pill">TP {2 if right else 1}</span>' in body


def test_a_held_out_problem_changed_in_the_admin_counts_in_the_next_preview(client: Any, alice: Any, bank: Any) -> None:
    from concepts.models import HeldOutProblem

    client.force_login(alice)
    held = HeldOutProblem.objects.create(problem=bank["avg1"])
    body = preview(client, r"\bsample mean\b")
    assert 'id="fn-count">FN 0<' in body and 'id="fp-count">FP 1<' in body  # Avg1 held out: unlabelled here
    response = _admin(client).post(
        reverse("admin:concepts_heldoutproblem_change", args=[held.pk]), {"problem": bank["die"].pk, "marked_by": ""}
    )
    assert response.status_code == 302
    avg1_held = HeldOutProblem.objects.filter(problem=bank["avg1"]).exists()
    body = preview(client, r"\bsample mean\b")
    assert f'id="fn-count">FN {0 if avg1_held else 1}<' in body and f'id="fp-count">FP {1 if avg1_held else 0}<' in body
