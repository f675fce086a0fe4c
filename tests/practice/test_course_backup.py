"""Backup and restore: export_course / import_course carry the whole course (the demo course, with
extraction runs, a report, embedding runs, a neural experiment and its suggestions) and nothing
is written when a file or the target database is wrong."""

from __future__ import annotations

import copy
import gzip
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from concepts.models import ConceptRuleVersion, LabelResolution, LabelSet
from practice.backup import COURSE_MODELS, FORMAT, NOT_BACKED_UP, course_export
from embeddings.models import ActiveEmbedding, EmbeddingRun
from embeddings.selectors import accepted_triplets, active_run, run_arrays, triplet_table
from practice.selectors import next_problem_for
from problems.models import Problem
from practice.models import Attempt

METHODS = "prob2vec,onehot,svd"


def quiet() -> dict[str, io.StringIO]:
    return {"stdout": io.StringIO(), "stderr": io.StringIO()}


def table_counts() -> dict[str, int]:
    User = get_user_model()
    through = [LabelSet.concepts.through, LabelResolution.concepts.through, User.groups.through, User.user_permissions.through]
    return {m._meta.label: m.objects.count() for m in (*COURSE_MODELS, User, *through)}


def wipe_everything() -> None:
    """An empty course and no users, as on a fresh `migrate` (which makes the role groups)."""
    ActiveEmbedding.objects.all().delete()
    for model in COURSE_MODELS:
        model.objects.all().delete()
    get_user_model().objects.all().delete()


def rule_history() -> list[tuple[Any, ...]]:
    rows = ConceptRuleVersion.objects.order_by("rule__concept__slug", "number").values_list(
        "rule__concept__slug", "number", "pattern", "ignore_case", "enabled", "message", "author__username", "created_at"
    )
    return list(rows)


def report_json() -> dict[str, Any]:
    out = io.StringIO()
    call_command("extractor_report", "--json", stdout=out)
    return json.loads(out.getvalue())


def evaluate_json() -> dict[str, Any]:
    out = io.StringIO()
    call_command("evaluate_triplets", "--methods", METHODS, "--json", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


def attempts() -> list[tuple[Any, ...]]:
    return list(Attempt.objects.order_by("id").values_list(
        "student__username", "problem__collection", "problem__source_id", "verdict", "outcome", "answer", "recommended_because", "created_at"
    ))


def active_vectors() -> tuple[int, list[tuple[str, str]], np.ndarray]:
    run = active_run()
    assert run is not None
    ids, vectors = run_arrays(run)
    keys = dict((pid, (c, s)) for pid, c, s in Problem.objects.values_list("id", "collection", "source_id"))
    return run.dim, [keys[int(pid)] for pid in ids], vectors.copy()


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """An export without what a restore may change: the time, the jobs' file keys (old ids), fingerprints."""
    data = copy.deepcopy(data)
    data.pop("exported_at")
    renumber: dict[str, dict[Any, int]] = {}
    for kind in ("extraction_runs", "extractor_reports", "embedding_runs", "neural_experiments"):
        renumber[kind] = {r["key"]: i for i, r in enumerate(data[kind])}
        for r in data[kind]:
            r["key"] = renumber[kind][r["key"]]
            r.pop("fingerprint", None)
    for r in data["embedding_runs"]:
        if r["extraction_run"] is not None:
            r["extraction_run"] = renumber["extraction_runs"][r["extraction_run"]]
    for r in data["extraction_runs"]:
        if r["rules_run"] is not None:  # a hybrid run names the rules run it adds to
            r["rules_run"] = renumber["extraction_runs"][r["rules_run"]]
    if data["active_embedding"]:
        data["active_embedding"]["run"] = renumber["embedding_runs"][data["active_embedding"]["run"]]
    return data


@pytest.fixture
def demo_with_runs(demo_course: None) -> None:
    """The demo course with everything a course accumulates: a head TA's resolution, three problems held
    out from rule writing, an extraction
    run, a report, embedding runs of both sources, and a neural experiment with suggestions (rows
    written here: training one takes longer than everything else in this file)."""
    from concepts.models import Concept, NeuralExperiment, NeuralSuggestion
    from concepts.services import labels_resolve

    disputed = LabelSet.objects.filter(annotator__username="ta2").order_by("problem__source_id").first()
    assert disputed is not None
    labels_resolve(problem=disputed.problem, concepts=list(disputed.concepts.all()), user=get_user_model().objects.get(username="headta"))
    from concepts.services import held_out_set

    held_out_set(problem_ids=list(Problem.objects.order_by("-id").values_list("id", flat=True)[:3]), held_out=True,
                 user=get_user_model().objects.get(username="headta"))
    call_command("extract_concepts", **quiet())
    report_json()
    evaluate_json()
    experiment = NeuralExperiment.objects.create(
        concepts=["nchoosek"], schemes=["down-sampling"], rounds=1, params={"epochs": 5}, status="done", progress=1.0,
        results={"rounds": 1, "best": {"nchoosek": "down-sampling"}, "schemes": {"down-sampling": {"fn": 0.5, "fp": 0.25}}},
    )
    nchoosek = Concept.objects.get(slug="nchoosek")
    NeuralSuggestion.objects.bulk_create(
        NeuralSuggestion(experiment=experiment, problem=p, concept=nchoosek, scheme="down-sampling", probability=0.1 * i,
                         predicted=i >= 5, in_labels=None if i == 0 else i % 2 == 0, in_rules=i % 3 == 0)
        for i, p in enumerate(Problem.objects.order_by("id")[:10])
    )


def test_every_model_of_the_course_apps_is_backed_up() -> None:
    models = {m for label in ("problems", "concepts", "embeddings", "practice") for m in apps.get_app_config(label).get_models()}
    assert models == set(COURSE_MODELS) | set(NOT_BACKED_UP)


@pytest.mark.slow
def test_the_demo_course_round_trips(demo_with_runs: None, tmp_path: Path) -> None:
    before_eval = evaluate_json()
    before_report = report_json()
    before_history = rule_history()
    before_table = triplet_table(accepted_triplets())
    before_attempts = attempts()
    before_vectors = active_vectors()
    student = get_user_model().objects.get(username="demo-class-03")
    before_next = next_problem_for(student)
    from embeddings.services import embedding_default_get, embedding_default_set

    embedding_default_set(method="prob2vec", source="labels", user=get_user_model().objects.get(username="headta"))
    before_counts = table_counts()
    before_export = course_export()
    assert before_export["format"] == FORMAT and before_export["counts"]["neural_suggestions"] > 0
    assert all(before_export["counts"][kind] > 0 for kind in before_export["counts"])
    old_ids = set(Problem.objects.values_list("id", flat=True))
    path = tmp_path / "course.json.gz"
    out = io.StringIO()
    call_command("export_course", str(path), stdout=out)
    assert "286 problems" in out.getvalue() and gzip.decompress(path.read_bytes()).startswith(b'{"format":')

    wipe_everything()
    assert Problem.objects.count() == 0 and get_user_model().objects.count() == 0
    out = io.StringIO()
    call_command("import_course", str(path), stdout=out)
    assert "286 problems" in out.getvalue() and "130 concepts" in out.getvalue()

    assert not old_ids & set(Problem.objects.values_list("id", flat=True))  # new ids: only natural keys survived
    assert table_counts() == before_counts
    assert rule_history() == before_history
    assert attempts() == before_attempts
    assert embedding_default_get() == ("prob2vec", "labels")
    dim, keys, vectors = active_vectors()
    assert (dim, keys) == before_vectors[:2] and np.array_equal(vectors, before_vectors[2])
    assert triplet_table(accepted_triplets()) == before_table
    # Every field of every record, timestamps and password hashes included, reads back the same.
    assert comparable(course_export()) == comparable(before_export)
    # The hybrid run still adds to its rules run.
    from concepts.models import ExtractionRun

    hybrid = ExtractionRun.objects.get(source="hybrid")
    assert hybrid.rules_run is not None and hybrid.rules_run.source == "rules"
    # The restored runs are up to date: rebuilding reuses them rather than training again.
    assert evaluate_json() == before_eval
    assert EmbeddingRun.objects.count() == before_counts["embeddings.EmbeddingRun"]
    assert report_json() == before_report
    after_next = next_problem_for(get_user_model().objects.get(username="demo-class-03"))
    assert before_next is not None and after_next is not None
    assert (after_next[0].source_id, after_next[1].kind) == (before_next[0].source_id, before_next[1].kind)
    assert get_user_model().objects.get(username="ta").check_password("demo-ta")
    assert set(get_user_model().objects.get(username="headta").groups.values_list("name", flat=True)) == {"head_ta"}


@pytest.fixture
def small_backup(course: dict[str, Any], alice: Any, tmp_path: Path) -> Path:
    """A backup of the small practice course (a prob2vec run, labels, an attempt) with a rule and a TA."""
    from concepts.models import Concept
    from concepts.services import rule_save
    from practice.services import attempt_record

    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bchoose\b", user=alice, message="first")
    attempt_record(student=alice, problem=course["count1"], answer="10")
    path = tmp_path / "small.json"
    call_command("export_course", str(path), **quiet())
    return path


def test_a_restored_course_says_its_texts_wait_for_the_sentence_model(small_backup: Path, monkeypatch: Any) -> None:
    import embeddings.services

    monkeypatch.setattr(embeddings.services, "TEXT_VECTOR_HINT_AT", 1)  # the backup holds a handful of problems
    out, err = io.StringIO(), io.StringIO()
    call_command("import_course", str(small_backup), "--replace", stdout=out, stderr=err)
    count = Problem.objects.count()
    assert out.getvalue().startswith("Imported the course from ")
    assert f"{count} problems have no cached sentence vector yet" in err.getvalue()  # backups leave the cache out


def test_import_into_a_course_is_refused_and_changes_nothing(small_backup: Path) -> None:
    before = table_counts()
    with pytest.raises(CommandError, match=r"already holds a course \(.*problems.Problem.*--replace"):
        call_command("import_course", str(small_backup), **quiet())
    assert table_counts() == before


def test_replace_deletes_the_course_first_and_keeps_users(small_backup: Path) -> None:
    before, export = table_counts(), comparable(course_export())
    Problem.objects.filter(title="Closed").update(title="Edited after the backup")
    out = io.StringIO()
    call_command("import_course", str(small_backup), "--replace", stdout=out, stderr=io.StringIO())
    assert "already here, kept as they were" in out.getvalue()
    assert table_counts() == before
    assert comparable(course_export()) == export
    assert Problem.objects.filter(title="Closed").exists()


@pytest.mark.parametrize(
    "break_it, message",
    [
        (lambda d: d["attempts"][0].update(problem=["test", "no-such-problem"]),
         r"attempts\[0\]: 'problem' names an unknown problem \['test', 'no-such-problem'\]"),
        (lambda d: d["labels"][3].update(concept="no-such-concept"), r"labels\[3\]: 'concept' names an unknown concept 'no-such-concept'"),
        (lambda d: d["rules"][0]["versions"][0].update(author="nobody"), r"rules\[0\]\.versions\[0\]: 'author' names an unknown user 'nobody'"),
        (lambda d: d["problems"][2].update(released="yes"), r"problems\[2\]: 'released' has the wrong type"),
        (lambda d: d["problems"][4].update(source_id=d["problems"][0]["source_id"]), r"problems\[4\]: duplicate problem"),
        (lambda d: d["embedding_runs"][0].update(dim=3), r"embedding_runs\[0\]: 'vectors' holds"),
        (lambda d: d["problems"][1].update(colour="red"), r"problems\[1\]: unknown field\(s\) 'colour'"),
        (lambda d: d["labels"].append(dict(d["labels"][0])), r"labels\[\d+\]: duplicate label \(problem, concept\)"),
        (lambda d: d["attempts"][0].update(created_at="2026-13-45T00:00:00+00:00"), r"attempts\[0\]: 'created_at' must be an ISO 8601"),
        # json reads NaN: a restored NaN outcome made every recommendation for the student a server error.
        (lambda d: d["attempts"][0].update(outcome=float("nan")), r"attempts\[0\]: 'outcome' must be a number from 0 to 1, got nan"),
        (lambda d: d["attempts"][0].update(outcome=5), r"attempts\[0\]: 'outcome' must be a number from 0 to 1, got 5.0"),
        (lambda d: d["triplets"].append({"anchor": ["test", "p1"], "positive": ["test", "p1"], "negative": ["test", "p2"]}),
         r"triplets\[\d+\]: anchor, positive and negative must be three different problems"),
        # JSON columns hold what the code reads: an object (params, notes, ...) or a list (losses, ...).
        (lambda d: d["embedding_runs"][0].update(params=[1, 2]), r"embedding_runs\[0\]: 'params' must be a JSON object, got a list"),
        (lambda d: d["embedding_runs"][0].update(losses={"1": 0.5}), r"embedding_runs\[0\]: 'losses' must be a JSON list, got an object"),
        (lambda d: d["embedding_runs"][0].update(notes="none"), r"embedding_runs\[0\]: 'notes' must be a JSON object, got text"),
        (lambda d: d["embedding_runs"][0].update(source="rules", params={"triplet_share_min": "many"}),  # read by a rules run's fingerprint
         r"embedding_runs\[0\]: 'params' has a value of the wrong type \(invalid literal for int"),
        (lambda d: d["embedding_runs"][0]["notes"].update(triplet_share_out_of_fold=[[["test", "p1"], ["test", "p2"], ["test", "nope"], 1]]),
         r"embedding_runs\[0\]: 'notes' triplet_share_out_of_fold\[0\]\[2\] names an unknown problem \['test', 'nope'\]"),
        (lambda d: d["embedding_runs"][0]["notes"].update(triplet_share_out_of_fold=[[["test", "p1"], ["test", "p2"], 1]]),
         r"embedding_runs\[0\]: 'notes' triplet_share_out_of_fold\[0\] must be \[anchor, positive, negative, right\]"),
        (lambda d: d.update(embedding_default=[]), r"embedding_default must be an object or null"),
        (lambda d: d.update(embedding_default={"method": "prob2vec", "source": "labels", "updated_by": "nobody"}),
         r"embedding_default: 'updated_by' names an unknown user 'nobody'"),
        (lambda d: d.update(version=99), r"unsupported prob2vec-course version 99"),
        (lambda d: d.update(format="something-else"), r"not a course backup: format is 'something-else'"),
    ],
)
def test_a_broken_file_imports_nothing_and_says_where(small_backup: Path, tmp_path: Path, break_it: Any, message: str) -> None:
    data = json.loads(small_backup.read_text())
    break_it(data)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    wipe_everything()
    with pytest.raises(CommandError, match=message):
        call_command("import_course", str(broken), **quiet())
    assert all(n == 0 for n in table_counts().values())
    assert get_user_model().objects.count() == 0


def test_bad_json_and_bad_gzip_are_refused(tmp_path: Path, db: Any) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"format": "prob2vec-course", "version": 1, ')
    with pytest.raises(CommandError, match=r"bad.json: not valid JSON: .* at line 1 column \d+; nothing was imported"):
        call_command("import_course", str(path))
    for content, message in (
        ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
        ('{"format": ' + "9" * 5000 + "}", "digits"),
        ('{"format": "prob2vec-course", "problems": [{"text": "a\\u0000b"}]}', r"a NUL character \(\\u0000\) in 'problems\[0\].text'"),
    ):
        path.write_text(content)
        with pytest.raises(CommandError, match=message):
            call_command("import_course", str(path))
    path.write_bytes(b"\x1f\x8b\x08\x00broken")
    with pytest.raises(CommandError, match="not a valid gzip file"):
        call_command("import_course", str(path))
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_course", str(tmp_path / "missing.json"))


def test_standard_output_and_a_plain_file_round_trip(small_backup: Path, tmp_path: Path, monkeypatch: Any) -> None:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_course", "-", stdout=out, stderr=err)
    assert json.loads(out.getvalue())["counts"] == json.loads(small_backup.read_text())["counts"]
    assert "Exported the course" in err.getvalue()
    export, before = comparable(course_export()), table_counts()
    wipe_everything()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(out.getvalue().encode())))
    call_command("import_course", "-", **quiet())
    assert table_counts() == before and comparable(course_export()) == export
    assert list(tmp_path.glob(".*.tmp")) == []  # the atomic write left no temporary file
    assert small_backup.stat().st_mode & 0o077 == 0  # password hashes inside: owner only


def test_a_file_written_before_attempts_moved_restores_their_permissions(small_backup: Path, tmp_path: Path) -> None:
    """Backups from before issue 16 name the attempt permissions by their old app (problems.add_attempt,
    given to an LMS's service account): they restore as the practice app's."""
    data = json.loads(small_backup.read_text())
    data["users"].append({**data["users"][0], "username": "lms", "email": "", "groups": [], "user_permissions": ["problems.add_attempt"]})
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    wipe_everything()
    call_command("import_course", str(old), **quiet())
    lms = get_user_model().objects.get(username="lms")
    assert lms.has_perm("practice.add_attempt") and not lms.has_perm("practice.view_attempt")


def test_the_site_default_is_restored_when_no_run_is_active(course: dict[str, Any], hana: Any, tmp_path: Path) -> None:
    """The site default is its own kind (embedding_default), not part of the active embedding: an
    instructor who chose one before any run of it was made active gets it back, with when and by whom."""
    from embeddings.models import EmbeddingDefault
    from embeddings.services import embedding_default_get, embedding_default_set

    ActiveEmbedding.objects.all().delete()
    embedding_default_set(method="onehot", source="rules", user=hana)
    EmbeddingDefault.objects.filter(pk=1).update(updated_at="2025-03-04T05:06:07+00:00")  # auto_now: restored as it was
    path = tmp_path / "course.json"
    call_command("export_course", str(path), **quiet())
    data = json.loads(path.read_text())
    assert data["active_embedding"] is None and data["counts"]["embedding_default"] == 1
    assert data["embedding_default"] == {"method": "onehot", "source": "rules", "updated_at": "2025-03-04T05:06:07+00:00", "updated_by": "hana"}
    wipe_everything()
    out = io.StringIO()
    call_command("import_course", str(path), stdout=out, stderr=io.StringIO())
    assert "0 active embedding, 1 embedding default" in out.getvalue()
    assert embedding_default_get() == ("onehot", "rules")
    row = EmbeddingDefault.objects.select_related("updated_by").get(pk=1)
    assert row.updated_by is not None and row.updated_by.username == "hana"
    assert row.updated_at.isoformat() == "2025-03-04T05:06:07+00:00"


def test_a_file_written_before_embedding_default_restores_its_site_default(course: dict[str, Any], hana: Any, tmp_path: Path) -> None:
    """Version 1 files written before embedding_default was a kind keep the default (without its time) in
    active_embedding.site_default: they restore as before, and a file with both is refused."""
    from embeddings.services import embedding_default_get, embedding_default_set

    embedding_default_set(method="svd", source="labels", user=hana)
    path = tmp_path / "course.json"
    call_command("export_course", str(path), **quiet())
    data = json.loads(path.read_text())
    default = data.pop("embedding_default")
    data["active_embedding"]["site_default"] = {"method": default["method"], "source": default["source"], "updated_by": default["updated_by"]}
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    both = tmp_path / "both.json"
    both.write_text(json.dumps({**data, "embedding_default": default}))
    wipe_everything()
    with pytest.raises(CommandError, match=r"the site default is given twice"):
        call_command("import_course", str(both), **quiet())
    assert all(n == 0 for n in table_counts().values())
    out = io.StringIO()
    call_command("import_course", str(old), stdout=out, stderr=io.StringIO())
    assert "1 active embedding, 1 embedding default" in out.getvalue()
    assert embedding_default_get() == ("svd", "labels")


@pytest.fixture
def share_course(problem_factory: Any, concept_factory: Any, hana: Any, settings: Any) -> None:
    """A rules run whose collection chose its text share on its 30 accepted triplets (README step 5, as
    in tests/embeddings/test_runs.py): its notes say, per triplet by problem ids, how the share chosen
    on the other folds judged it (notes["triplet_share_out_of_fold"])."""
    from concepts.models import Concept
    from concepts.services import rule_save
    from embeddings.services import triplet_create

    concept_factory("nchoosek")
    concept_factory("permutations")
    for i in range(30):
        a = problem_factory(f"Two fair dice are rolled, round {i}. What is the probability that the sum is seven?", collection="book", module="dice")
        b = problem_factory(f"Two fair dice are rolled, round {i}. What is the probability that the sum is eight?", collection="book", module="dice")
        c = problem_factory(f"A club of {i + 12} members elects a committee of five. In how many ways?", collection="book", module="dice")
        triplet_create(anchor=a, positive=b, negative=c, user=hana, status="accepted")
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bseven\b|\bcommittee\b", user=hana)
    rule_save(concept=Concept.objects.get(slug="permutations"), pattern=r"\beight\b", user=hana)
    call_command("extract_concepts", **quiet())
    settings.EMBEDDING_TRIPLET_SHARE_MIN = 30


def evaluate_book() -> tuple[float, str]:
    """onehot/rules accuracy on the accepted triplets of "book", and what evaluate_triplets said on stderr."""
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate_triplets", "--collection", "book", "--methods", "onehot", "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue())["results"]["onehot"]["rules"], err.getvalue()


def test_a_runs_out_of_fold_judgements_follow_their_problems_to_new_ids(share_course: None, tmp_path: Path) -> None:
    """The file names the problems of notes["triplet_share_out_of_fold"] by key, as it does a run's
    problem_ids: after a restore that numbers every problem afresh (--replace, into a database that held
    the course), the restored run is reused and judges each triplet as it did before."""
    evaluate_book()
    run = EmbeddingRun.objects.get(method="onehot", source="rules")
    # One triplet the other folds' share got wrong, although the share chosen on all 30 orders it: 29/30, not 30/30.
    run.notes["triplet_share_out_of_fold"][0][3] = 0
    run.save(update_fields=["notes"])
    before = evaluate_book()
    assert before[0] == pytest.approx(29 / 30) and "onehot/rules: 30 of the 30 triplets chose their collection's text share" in before[1]
    old_ids, runs = set(Problem.objects.values_list("id", flat=True)), EmbeddingRun.objects.count()
    path = tmp_path / "course.json"
    call_command("export_course", str(path), **quiet())
    written = next(r for r in json.loads(path.read_text())["embedding_runs"] if r["method"] == "onehot" and r["source"] == "rules")
    first = written["notes"]["triplet_share_out_of_fold"][0]
    assert first[3] == 0 and all(isinstance(key, list) and key[0] == "book" for key in first[:3])

    call_command("import_course", str(path), "--replace", **quiet())
    assert not old_ids & set(Problem.objects.values_list("id", flat=True))
    after = evaluate_book()
    assert EmbeddingRun.objects.count() == runs  # reused, not trained again
    assert after[0] == before[0]
    assert f"30 of the 30 triplets chose their collection's text share in run #{EmbeddingRun.objects.get(method='onehot', source='rules').pk}" in after[1]


def test_a_file_with_the_old_databases_ids_in_a_runs_notes_restores_the_run_out_of_date(share_course: None, tmp_path: Path) -> None:
    """Files written before those problems were keys hold the exporting database's ids, which name no
    problem here (or the wrong one): the restore leaves them out, and the run is not reused, so the next
    rebuild judges the triplets out of fold again."""
    from embeddings.selectors import accepted_triplets

    evaluate_book()
    ids = {tuple(t) for t in accepted_triplets("book")}
    path = tmp_path / "course.json"
    call_command("export_course", str(path), **quiet())
    data = json.loads(path.read_text())
    record = next(r for r in data["embedding_runs"] if r["method"] == "onehot" and r["source"] == "rules")
    keys = {tuple(p): pid for pid, p in ((p.pk, [p.collection, p.source_id]) for p in Problem.objects.all())}
    record["notes"]["triplet_share_out_of_fold"] = [[*(keys[tuple(k)] for k in e[:3]), e[3]] for e in record["notes"]["triplet_share_out_of_fold"]]
    assert {tuple(e[:3]) for e in record["notes"]["triplet_share_out_of_fold"]} == ids  # as the previous version wrote them
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    runs = EmbeddingRun.objects.count()

    call_command("import_course", str(old), "--replace", **quiet())
    restored = EmbeddingRun.objects.get(method="onehot", source="rules")
    assert "triplet_share_out_of_fold" not in restored.notes and restored.notes["triplet_share"]["book"]["triplets"] == 30
    accuracy, said = evaluate_book()
    assert EmbeddingRun.objects.count() == runs + 1  # the onehot/rules run is built again; the others are reused
    rebuilt = EmbeddingRun.objects.filter(method="onehot", source="rules").latest("id")
    assert accuracy == 1.0 and f"30 of the 30 triplets chose their collection's text share in run #{rebuilt.pk}" in said
