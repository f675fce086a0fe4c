"""The dev sets (benchmarks/devsets/): consistent files, importable by the app's own commands, and the
starter rules' quality on them. Tests that need the books' text skip where ../shared/data is absent."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchmarks import devsets
from problems.demo_course import DEMO_DIR, RULE_ORIGINS, demo_rule_branches, demo_rules, join_branches

SLUGS = {row["slug"] for row in csv.DictReader(open(DEMO_DIR / "concepts.tsv", encoding="utf-8"), delimiter="\t")}
MINIMUM_LABELLED = {"openstax-introductory-statistics-2e": 150, "openintro-statistics-4e": 100, "grinstead-snell-probability": 100}
needs_books = pytest.mark.skipif(bool(devsets.missing_reason()), reason=devsets.missing_reason() or "books present")


@pytest.mark.parametrize("book", list(devsets.BOOKS))
def test_labels_cover_the_sample_and_use_the_dictionary(book: str) -> None:
    sample = (devsets.HERE / book / "sample.txt").read_text(encoding="utf-8").splitlines()
    labels, skipped = devsets.labels(book), devsets.skipped(book)
    assert len(labels) >= MINIMUM_LABELLED[book]
    assert set(labels) | set(skipped) == set(sample) and not set(labels) & set(skipped)
    assert all(concepts and set(concepts) <= SLUGS and len(set(concepts)) == len(concepts) for concepts in labels.values())
    assert all(reason.strip() for reason in skipped.values())
    for annotator in ("ta-dev1", "ta-dev2"):
        overlap = devsets.overlap(book, annotator)
        assert list(overlap) == sample[:25]  # the shared sample: each book's first 25 draws


@pytest.mark.parametrize("book", list(devsets.BOOKS))
def test_triplets_are_labelled_distinct_and_half_fine_grained(book: str) -> None:
    triplets, labels = devsets.triplets(book), devsets.labels(book)
    assert len(triplets) >= 40
    assert sum(t["kind"] == "fine" for t in triplets) * 2 == len(triplets)
    keys = [(t["anchor"], t["positive"], t["negative"]) for t in triplets]
    assert len(set(keys)) == len(keys) and all(len(set(k)) == 3 and set(k) <= set(labels) for k in keys)


@needs_books
@pytest.mark.parametrize("book", list(devsets.BOOKS))
def test_every_id_is_in_the_book_and_every_triplet_in_one_chapter(book: str) -> None:
    chapter = {r["id"]: r["module"] for r in devsets.book_problems(book)}
    assert set(devsets.labels(book)) | set(devsets.skipped(book)) <= set(chapter)
    for t in devsets.triplets(book):
        assert chapter[t["anchor"]] == chapter[t["positive"]] == chapter[t["negative"]]
    assert len(set(chapter[i] for i in devsets.labels(book))) == len(set(chapter.values()))  # every chapter sampled


def test_each_rule_branch_says_where_it_came_from() -> None:
    spec = demo_rule_branches()
    assert set(spec) == SLUGS
    for slug, rule in spec.items():
        assert rule["branches"], slug
        for branch in rule["branches"]:
            assert branch["from"] and set(branch["from"]) <= set(RULE_ORIGINS), (slug, branch)
    # Leaving a book out drops exactly the branches that only it prompted.
    branches = [{"re": "a", "from": ["gs"]}, {"re": "b", "from": ["gs", "openstax"]}, {"re": "c", "from": ["demo"]}]
    assert join_branches(branches) == "a|b|c" and join_branches(branches, without="gs") == "b|c"
    assert sum(len(str(r["pattern"])) for r in demo_rules().values()) > sum(len(str(r["pattern"])) for r in demo_rules(without="gs").values())


@needs_books
@pytest.mark.django_db
def test_a_book_imports_through_the_apps_commands(tmp_path: Path) -> None:
    book = "openintro-statistics-4e"
    paths = devsets.write_import_files(book, tmp_path, problems="labelled")
    call_command("load_demo", "--no-users", stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_problems", str(paths["problems"]), "--collection", book, stdout=out)
    call_command("import_labels", str(paths["labels"]), "--collection", book, stdout=out)
    call_command("import_triplets", str(paths["triplets"]), "--collection", book, "--status", "accepted", stdout=out)
    from concepts.models import GroundTruthLabel
    from embeddings.models import SimilarityTriplet
    from problems.models import Problem

    assert Problem.objects.filter(collection=book).count() == len(devsets.labels(book))
    assert GroundTruthLabel.objects.filter(problem__collection=book).count() == sum(map(len, devsets.labels(book).values()))
    assert SimilarityTriplet.objects.filter(anchor__collection=book, status="accepted").count() == len(devsets.triplets(book))
    # The contract holds: a triplet whose problems span chapters (modules) is refused, and nothing is imported.
    chapter = {r["id"]: r["module"] for r in devsets.book_problems(book)}
    ids = sorted(devsets.labels(book), key=lambda i: chapter[i])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"anchor": ids[0], "positive": ids[1], "negative": ids[-1]}) + "\n")
    with pytest.raises(CommandError):
        call_command("import_triplets", str(bad), "--collection", book, stdout=io.StringIO(), stderr=io.StringIO())


@needs_books
@pytest.mark.slow
def test_the_starter_rules_hold_on_every_dev_book() -> None:
    """Regression guard at the levels the rules reached (README, "The starter rules on real text")."""
    from benchmarks.rule_quality import compiled_rules, dev_book, load_concepts, measure

    concepts, compiled = load_concepts(), compiled_rules()
    for book in devsets.BOOKS:
        _, texts, truth = dev_book(book)
        result = measure(texts, truth, concepts, compiled)
        assert result["fp_rate"] <= 0.01, book
        assert result["fn_rate"] <= 0.25, book
        assert result["no_concept"] <= 0.06, book
