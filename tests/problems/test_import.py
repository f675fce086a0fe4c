from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from concepts.models import GroundTruthLabel
from problems.models import Module, Problem

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def run_import(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("import_problems", str(path), *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def counting_concepts(concept_factory: Any) -> None:
    concept_factory("nchoosek")
    concept_factory("permutations")


def test_it_imports_with_the_folder_name_as_collection(db: Any, tmp_path: Path, counting_concepts: None) -> None:
    path = write_jsonl(
        tmp_path / "my-course" / "problems.jsonl",
        [
            {"id": "1", "text": "Pick $3$ of $10$: $\\binom{10}{3}$.", "module": "counting", "labels": ["nchoosek", "made-up"]},
            {"id": "2", "text": "Arrange 5 books.", "module": "brand new module", "labels": [], "answer": 120},
        ],
    )
    out = run_import(path)
    assert "2 created" in out and "made-up (1)" in out and "brand new module" in out
    p1 = Problem.objects.get(collection="my-course", source_id="1")
    assert [lab.concept.slug for lab in p1.ground_truth_labels.all()] == ["nchoosek"]
    assert Problem.objects.get(source_id="2").answer == "120"
    assert Module.objects.filter(name="brand new module").exists()
    assert not p1.released


def test_reimport_updates_in_place_and_never_duplicates(db: Any, tmp_path: Path, counting_concepts: None) -> None:
    rows = [{"id": str(i), "text": f"Problem {i}", "module": "counting", "labels": ["nchoosek"]} for i in range(5)]
    path = write_jsonl(tmp_path / "c" / "p.jsonl", rows)
    run_import(path)
    first_ids = dict(Problem.objects.values_list("source_id", "id"))
    rows[2]["text"] = "Problem 2, edited"
    rows[3]["labels"] = ["permutations"]
    write_jsonl(path, rows)
    out = run_import(path)
    assert "1 updated, 4 unchanged; 1 label sets set" in out
    assert dict(Problem.objects.values_list("source_id", "id")) == first_ids
    assert Problem.objects.get(source_id="2").text == "Problem 2, edited"
    assert list(GroundTruthLabel.objects.filter(problem__source_id="3").values_list("concept__slug", flat=True)) == [
        "permutations"
    ]
    assert Problem.objects.count() == 5


def test_new_modules_join_the_syllabus_in_the_order_the_file_names_them(db: Any, tmp_path: Path) -> None:
    names = ["1.1 Terminology", "2.1 Histograms", "10.1 Two means", "2.2 Box plots"]
    rows = [{"id": str(i), "text": f"Problem {i}.", "module": name} for i, name in enumerate(names + ["1.1 Terminology"])]
    out = run_import(write_jsonl(tmp_path / "book" / "p.jsonl", rows))
    assert "new modules: 1.1 Terminology, 2.1 Histograms, 10.1 Two means, 2.2 Box plots" in out
    assert list(Module.objects.filter(name__in=names).order_by("order").values_list("name", flat=True)) == names


def test_reimporting_retitles_exercises_that_share_a_lead_in(db: Any, tmp_path: Path) -> None:
    lead = "Use the following information to answer the next two exercises. Forty students were asked how far they commute. "
    rows = [{"id": "1", "text": lead + "Find the sample mean."}, {"id": "2", "text": lead + "Find the sample median."}]
    path = write_jsonl(tmp_path / "stats" / "p.jsonl", rows)
    run_import(path)
    assert sorted(Problem.objects.values_list("title", flat=True)) == [
        "Forty students were asked how far they commute. Find the sample mean.",
        "Forty students were asked how far they commute. Find the sample median.",
    ]
    # A bank imported before titles skipped the lead-in: importing the file again retitles it.
    Problem.objects.update(title="Use the following information to answer the next two exercises.")
    assert "2 updated" in run_import(path)
    assert len(set(Problem.objects.values_list("title", flat=True))) == 2


def test_a_file_with_a_bad_line_imports_nothing(db: Any, tmp_path: Path, problem_factory: Any) -> None:
    existing = problem_factory("Keep me", collection="c", source_id="1")
    path = write_jsonl(
        tmp_path / "c" / "p.jsonl",
        [{"id": "1", "text": "Overwrite attempt"}, {"id": "2", "text": "fine"}, "{oops", {"id": "4", "text": ""}],
    )
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 bad line"):
        call_command("import_problems", str(path), stdout=io.StringIO(), stderr=err)
    assert f"{path}:3: bad JSON" in err.getvalue()
    assert f"{path}:4: empty 'text'" in err.getvalue()
    existing.refresh_from_db()
    assert existing.text == "Keep me"
    assert Problem.objects.count() == 1


def test_a_nul_character_in_a_csv_cell_is_a_bad_line(db: Any, tmp_path: Path) -> None:
    # Valid UTF-8 that PostgreSQL text refuses: reported by line, as in JSONL, not a DataError halfway.
    path = tmp_path / "c" / "p.csv"
    path.parent.mkdir()
    path.write_bytes(b"id,text,module\n1,fine,m\n2,a\x00b,m\n3,ok,mod\x00\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 bad line"):
        call_command("import_problems", str(path), stdout=io.StringIO(), stderr=err)
    assert f"{path}:3: a NUL character (\\u0000) in 'text' at position 2" in err.getvalue()
    assert f"{path}:4: a NUL character (\\u0000) in 'module' at position 4" in err.getvalue()
    assert not Problem.objects.exists() and not Module.objects.filter(name__startswith="m").exists()


def test_it_reports_a_missing_file(db: Any, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_problems", str(tmp_path / "nope.jsonl"))


@pytest.mark.parametrize(
    "command, extra",
    [("export_problems", []), ("export_labels", ["--collection", "c"]), ("export_triplets", ["--collection", "c"])],
)
def test_exports_report_a_file_they_cannot_write(db: Any, tmp_path: Path, command: str, extra: list[str], problem_factory: Any) -> None:
    # A missing folder is a one-line error naming the file, not a FileNotFoundError traceback.
    problem_factory(collection="c")
    target = tmp_path / "no-such-folder" / "out.jsonl"
    with pytest.raises(CommandError, match=f"cannot write {target}: No such file or directory"):
        call_command(command, str(target), *extra, stdout=io.StringIO(), stderr=io.StringIO())


@pytest.mark.parametrize("command", ["export_problems", "export_labels", "export_triplets"])
def test_an_export_of_a_collection_the_bank_does_not_have_names_the_ones_it_has(tmp_path: Path, command: str, problem_factory: Any) -> None:
    problem_factory(collection="openstax")
    target = tmp_path / "out.jsonl"
    with pytest.raises(CommandError, match="no collection named 'opnstax' in the bank; it has 'openstax'"):
        call_command(command, str(target), "--collection", "opnstax", stdout=io.StringIO(), stderr=io.StringIO())
    assert not target.exists()  # no empty file a script would take for an export


def test_collection_option_overrides_the_folder_name(db: Any, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "folder" / "p.jsonl", [{"id": "1", "text": "t"}])
    run_import(path, "--collection", "named", "--release")
    p = Problem.objects.get()
    assert p.collection == "named" and p.released


def test_a_10_mb_file_imports_whole(db: Any, tmp_path: Path) -> None:
    text = "A fair die is rolled $n$ times; find $P(\\text{at least one six}) = 1 - (5/6)^n$. " * 5
    rows = [{"id": f"big-{i}", "text": f"{i}: {text}", "module": f"module {i % 7}"} for i in range(23_000)]
    path = write_jsonl(tmp_path / "big" / "problems.jsonl", rows)
    assert path.stat().st_size > 10 * 1024 * 1024
    out = run_import(path)
    assert "23000 created" in out
    assert Problem.objects.count() == 23_000
    assert "23000 unchanged" in run_import(path)


def test_a_large_import_says_how_to_encode_its_texts_ahead_of_the_next_rebuild(db: Any, tmp_path: Path, settings: Any) -> None:
    from embeddings.models import TextVector
    from embeddings.services import TEXT_VECTOR_HINT_AT, TEXT_VECTOR_MODEL

    small = write_jsonl(tmp_path / "small" / "p.jsonl", [{"id": str(i), "text": f"Problem {i}"} for i in range(5)])
    out, err = io.StringIO(), io.StringIO()
    call_command("import_problems", str(small), stdout=out, stderr=err)
    assert err.getvalue() == ""  # a few texts: the next rebuild encodes them in seconds
    rows = [{"id": str(i), "text": f"Problem {i}: roll {i} dice."} for i in range(TEXT_VECTOR_HINT_AT)]
    big = write_jsonl(tmp_path / "big" / "p.jsonl", rows)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_problems", str(big), stdout=out, stderr=err)
    assert out.getvalue().count("\n") == 1 and f"{TEXT_VECTOR_HINT_AT} created" in out.getvalue()  # stdout: the summary alone
    missing = TEXT_VECTOR_HINT_AT + 5
    assert f"{missing:,} problems have no cached sentence vector yet" in err.getvalue()
    assert "manage.py encode_text_vectors" in err.getvalue()
    some = Problem.objects.order_by("id")[:10]
    TextVector.objects.bulk_create([TextVector(problem=p, model=TEXT_VECTOR_MODEL, text_sha256="x", vector=b"") for p in some])
    err = io.StringIO()
    call_command("import_problems", str(big), stdout=io.StringIO(), stderr=err)
    assert err.getvalue() == ""  # 1,995 missing now: under the threshold
    settings.EMBEDDING_FALLBACK_TEXT = "lsa"
    TextVector.objects.all().delete()
    err = io.StringIO()
    call_command("import_problems", str(big), stdout=io.StringIO(), stderr=err)
    assert err.getvalue() == ""  # the LSA fallback encodes nothing


@pytest.mark.slow
@pytest.mark.parametrize(
    "folder",
    [
        "openstax-introductory-statistics-2e",
        "openintro-statistics-4e",
        "grinstead-snell-probability",
        "math-counting-probability",
        "theoremqa-probability-statistics",
    ],
)
def test_it_imports_each_shared_collection(db: Any, folder: str) -> None:
    path = SHARED_DATA / folder / "problems.jsonl"
    if not path.exists():
        pytest.skip(f"shared data not present at {path} (tests read ../shared/data, it is never committed)")
    out = run_import(path)
    lines = sum(1 for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip())
    assert f"{lines} created" in out
    assert Problem.objects.filter(collection=folder).count() == lines
    # Every problem can be told from the others in a list: before titles skipped the lead-ins that
    # exercises share, 759 of OpenStax's 1,294 problems shared a title with another (45 were "Use the
    # following information to answer the next five exercises."), and 8 of G&S's were empty.
    # The book's modules are in the book's order (by name, chapters 10-13 came before chapter 2).
    in_file = list(dict.fromkeys(m for m in (json.loads(raw).get("module") for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()) if m))
    assert list(Module.objects.filter(name__in=in_file).order_by("order").values_list("name", flat=True)) == in_file
    titles = Counter(Problem.objects.filter(collection=folder).values_list("title", flat=True))
    assert "" not in titles
    assert sum(n for n in titles.values() if n > 1) <= 0.1 * lines, titles.most_common(3)


def refused(path: Path, *args: str) -> str:
    """Run an import that must fail; its stderr (one `FILE:LINE: reason` per bad line)."""
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_problems", str(path), *args, stdout=io.StringIO(), stderr=err)
    return err.getvalue()


def test_ids_are_told_apart_in_the_collection_each_record_is_imported_into(db: Any, tmp_path: Path) -> None:
    # --collection puts both records in X: their own collections (A, B) no longer tell them apart.
    rows = [
        {"id": "1", "text": "First problem.", "collection": "A"},
        {"id": "2", "text": "Other problem."},
        {"id": "1", "text": "Second problem.", "collection": "B"},
    ]
    path = write_jsonl(tmp_path / "folder" / "p.jsonl", rows)
    assert f"{path}:3: duplicate id '1' (first on line 1)" in refused(path, "--collection", "X")
    assert not Problem.objects.exists()
    # A record without a collection goes to the folder's, and so does one that names it.
    path = write_jsonl(tmp_path / "c" / "p.jsonl", [{"id": "7", "text": "Mine."}, {"id": "7", "text": "Also c.", "collection": "c"}])
    assert f"{path}:2: duplicate id '7' (first on line 1)" in refused(path)
    assert not Problem.objects.exists()
    # Without --collection, the records' own collections keep the same id apart, as before.
    path = write_jsonl(tmp_path / "folder" / "p.jsonl", rows)
    assert "3 problems in A, B, folder: 3 created" in run_import(path)
    assert Problem.objects.get(collection="A").text == "First problem."
    assert Problem.objects.get(collection="B").text == "Second problem."


def test_an_id_of_spaces_is_a_missing_id(db: Any, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c" / "p.jsonl", [{"id": "1", "text": "Fine."}, {"id": "   ", "text": "Blank id."}])
    assert f"{path}:2: missing 'id'" in refused(path)
    assert not Problem.objects.exists()


def test_a_collection_name_longer_than_the_column_is_reported_wherever_it_comes_from(db: Any, tmp_path: Path) -> None:
    long_name = "c" * 101
    path = write_jsonl(tmp_path / long_name / "p.jsonl", [{"id": "1", "text": "Mine."}, {"id": "2", "text": "Also mine."}])
    err = refused(path)  # the folder's name: one report, on the first line that goes there
    assert err.count("longer than 100 characters") == 1 and f"{path}:1: the collection named after the file" in err
    own = write_jsonl(tmp_path / long_name / "own.jsonl", [{"id": "1", "text": "Mine.", "collection": "short"}])
    assert "1 created" in run_import(own)  # a record that names its collection does not need the folder's
    Problem.objects.all().delete()
    with pytest.raises(CommandError, match="--collection is longer than 100 characters"):
        call_command("import_problems", str(own), "--collection", long_name, stdout=io.StringIO(), stderr=io.StringIO())
    assert "1 created" in run_import(own, "--collection", "c" * 100)
    assert Problem.objects.get().collection == "c" * 100


def test_a_title_longer_than_the_column_is_a_bad_line(db: Any, tmp_path: Path) -> None:
    rows = [{"id": "1", "text": "Fine.", "title": "t" * 200}, {"id": "2", "text": "Too long a title.", "title": "t" * 201}]
    path = write_jsonl(tmp_path / "c" / "p.jsonl", rows)
    assert f"{path}:2: 'title' is longer than 200 characters" in refused(path)
    assert not Problem.objects.exists()
    write_jsonl(path, rows[:1])
    assert "1 created" in run_import(path)
    assert Problem.objects.get().title == "t" * 200
