from __future__ import annotations

import io
import json
from collections import Counter
from typing import Any

from django.contrib.auth import authenticate
from django.core.management import call_command

from concepts.models import Concept, GroundTruthLabel
from problems.demo_course import DEMO_USERS, bank_files, read_tsv
from problems.demo_course.check_bank import main as check_bank
from problems.models import Module, Problem


def demo_records() -> list[dict[str, Any]]:
    return [json.loads(raw) for path in bank_files() for raw in path.read_text(encoding="utf-8").splitlines() if raw]


def test_the_bank_files_are_valid() -> None:
    assert check_bank([]) == 0


def test_the_bank_covers_every_module_with_mixed_labelled_problems() -> None:
    records = demo_records()
    modules = {row["module"] for row in read_tsv("modules.tsv")}
    concept_module = {row["slug"]: row["module"] for row in read_tsv("concepts.tsv")}
    per_module = Counter(r["module"] for r in records)
    assert len(records) >= 260
    assert set(per_module) == modules and min(per_module.values()) >= 8
    assert all(r["labels"] for r in records)
    mixing = [r for r in records if any(concept_module[s] != r["module"] for s in r["labels"])]
    assert len(mixing) >= len(records) // 3
    assert len({r["text"] for r in records}) == len(records)


def test_load_demo_loads_everything_once(demo_course: None, settings: Any) -> None:
    assert Module.objects.count() == 26 and Concept.objects.count() == 130
    assert Problem.objects.filter(collection="demo", released=True).count() == len(demo_records())
    labels = GroundTruthLabel.objects.count()
    assert labels == sum(len(r["labels"]) for r in demo_records())
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "0 created, 0 updated" in out.getvalue()
    assert GroundTruthLabel.objects.count() == labels
    for username, password, role in DEMO_USERS:
        user = authenticate(username=username, password=password)
        assert user is not None and user.groups.get().name == role


def test_demo_logins_are_not_created_with_debug_off(db: Any, settings: Any) -> None:
    settings.DEBUG = False
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "Demo logins not created: DEBUG is off" in out.getvalue()
    assert authenticate(username="student", password="demo-student") is None


def test_the_demo_has_judged_triplets_within_modules_and_two_annotators(demo_course: None) -> None:
    from concepts.models import LabelSet
    from embeddings.models import SimilarityTriplet, TripletVote

    triplets = list(SimilarityTriplet.objects.select_related("anchor", "positive", "negative"))
    assert len(triplets) >= 80
    assert SimilarityTriplet.objects.filter(status="accepted").count() >= 64
    assert all(t.anchor.module_id == t.positive.module_id == t.negative.module_id == t.module_id for t in triplets)
    judged = {t for t in TripletVote.objects.values_list("triplet_id", flat=True)}
    assert judged == {t.pk for t in triplets}
    assert all(v.voter_id != v.triplet.proposed_by_id for v in TripletVote.objects.select_related("triplet"))
    assert LabelSet.objects.filter(annotator__username="ta2").count() == 80
    assert LabelSet.objects.filter(annotator__username="ta").count() == len(demo_records())
    from concepts.models import SelectedWord

    assert SelectedWord.objects.filter(selected_by__username="ta").count() == 240


def test_the_demo_class_has_practised_once(demo_course: None) -> None:
    from practice.selectors import class_progress
    from practice.models import Attempt

    attempts = Attempt.objects.count()
    assert attempts > 100 and not Attempt.objects.exclude(problem__module__open_for_practice=True).exists()
    call_command("load_demo", stdout=io.StringIO())
    assert Attempt.objects.count() == attempts  # never twice
    progress = class_progress()
    names = {s.student.username for s in progress.students}
    assert {f"demo-class-{i:02d}" for i in range(1, 13)} | {"student"} == names
    stuck = [s.student.username for s in progress.stuck]
    assert "demo-class-12" in stuck and len(stuck) < 6  # the one who never solves, and a few weaker ones
    assert progress.failed_problems and progress.class_concepts


def test_loading_the_demo_again_keeps_a_rule_a_ta_edited_since(demo_course: None, make_user: Any) -> None:
    # `make run` runs load_demo at every start: a TA's rule edit made the next start save the demo rule
    # back over it as a new version (README, "The starter rules": loading again makes no new versions).
    from concepts.models import ConceptRule
    from concepts.services import rule_save

    ta = make_user("tara", "ta")
    edited = ConceptRule.objects.select_related("concept").order_by("concept__slug")[0]
    rule_save(concept=edited.concept, pattern=edited.pattern + "|\\bzzqq\\b", statement_pattern=edited.statement_pattern,
              ignore_case=edited.ignore_case, enabled=edited.enabled, user=ta, message="a TA's branch", base_version=edited.version)
    switched_off = ConceptRule.objects.select_related("concept").order_by("concept__slug")[1]
    rule_save(concept=switched_off.concept, pattern=switched_off.pattern, statement_pattern=switched_off.statement_pattern,
              ignore_case=switched_off.ignore_case, enabled=False, user=ta, message="off for now", base_version=switched_off.version)
    versions = dict(ConceptRule.objects.values_list("concept__slug", "version"))
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert dict(ConceptRule.objects.values_list("concept__slug", "version")) == versions
    assert ConceptRule.objects.get(pk=edited.pk).pattern.endswith("|\\bzzqq\\b")
    assert not ConceptRule.objects.get(pk=switched_off.pk).enabled
    assert "0 created or changed" in out.getvalue()
