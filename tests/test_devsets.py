"""The dev sets (benchmarks/devsets/): consistent files, importable by the app's own commands, and the
starter rules' quality on them. Tests that need the books' text skip where ../shared/data is absent."""

from __future__ import annotations

import contextlib
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


@pytest.mark.parametrize("collection", list(devsets.TEST_SETS))
def test_test_overlap_lists_the_first_25_sample_ids_with_dictionary_slugs(collection: str) -> None:
    sample = (devsets.HERE / collection / "sample.txt").read_text(encoding="utf-8").splitlines()
    for annotator in ("ta-test1", "ta-test2"):
        overlap = devsets.overlap(collection, annotator)
        assert list(overlap) == sample[:25]  # the shared sample: each collection's first 25 draws
        labelled = [c for c in overlap.values() if c is not None]
        assert all(concepts and set(concepts) <= SLUGS and len(set(concepts)) == len(concepts) for concepts in labelled)


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


def sample_ids(folder: str) -> list[str]:
    return (devsets.HERE / folder / "sample.txt").read_text(encoding="utf-8").splitlines()


def labelled_sample(folder: str, sample: list[str]) -> dict[str, list[str]]:
    """A later sample's labels, checked: at least 60, every drawn problem labelled or skipped with a
    reason, dictionary slugs only. Returns the labels."""
    labels, skipped = devsets.labels(folder), devsets.skipped(folder)
    assert len(labels) >= 60
    assert set(labels) | set(skipped) == set(sample) and not set(labels) & set(skipped)
    assert all(concepts and set(concepts) <= SLUGS and len(set(concepts)) == len(concepts) for concepts in labels.values())
    assert all(reason.strip() for reason in skipped.values())
    return labels


@pytest.mark.parametrize("folder", list(devsets.SECOND_SAMPLES))
def test_a_second_sample_lies_outside_the_books_first_sample_and_triplets(folder: str) -> None:
    """A book's second sample (stop 33) is what rules may be written from without touching the book's
    triplets: none of its problems is in the first sample, so none is a triplet member."""
    book = devsets.SECOND_OF[folder]
    sample = sample_ids(folder)
    first = set(sample_ids(book))
    members = {t[k] for t in devsets.triplets(book) for k in ("anchor", "positive", "negative")}
    assert len(set(sample)) == len(sample) and not set(sample) & first and not set(sample) & members
    labels = labelled_sample(folder, sample)
    # The bank holds every sample's labels; leaving the book out leaves out the branches written from any.
    later = [f for f, of in devsets.SAMPLE_OF.items() if of == book]
    assert devsets.book_labels(book) == {**devsets.labels(book), **{i: c for f in later for i, c in devsets.labels(f).items()}}
    assert set(labels) <= set(devsets.book_labels(book))
    assert devsets.origin(devsets.SECOND_SAMPLES[folder]) == devsets.BOOKS[book]


@pytest.mark.parametrize("folder", list(devsets.THIRD_SAMPLES))
def test_a_third_sample_lies_outside_the_books_earlier_samples_and_triplets(folder: str) -> None:
    """A book's third sample (stop 34) is labelled for writing rules and training the learned extractor:
    none of its problems is in the first sample (so in no triplet) or in the second (the yardstick)."""
    book = devsets.THIRD_OF[folder]
    sample = sample_ids(folder)
    earlier = set(sample_ids(book)) | set(sample_ids(f"{book}-2"))
    members = {t[k] for t in devsets.triplets(book) for k in ("anchor", "positive", "negative")}
    assert len(set(sample)) == len(sample) and not set(sample) & earlier and not set(sample) & members
    labels = labelled_sample(folder, sample)
    assert {i: devsets.book_labels(book)[i] for i in labels} == labels
    assert devsets.origin(devsets.THIRD_SAMPLES[folder]) == devsets.BOOKS[book]
    assert devsets.collection_of(folder) == book


@needs_books
@pytest.mark.slow
def test_no_rule_author_is_shown_a_second_samples_problems(capsys: pytest.CaptureFixture[str]) -> None:
    """The second samples are a yardstick: the rule workbench does not offer them, and rule_quality's
    --misses (a rule author's view) lists the dev books' misses but none of theirs."""
    from benchmarks import rule_quality
    from benchmarks.rule_workbench import DEV_SETS

    assert not set(DEV_SETS) & set(devsets.SECOND_SAMPLES.values())
    assert not set(DEV_SETS.values()) & set(devsets.SECOND_SAMPLES)
    assert rule_quality.main(["--misses", "binomial-distribution", "--no-test-splits"]) == 0
    headers = [line for line in capsys.readouterr().out.splitlines() if line.startswith("==== ")]
    assert any(h.startswith("==== gs:") for h in headers)
    assert any(h.startswith("==== gs-3:") for h in headers)  # the third samples are for writing rules
    assert not any(h.split(":")[0].removeprefix("==== ") in devsets.SECOND_SAMPLES.values() for h in headers)


@needs_books
@pytest.mark.parametrize("folder", list(devsets.SECOND_SAMPLES))
def test_sample_py_draws_the_second_sample_again_over_every_chapter(folder: str) -> None:
    from benchmarks.devsets.sample import second_sample

    book = devsets.SECOND_OF[folder]
    assert second_sample(book, devsets.shared_data_dir()) == (devsets.HERE / folder / "sample.txt").read_text(encoding="utf-8").splitlines()
    chapter = {r["id"]: r["module"] for r in devsets.book_problems(folder)}
    assert len({chapter[i] for i in devsets.labels(folder)}) == len(set(chapter.values()))


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
    assert join_branches(branches, without="gs", strict=True) == "c"  # strict: also what it shares
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


@needs_books
@pytest.mark.slow
def test_the_starter_rules_keep_what_they_find_on_a_book_they_were_not_written_from() -> None:
    """Guard on generality (README, leave one book out: 44-55% FN today, target 25%): a rule edit that
    keeps each book's own figures but drops what carries between books would fail here."""
    from benchmarks.rule_quality import compiled_rules, dev_book, load_concepts, measure

    concepts = load_concepts()
    for book, origin in devsets.BOOKS.items():
        _, texts, truth = dev_book(book)
        result = measure(texts, truth, concepts, compiled_rules(without=origin))
        assert result["fn_rate"] <= 0.60 and result["fp_rate"] <= 0.01, book


@pytest.mark.parametrize("folder", [*devsets.SECOND_SAMPLES, *devsets.THIRD_SAMPLES])
def test_a_later_samples_triplets_are_the_proposals_a_blind_judge_agreed_with(folder: str) -> None:
    """Stop 34: triplets on the later samples of each book (the second's: fresh problems, a yardstick; the
    third's: tuning data). TA sessions proposed them, 24 or 48 at a time (triplets-proposed.jsonl,
    with labels and text); a judge that saw neither labels nor which candidate was proposed picked the
    closer (triplet-judge.jsonl, in the proposals' order); triplets.jsonl keeps what it agreed with."""
    folder_path = devsets.HERE / folder
    proposed = [json.loads(line) for line in (folder_path / "triplets-proposed.jsonl").read_text(encoding="utf-8").splitlines()]
    judged = [json.loads(line) for line in (folder_path / "triplet-judge.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(proposed) == len(judged) >= 24
    assert 2 * sum(p["kind"] == "fine" for p in proposed) == len(proposed)
    assert len({(p["anchor"], *sorted((p["positive"], p["negative"]))) for p in proposed}) == len(proposed)  # no repeats
    agreed = []
    for p, j in zip(proposed, judged):
        assert j["anchor"] == p["anchor"]
        pair = j["cant_tell"] if j["closer"] is None else [j["closer"], j["farther"]]
        assert set(pair) == {p["positive"], p["negative"]}
        if j["closer"] == p["positive"]:
            agreed.append({k: p[k] for k in ("anchor", "positive", "negative", "kind", "wording")})
    assert devsets.triplets(folder) == agreed and len(agreed) >= 20
    labelled = devsets.labels(folder)
    for t in agreed:  # every member is a labelled problem of the sample
        assert {t["anchor"], t["positive"], t["negative"]} <= set(labelled) and len({t["anchor"], t["positive"], t["negative"]}) == 3


@needs_books
@pytest.mark.parametrize("folder", [*devsets.SECOND_SAMPLES, *devsets.THIRD_SAMPLES])
def test_a_later_samples_triplets_stay_in_one_chapter_and_reach_the_table1_bank(folder: str) -> None:
    from benchmarks.devset_table1 import load_bank

    chapter = {r["id"]: r["module"] for r in devsets.book_problems(folder)}
    for t in devsets.triplets(folder):
        assert chapter[t["anchor"]] == chapter[t["positive"]] == chapter[t["negative"]]
    bank = load_bank()
    name = {**devsets.SECOND_SAMPLES, **devsets.THIRD_SAMPLES}[folder]
    book = devsets.BOOKS[devsets.SAMPLE_OF[folder]]
    rows = bank.triplets[name]
    assert rows.shape == (len(devsets.triplets(folder)), 3)
    assert all(bank.books[i] == book and bank.labels[i] for i in rows.ravel())


@needs_books
@pytest.mark.parametrize("folder", list(devsets.THIRD_SAMPLES))
def test_sample_py_draws_the_third_sample_again_over_every_chapter(folder: str) -> None:
    from benchmarks.devsets.sample import third_sample

    book = devsets.THIRD_OF[folder]
    sample = sample_ids(folder)
    assert third_sample(book, devsets.shared_data_dir()) == sample
    earlier = set(sample_ids(book)) | set(sample_ids(f"{book}-2"))
    chapter = {r["id"]: r["module"] for r in devsets.book_problems(folder)}
    # Every chapter with problems the earlier samples left is drawn from (OpenIntro's chapter 9 has none left).
    assert {chapter[i] for i in sample} == {c for i, c in chapter.items() if i not in earlier and i == i.strip()}


@needs_books
@pytest.mark.slow
def test_the_starter_rules_on_problems_of_each_book_they_were_never_written_from() -> None:
    """Guard on the second samples (README, "On real text"): FN 31 / 41 / 63% at stop 33, where the
    problems the rules were written from give 4-9%. A rule edit that fits the first samples tighter
    while losing what carries to the rest of the book would fail here; the book's branches must still
    find more on its fresh problems than the rules without them."""
    from benchmarks.rule_quality import compiled_rules, dev_book, load_concepts, measure

    concepts, compiled = load_concepts(), compiled_rules()
    for folder, name in devsets.SECOND_SAMPLES.items():
        _, texts, truth = dev_book(folder)
        result = measure(texts, truth, concepts, compiled)
        without = measure(texts, truth, concepts, compiled_rules(without=devsets.origin(name)))
        assert result["fp_rate"] <= 0.01 and result["fn_rate"] <= 0.70, name
        assert result["micro_recall"] > without["micro_recall"], name


# ---------------------------------------------------------------- the test splits (TEST_SETS.md)
needs_test_sets = pytest.mark.skipif(
    bool(devsets.missing_reason(collections=devsets.TEST_SETS)),
    reason=devsets.missing_reason(collections=devsets.TEST_SETS) or "collections present",
)


@pytest.mark.parametrize("collection", list(devsets.TEST_SETS))
def test_test_split_labels_follow_the_sample_then_the_reserve(collection: str) -> None:
    folder = devsets.HERE / collection
    order = folder.joinpath("sample.txt").read_text(encoding="utf-8").split() + folder.joinpath("reserve.txt").read_text(encoding="utf-8").split()
    labels, skipped = devsets.labels(collection), devsets.skipped(collection)
    assert len(labels) >= 55 and not set(labels) & set(skipped)
    done = set(labels) | set(skipped)
    assert done == set(order[: len(done)])  # labelled in order, no gaps: nothing was cherry-picked
    assert all(concepts and set(concepts) <= SLUGS and len(set(concepts)) == len(concepts) for concepts in labels.values())
    assert all(reason.strip() for reason in skipped.values())
    triplets = devsets.triplets(collection)
    assert len(triplets) >= 24 and sum(t["kind"] == "fine" for t in triplets) * 2 == len(triplets)
    assert all(len({t["anchor"], t["positive"], t["negative"]}) == 3 and {t["anchor"], t["positive"], t["negative"]} <= set(labels) for t in triplets)


@needs_test_sets
@pytest.mark.parametrize("collection", list(devsets.TEST_SETS))
def test_test_split_sample_is_reproducible_and_in_the_collection(collection: str) -> None:
    from benchmarks.devsets import sample_test

    key, quota_of = sample_test.DESIGN[collection]
    sample, reserve = sample_test.draw(collection, key, quota_of, write=False)
    folder = devsets.HERE / collection
    assert sample == folder.joinpath("sample.txt").read_text(encoding="utf-8").split()
    assert reserve == folder.joinpath("reserve.txt").read_text(encoding="utf-8").split()
    module = {r["id"]: r["module"] for r in devsets.book_problems(collection)}
    assert set(sample) | set(reserve) <= set(module)
    for t in devsets.triplets(collection):
        assert module[t["anchor"]] == module[t["positive"]] == module[t["negative"]]


@needs_test_sets
def test_rule_quality_reports_the_test_splits_apart() -> None:
    from benchmarks import rule_quality

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rule_quality.main(["--json"])
    summary = json.loads(out.getvalue())
    for name in devsets.TEST_SETS.values():
        assert summary[name]["test_split"] is True and summary[name]["problems"] >= 55
        assert 0 <= summary[name]["fn_rate"] <= 1 and "leave_one_book_out" not in summary[name]
    if not devsets.missing_reason():
        strict, lenient = summary["openstax"]["leave_one_book_out_strict"], summary["openstax"]["leave_one_book_out"]
        assert strict["fn_rate"] >= lenient["fn_rate"]  # strict leaves out more branches


def test_the_miss_classes_name_labelled_concepts_of_the_third_samples_once_each() -> None:
    from benchmarks import rule_quality

    classes = rule_quality.miss_classes()
    assert len(classes) == 138 and set(classes.values()) <= set(rule_quality.MISS_KINDS)
    for (folder, problem, concept), _ in classes.items():
        assert folder in devsets.THIRD_SAMPLES and concept in devsets.labels(folder)[problem]
    rows = (rule_quality.MISS_CLASSES).read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 + len(classes)  # a header, then no pair twice


@needs_books
def test_rule_quality_prints_the_third_samples_misses_by_kind_and_what_phrasing_could_reach() -> None:
    from benchmarks import rule_quality

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rule_quality.main(["--miss-classes", "--no-test-splits"])
    lines = {line.split()[0]: line for line in out.getvalue().split("third samples: the rules' misses")[1].splitlines()[1:4]}
    assert set(lines) == set(devsets.THIRD_SAMPLES.values())
    for line in lines.values():  # each step finds more, so FN falls
        now, named, phrased = (float(x.rstrip("%")) for x in line.split("FN ")[1].split(" -> "))
        assert now >= named >= phrased


# ------------------------------------------------- the genre dev samples (sample_genre_dev.py)
needs_genre = pytest.mark.skipif(
    bool(devsets.missing_reason(collections=devsets.GENRE_DEV)),
    reason=devsets.missing_reason(collections=devsets.GENRE_DEV) or "collections present",
)


@pytest.mark.parametrize("dev", list(devsets.GENRE_DEV))
def test_genre_dev_labels_follow_the_sample_and_never_touch_the_test_split(dev: str) -> None:
    from benchmarks.devsets.sample_genre_dev import test_ids

    sample = (devsets.HERE / dev / "sample.txt").read_text(encoding="utf-8").split()
    taken = test_ids(devsets.GENRE_DEV_OF[dev])
    assert len(taken) == 100 and not set(sample) & taken  # rules tuned on a dev sample can never have seen a test problem
    labels, skipped = devsets.labels(dev), devsets.skipped(dev)
    assert len(labels) >= 25 and not set(labels) & set(skipped)
    done = set(labels) | set(skipped)
    assert done == set(sample[: len(done)])  # labelled in order, no gaps
    assert all(concepts and set(concepts) <= SLUGS and len(set(concepts)) == len(concepts) for concepts in labels.values())
    assert all(reason.strip() for reason in skipped.values())


@needs_genre
@pytest.mark.parametrize("dev", list(devsets.GENRE_DEV))
def test_genre_dev_sample_is_reproducible_and_in_the_collection(dev: str) -> None:
    from benchmarks.devsets import sample_genre_dev

    sample = sample_genre_dev.draw(dev, write=False)
    assert sample == (devsets.HERE / dev / "sample.txt").read_text(encoding="utf-8").split()
    assert set(sample) <= {r["id"] for r in devsets.book_problems(dev)}


# Triplets of the genre dev samples (README "Genre dev samples"): the test splits' protocol (TEST_SETS.md
# "Triplets"), checked in full here because the dev samples are small enough that one bad line matters.
GENRE_DEV_TRIPLETS = {"math-counting-probability-dev": 24, "theoremqa-probability-statistics-dev": 12}


def jaccard(a: list[str], b: list[str]) -> float:
    return len(set(a) & set(b)) / len(set(a) | set(b))


@pytest.mark.parametrize("dev", list(devsets.GENRE_DEV))
def test_genre_dev_triplets_follow_the_test_splits_protocol(dev: str) -> None:
    triplets, labels = devsets.triplets(dev), devsets.labels(dev)
    assert GENRE_DEV_TRIPLETS[dev] <= len(triplets) <= 24
    assert all(set(t) == {"anchor", "positive", "negative", "kind", "wording"} for t in triplets)
    assert all(t["kind"] in ("fine", "clear") and isinstance(t["wording"], bool) for t in triplets)
    assert sum(t["kind"] == "fine" for t in triplets) * 2 == len(triplets)  # half fine, half clear
    assert 0.35 <= sum(t["wording"] for t in triplets) / len(triplets) <= 0.65  # about half share the anchor's wording
    keys = [(t["anchor"], t["positive"], t["negative"]) for t in triplets]
    assert len(set(keys)) == len(keys) and all(len(set(k)) == 3 and set(k) <= set(labels) for k in keys)
    anchors = [k[0] for k in keys]
    assert max(anchors.count(a) for a in anchors) <= 2  # spread over many problems
    for a, p, n in keys:  # the anchor's concepts are strictly closer to the positive's than to the negative's
        assert jaccard(labels[a], labels[p]) > jaccard(labels[a], labels[n]), (a, p, n)


@needs_genre
@pytest.mark.parametrize("dev", list(devsets.GENRE_DEV))
def test_genre_dev_triplets_stay_in_one_module(dev: str) -> None:
    module = {r["id"]: r["module"] for r in devsets.book_problems(dev)}
    for t in devsets.triplets(dev):
        assert module[t["anchor"]] == module[t["positive"]] == module[t["negative"]], t


@pytest.mark.parametrize("dev", list(devsets.GENRE_DEV))
def test_genre_dev_blind_judge_stays_in_step_with_the_triplets(dev: str) -> None:
    """triplet-judge.jsonl: the blind second judge's pick per triplet, in the triplets' order, over the same pair."""
    path = devsets.HERE / dev / "triplet-judge.jsonl"
    judged = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    triplets = devsets.triplets(dev)
    assert len(judged) == len(triplets)
    for t, j in zip(triplets, judged):
        assert j["anchor"] == t["anchor"], (t["anchor"], j)
        if j["closer"] is None:
            assert j["farther"] is None and set(j) == {"anchor", "closer", "farther", "cant_tell"}
            pair = j["cant_tell"]
        else:
            assert set(j) == {"anchor", "closer", "farther"}
            pair = [j["closer"], j["farther"]]
        assert len(pair) == 2 and set(pair) == {t["positive"], t["negative"]}, (t["anchor"], j)


@needs_books
@needs_genre
@pytest.mark.slow
def test_the_genre_dev_bank_carries_the_dev_samples_labels_and_never_the_test_splits() -> None:
    """`devset_table1.py --genre-dev` tunes on these triplets: the test problems' labels must not be in it."""
    from benchmarks.devset_table1 import load_bank

    bank = load_bank(genre_dev=True)
    for dev, name in devsets.GENRE_DEV.items():
        rows = {i for i, b in enumerate(bank.books) if b == name}
        labelled = {i for i in rows if bank.labels[i]}
        assert len(labelled) == len(devsets.labels(dev)) and len(bank.triplets[name]) == len(devsets.triplets(dev))
        assert {int(i) for i in bank.triplets[name].ravel()} <= labelled
    test_ids = {(collection, i) for collection in devsets.TEST_SETS for i in devsets.labels(collection)}
    collection_of = {name: devsets.GENRE_DEV_OF[dev] for dev, name in devsets.GENRE_DEV.items()}
    ids = {name: [r["id"] for r in devsets.book_problems(dev)] for dev, name in devsets.GENRE_DEV.items()}
    offset = {name: min(i for i, b in enumerate(bank.books) if b == name) for name in ids}
    for name, problem_ids in ids.items():
        for k, pid in enumerate(problem_ids):
            if (collection_of[name], pid) in test_ids:
                assert bank.labels[offset[name] + k] is None, pid  # a test problem is in the bank, unlabelled
    assert not set(devsets.TEST_SETS.values()) & set(bank.triplets)
    with pytest.raises(ValueError):
        load_bank(test_splits=True, genre_dev=True)


def test_the_audit_of_the_dev_labels_is_what_labels_jsonl_holds() -> None:
    """Stop 23's audit: a third annotator relabelled 40 dev problems blind; where the two disagreed, a
    blind head TA's resolution (audit-resolution.jsonl) is the ground truth; where they agreed, the labels stand."""
    resolution = {r["id"]: r["final"] for r in map(json.loads, (devsets.HERE / "audit-resolution.jsonl").read_text(encoding="utf-8").splitlines())}
    audited = 0
    for book in devsets.BOOKS:
        before, audit = devsets.overlap(book, "ta-audit-before"), devsets.overlap(book, "ta-audit")
        sample = set((devsets.HERE / book / "sample.txt").read_text(encoding="utf-8").splitlines())
        assert list(before) == list(audit) and set(audit) <= sample
        labels, skipped = devsets.labels(book), devsets.skipped(book)
        for pid in audit:
            audited += 1
            if pid in resolution:
                final = resolution[pid]
                assert ("skip" in final and pid in skipped) or set(labels[pid]) == set(final["concepts"]), pid
            else:
                assert before[pid] is not None and audit[pid] is not None and set(before[pid]) == set(audit[pid])
                assert set(labels[pid]) == set(audit[pid]), pid
            assert all(set(c or ()) <= SLUGS for c in (before[pid], audit[pid]))
    assert audited == 40 and set(resolution) <= {pid for b in devsets.BOOKS for pid in devsets.overlap(b, "ta-audit")}


def test_the_second_samples_agreement_and_resolution_are_what_labels_jsonl_holds() -> None:
    """Stop 33: a second annotator labelled the first 24 draws of each second sample blind; where the two
    disagreed, a blind head TA's resolution (second-resolution.jsonl) is the ground truth; where they
    agreed, the first annotator's labels stand."""
    resolution = {r["id"]: r["final"] for r in map(json.loads, (devsets.HERE / "second-resolution.jsonl").read_text(encoding="utf-8").splitlines())}
    seen = 0
    for folder in devsets.SECOND_SAMPLES:
        first, second = devsets.overlap(folder, "ta-second1"), devsets.overlap(folder, "ta-second2")
        sample = (devsets.HERE / folder / "sample.txt").read_text(encoding="utf-8").splitlines()
        assert list(first) == list(second) == sample[:24]
        labels, skipped = devsets.labels(folder), devsets.skipped(folder)
        for pid in first:
            seen += 1
            a, b = first[pid], second[pid]
            agree = (a is None and b is None) or (a is not None and b is not None and set(a) == set(b))
            assert agree != (pid in resolution), pid
            final = resolution[pid] if pid in resolution else ({"skip": "both"} if a is None else {"concepts": a})
            assert ("skip" in final and pid in skipped) or set(labels[pid]) == set(final["concepts"]), pid
            assert all(set(c or ()) <= SLUGS for c in (a, b))
    assert seen == 72


def test_the_fallback_text_comparison_chooses_per_method_leaving_one_set_out() -> None:
    """devset_table1 --compare-fallback-text on a tiny bank where only one text tells the triplets apart:
    every fold (and all sets) must choose it, and the figures must be the methods' real accuracies."""
    import numpy as np

    from benchmarks.devset_table1 import Bank, compare_fallback_texts

    books = ["openstax", "openintro", "gs", "demo"]
    bank = Bank(slugs=["c"])
    triplets = {}
    for b in books:  # per book: A, B, C all with the same concept: only the text can order them
        rows = [len(bank.texts) + k for k in range(3)]
        bank.texts += [f"{b} anchor", f"{b} twin", f"{b} other"]
        bank.books += [b] * 3
        bank.labels += [["c"]] * 3
        triplets[b] = np.array([rows])
    bank.triplets = triplets
    sets = {source: [[0]] * len(bank.texts) for source in ("labels", "rules", "hybrid", "unseen")}
    n = len(bank.texts)
    good = np.zeros((n, 2))
    good[0::3, 0] = good[1::3, 0] = 1.0  # anchor and twin read alike
    good[2::3, 1] = 1.0
    useless = np.ones((n, 2))  # every text alike: ties, which count as wrong
    out = compare_fallback_texts(bank, sets, ["onehot", "minilm"], {"lsa": useless, "minilm": good})
    assert out["methods"] == ["onehot"] and out["sets"] == ["openstax", "openintro", "gs"]
    choice = out["choice"]["onehot"]
    assert all(choice[b]["chosen"] == "minilm" and choice[b]["held_out_accuracy"] == 1.0 and choice[b]["lsa"] == 0.0 for b in out["sets"])
    assert choice["all"] == {"chosen": "minilm", "lsa": 0.0, "minilm": 1.0} and choice["held_out_mean"] == 1.0


def test_the_defaults_cross_validation_scores_the_ensemble_as_a_setting(monkeypatch: Any) -> None:
    """devset_table1 --cv: every setting names its ensemble size, the shipped defaults are scored with
    theirs (Prob2Vec 5 networks, the blend 1), and the shipped Prob2Vec is also scored as one network."""
    import numpy as np

    from benchmarks import devset_table1

    monkeypatch.setattr(devset_table1, "GRID", {"dim": [10], "l2": [1.0, 3.0], "epochs": [250, 500], "text_weight": [0.1], "ensemble": [1, 5]})
    monkeypatch.setattr(devset_table1, "BLEND_WEIGHTS", [0.25])
    bank = devset_table1.Bank(slugs=[f"c{k}" for k in range(6)])
    sets = []
    for b in ["openstax", "openintro", "gs", "demo"]:  # per book: anchor and positive share two concepts, the negative one
        rows = [len(bank.texts) + k for k in range(3)]
        bank.texts += [f"{b} anchor", f"{b} twin", f"{b} other"]
        bank.books += [b] * 3
        sets += [[0, 1, 2], [0, 1, 3], [2, 4, 5]]
        bank.triplets[b] = np.array([rows])
    report = devset_table1.cross_validate(bank, sets, np.eye(len(sets)), seeds=2)
    for name, members in (("prob2vec", 5), ("blend", 1)):
        rows = report[name]
        assert all(len(rows[held]["chosen"]) == 6 and rows[held]["chosen"][-1] in (1, 5) for held in ("openstax", "openintro", "gs"))
        assert rows["all"]["default"][-1] == members
        assert 0.0 <= rows["all"]["single_network_accuracy"] <= 1.0
    assert report["blend"]["all"]["single_network_accuracy"] == report["blend"]["all"]["default_accuracy"]


def test_the_defaults_are_chosen_on_first_and_third_samples_and_tested_on_the_second(monkeypatch: Any) -> None:
    """devset_table1 --cv (stop 36): a book's fold holds its first and third samples' triplets, and each
    choice is scored on the book's second-sample triplets (fresh), which are never chosen on. Here every
    fresh triplet is reversed (C shares more with A than B does), so a choice right on the folds is
    wrong on them: the fresh figure is not the folds' figure."""
    import numpy as np

    from benchmarks import devset_table1

    monkeypatch.setattr(devset_table1, "GRID", {"dim": [10], "l2": [1.0], "epochs": [250], "text_weight": [0.1], "ensemble": [1]})
    monkeypatch.setattr(devset_table1, "BLEND_WEIGHTS", [0.25])
    bank = devset_table1.Bank(slugs=[f"c{k}" for k in range(6)])
    sets: list[list[int]] = []

    def triplet(name: str, book: str, reversed_: bool = False) -> None:
        rows = [len(bank.texts) + k for k in range(3)]
        bank.texts += [f"{name} anchor", f"{name} twin", f"{name} other"]
        bank.books += [book] * 3
        sets.extend([[0, 1, 2], [0, 1, 3], [2, 4, 5]])
        bank.triplets[name] = np.array([[rows[0], rows[2], rows[1]] if reversed_ else rows])

    for b in ["openstax", "openintro", "gs", "demo"]:
        triplet(b, b)
        if b != "demo":
            triplet(f"{b}-3", b)
            triplet(f"{b}-2", b, reversed_=True)
    tuning, fresh = devset_table1.cv_triplets(bank)
    assert sorted(tuning) == sorted(fresh) == ["gs", "openintro", "openstax"]
    assert all(len(tuning[b]) == 2 and len(fresh[b]) == 1 for b in tuning)
    assert (tuning["gs"] == np.vstack([bank.triplets["gs"], bank.triplets["gs-3"]])).all() and (fresh["gs"] == bank.triplets["gs-2"]).all()
    report = devset_table1.cross_validate(bank, sets, np.eye(len(sets)))
    for name in ("prob2vec", "blend"):
        for held in ("openstax", "openintro", "gs"):
            row = report[name][held]
            assert (row["held_out_accuracy"], row["fresh_accuracy"]) == (1.0, 0.0)
            assert (row["default_accuracy"], row["default_fresh_accuracy"]) == (1.0, 0.0)
        assert (report[name]["all"]["accuracy"], report[name]["all"]["fresh_accuracy"]) == (1.0, 0.0)
    # Without later samples (the bank before stop 34) the folds are the first samples' and nothing is fresh.
    for name in [n for n in bank.triplets if n[-2:] in ("-2", "-3")]:
        del bank.triplets[name]
    tuning, fresh = devset_table1.cv_triplets(bank)
    assert fresh == {} and all(len(t) == 1 for t in tuning.values())
    assert devset_table1.cross_validate(bank, sets, np.eye(len(sets)))["prob2vec"]["all"]["fresh_accuracy"] is None


def _borrowing_bank(devset_table1: Any) -> tuple[Any, dict[str, list[list[int]]], Any]:
    """Per dev book a triplet whose anchor A has no rule concept: it borrows from D, which reads exactly
    like it and has C's concepts, while A's own text is nearer B's (cosine 0.3) than C's (0). Only a
    text share of 1 for a borrowed row orders it as the expert does. In the hybrid and unseen sources
    A has B's concepts, so every weight gets it right there."""
    import numpy as np

    bank = devset_table1.Bank(slugs=[f"c{k}" for k in range(4)])
    rules: list[list[int]] = []
    others: list[list[int]] = []
    books = ["openstax", "openintro", "gs"]
    text = np.zeros((4 * len(books), 3 * len(books)))
    for k, b in enumerate(books):
        rows = [len(bank.texts) + j for j in range(4)]  # A, B, C, D
        bank.texts += [f"{b} {role}" for role in "ABCD"]
        bank.books += [b] * 4
        bank.labels += [None] * 4
        rules += [[], [0, 1], [2, 3], [2, 3]]
        others += [[0, 1], [0, 1], [2, 3], [2, 3]]
        a, near, far = 3 * k, 3 * k + 1, 3 * k + 2
        text[rows[0], a] = text[rows[3], a] = 1.0
        text[rows[1], [a, near]] = [0.3, np.sqrt(1 - 0.09)]
        text[rows[2], far] = 1.0
        bank.triplets[b] = np.array([rows[:3]])
    return bank, {"labels": others, "rules": rules, "hybrid": others, "unseen": others}, text


def test_the_borrowed_weight_is_chosen_where_it_acts_and_ties_keep_the_shipped_one() -> None:
    """devset_table1 --cv (stop 37): the borrowed text weight, which is also the cap of the share that
    follows the recall, is chosen on the mean over the rules, hybrid and unseen sources, leaving one book
    out. Here only the rules source has a problem that borrows, and only a weight of 1 orders its
    triplet right: every fold chooses it. Chosen on the unseen source alone, as before stop 37, every
    weight would tie."""
    import numpy as np

    from benchmarks import devset_table1

    bank, sets, text = _borrowing_bank(devset_table1)
    report = devset_table1.cross_validate_borrowed(bank, sets, text)
    for held in ("openstax", "openintro", "gs"):
        row = report[held]
        assert row["chosen"] == 1.0 and row["held_out_accuracy"] == 1.0
        assert row["default_accuracy"] == row["plain"] == np.mean([0.0, 1.0, 1.0])  # wrong on rules only
        assert row["fresh_accuracy"] is None  # no second samples here
    every = report["all"]["by_source"]
    assert every["rules"][1.0]["tuning"] == 1.0 and every["rules"][0.5]["tuning"] == 0.0
    assert all(every[s][wb]["tuning"] == 1.0 for s in ("hybrid", "unseen") for wb in every[s])
    assert report["all"]["folds_accuracy"] > report["all"]["shipped_folds_accuracy"]
    # Where no weight does better than another, the shipped one stays in every fold.
    sets = {**sets, "rules": sets["unseen"]}
    report = devset_table1.cross_validate_borrowed(bank, sets, text)
    shipped = devset_table1.METHODS["prob2vec"].defaults["borrowed_text_weight"]
    assert all(report[b]["chosen"] == shipped for b in ("openstax", "openintro", "gs")) and report["all"]["chosen"] == shipped


def test_the_borrowed_weight_folds_hold_first_and_third_samples_and_score_the_second() -> None:
    """The borrowed weight's folds are cv_triplets' (stop 37): a book's first and third samples'
    triplets, chosen on; its second sample's, scored as fresh and never chosen on. Here the fresh
    triplet is the tuning one reversed, so the weight right on the folds is wrong on it."""
    import numpy as np

    from benchmarks import devset_table1

    bank, sets, text = _borrowing_bank(devset_table1)
    for b in ("openstax", "openintro", "gs"):
        a, pos, neg = bank.triplets[b][0]
        bank.triplets[f"{b}-3"] = np.array([[a, pos, neg]])
        bank.triplets[f"{b}-2"] = np.array([[a, neg, pos]])
    report = devset_table1.cross_validate_borrowed(bank, sets, text, seeds=2)
    for held in ("openstax", "openintro", "gs"):
        row = report[held]
        assert row["chosen"] == 1.0 and (row["held_out_accuracy"], row["fresh_accuracy"]) == (1.0, 0.0)
        assert row["default_fresh_accuracy"] == np.mean([1.0, 0.0, 0.0])  # the reversed triplet: right on rules only
    assert report["all"]["fresh_accuracy"] == 0.0


def test_the_triplet_anatomy_sorts_triplets_by_what_the_concepts_alone_say() -> None:
    """devset_table1's "why the triplets fail": a tie (B and C with the same concepts) is decided by the
    text alone; otherwise plain overlap (Jaccard) agrees, disagrees or is even; each kind counts the
    triplets the method got right, here with concept overlap's real cosines and no text."""
    import numpy as np

    from benchmarks.devset_table1 import ANATOMY, anatomy
    from embeddings.algorithms.methods import BankData, embed
    from embeddings.algorithms.metrics import triplet_correct

    sets = [[0], [0], [0], [0, 1], [2], [0, 1, 2], [1], [0, 2]]
    triplets = np.array([
        [0, 1, 2],  # B and C both {0}: a tie, which overlap cannot order (counted wrong)
        [0, 3, 4],  # {0} vs {0,1} 1/2 and {2} 0: overlap agrees and gets it right
        [0, 4, 3],  # the same, reversed: overlap disagrees and gets it wrong
        [5, 6, 7],  # {1} 1/3 vs {0,2} 2/3: disagrees
        [3, 6, 0],  # {1} 1/2 vs {0} 1/2, different sets: even; overlap's 1/f weights favour the rarer 1
    ])
    vectors = embed("onehot", BankData(sets, 3), {"text_weight": 0.0}).vectors
    correct = triplet_correct(vectors, triplets)
    assert correct.tolist() == [False, True, False, False, True]
    kinds = anatomy(sets, triplets, correct)
    assert list(kinds) == list(ANATOMY)
    assert kinds == {
        "tie": {"triplets": 1, "correct": 0},
        "overlap_agrees": {"triplets": 1, "correct": 1},
        "overlap_even": {"triplets": 1, "correct": 1},
        "overlap_disagrees": {"triplets": 2, "correct": 0},
    }
    # Every triplet is counted once.
    assert sum(k["triplets"] for k in kinds.values()) == len(triplets)


def test_devset_table1_measures_each_books_recall_as_the_app_does_per_collection() -> None:
    """benchmarks/devset_table1.bank_data: the labels source carries no recall; rules, hybrid and unseen
    carry each book's recall on its labelled problems (NaN under the app's minimum of labelled problems),
    which embed() turns into each row's text weight."""
    import numpy as np

    from benchmarks.devset_table1 import Bank, bank_data, recall_per_book
    from embeddings.algorithms.fallback import RECALL_MIN_LABELLED

    n = RECALL_MIN_LABELLED
    bank = Bank(slugs=["a", "b"])
    for book, found in (("tuned", [0, 1]), ("new", [0]), ("few", [0])):
        count = n if book != "few" else n - 1
        bank.texts += [f"{book} {i}" for i in range(count)]
        bank.books += [book] * count
        bank.labels += [["a", "b"]] * count
    rules = [[0, 1] if b == "tuned" else [0] for b in bank.books]
    sets = {"labels": bank.sets(bank.labels), "rules": rules}
    text = np.eye(len(bank.texts))
    assert bank_data(bank, sets, "labels", text).concept_recall is None
    recall = bank_data(bank, sets, "rules", text).concept_recall
    books = np.array(bank.books)
    assert np.all(recall[books == "tuned"] == 1.0) and np.all(recall[books == "new"] == 0.5) and np.isnan(recall[books == "few"]).all()
    # The book's held-out problems (its second sample, in load_bank), where enough: their recall alone.
    tuned_rows = [i for i, b in enumerate(bank.books) if b == "tuned"]
    bank.texts += [f"tuned fresh {i}" for i in range(n)]
    bank.books += ["tuned"] * n
    bank.labels += [["a", "b"]] * n
    rules += [[] for _ in range(n)]
    bank.held_out = set(range(len(bank.texts) - n, len(bank.texts)))
    text = np.eye(len(bank.texts))
    recall = bank_data(bank, {"labels": bank.sets(bank.labels), "rules": rules}, "rules", text).concept_recall
    assert np.all(recall[tuned_rows] == 0.0) and np.all(recall[sorted(bank.held_out)] == 0.0)
    # What the script prints per book: the recall used, the one on every label, and the text share.
    # Recall 0 takes the borrowed text weight, the cap (0.7 since stop 39); recall 0.5 takes 1 - 0.5.
    assert recall_per_book(bank, rules)["tuned"] == {"recall": 0.0, "measured_on": "held-out", "every_label": 0.5, "text_share": 0.7}
    assert recall_per_book(bank, rules)["new"] == {"recall": 0.5, "measured_on": "labelled", "every_label": 0.5, "text_share": 0.5}


@needs_books
def test_the_table1_bank_holds_out_each_books_second_sample() -> None:
    from benchmarks.devset_table1 import load_bank

    bank = load_bank()
    assert len(bank.held_out) == sum(len(devsets.labels(folder)) for folder in devsets.SECOND_SAMPLES)
    assert all(bank.labels[i] for i in bank.held_out)
    held_out_books = {bank.books[i] for i in bank.held_out}
    assert held_out_books == {devsets.BOOKS[of] for of in devsets.SECOND_OF.values()}


@needs_books
@pytest.mark.slow
@pytest.mark.django_db
def test_a_book_with_its_held_out_sample_through_the_apps_commands_gives_the_benchmarks_figures(tmp_path: Path) -> None:
    """What a course does (devset_pipeline.py): import the book, the labels rules were written from,
    and the second sample's with import_labels --held-out. extractor_report --held-out then prints
    exactly rule_quality.py's second-sample FN/FP, and the rule editor's analysis counts only the
    labels rules may be written from."""
    from benchmarks.rule_quality import compiled_rules, dev_book, load_concepts, measure
    from concepts.selectors import held_out_ids, rules_analysis

    book, folder = "openintro-statistics-4e", "openintro-statistics-4e-2"
    paths = devsets.write_import_files(book, tmp_path)
    call_command("load_demo", "--no-users", stdout=io.StringIO())
    for args in (["import_problems", str(paths["problems"])], ["import_labels", str(paths["labels"])],
                 ["import_labels", str(paths["held_out_labels"]), "--held-out"]):
        call_command(*args, "--collection", book, stdout=io.StringIO())
    assert len(held_out_ids(book)) == len(devsets.labels(folder))
    out = io.StringIO()
    call_command("extractor_report", "--collection", book, "--held-out", "--json", stdout=out)
    report = json.loads(out.getvalue())
    _, texts, truth = dev_book(folder)
    expected = measure(texts, truth, load_concepts(), compiled_rules())
    assert report["problems"] == len(devsets.labels(folder))
    assert report["average"]["fn_rate"] == pytest.approx(expected["fn_rate"], abs=1e-9)
    assert report["average"]["fp_rate"] == pytest.approx(expected["fp_rate"], abs=1e-9)
    assert rules_analysis(collection=book).analysis.labelled == len(devsets.book_labels(book)) - len(devsets.labels(folder))
    lines = [json.loads(x) for x in paths["held_out_triplets"].read_text().splitlines()]
    assert lines == [{k: t[k] for k in ("anchor", "positive", "negative")} for t in devsets.triplets(folder)]


def test_rule_quality_reports_micro_recall_and_precision_over_all_labelled_concepts() -> None:
    from benchmarks.rule_quality import measure
    from concepts import extraction

    compiled = extraction.compile_rules([extraction.Rule("nchoosek", r"\bchoose\b"), extraction.Rule("p-value", r"\bp-values?\b")])
    texts = ["Choose 2 of 5.", "Find the p-value; then choose.", "Nothing here."]
    truth = [{"nchoosek"}, {"p-value"}, {"p-value"}]
    result = measure(texts, truth, ["nchoosek", "p-value"], compiled)
    # found: {nchoosek}, {p-value, nchoosek}, {}: 2 of the 3 found are right, 2 of the 3 labelled are found
    assert result["micro_precision"] == pytest.approx(2 / 3) and result["micro_recall"] == pytest.approx(2 / 3)
    assert measure(["Nothing."], [{"p-value"}], ["p-value"], compiled)["micro_precision"] is None  # nothing found


def test_the_new_book_curve_learns_from_the_books_own_labels_and_never_scores_them() -> None:
    from benchmarks.rule_quality import new_book_curve

    rng = __import__("random").Random(3)
    filler = "apples bread cheese dates eggs figs grapes honey ink jam kites lemons".split()

    def text(words: list[str]) -> str:
        return " ".join(words + rng.sample(filler, 4))

    texts, books, labels = [], [], []
    for book, word in (("a", "binomial"), ("b", "binomial"), ("new", "bernoulli")):  # the new book words it its own way
        for i in range(40):
            has = i % 2 == 0
            texts.append(text([word, "trials"] if has else ["mean", "median"]))
            books.append(book)
            labels.append({"binomial-distribution"} if has else {"mean-median-mode"})
    # The rules know the other books' word only, and "mean" everywhere.
    def rules(t: str) -> set[str]:
        return ({"binomial-distribution"} if "binomial" in t else set()) | ({"mean-median-mode"} if "mean" in t else set())
    found = [rules(t) for t in texts]
    curve = new_book_curve(texts, books, labels, {b: found for b in ("a", "b", "new")},
                           ["binomial-distribution", "mean-median-mode"], "new", ks=(0, 20), draws=2)
    assert [len(runs) for runs in curve.values()] == [1, 2]  # k = 0 has nothing to draw
    (rules0, learned0), = curve[0]
    assert rules0.problems == learned0.problems == 40
    # Neither the rules nor a model trained on the other books know the new book's wording.
    assert rules0.concepts["binomial-distribution"].fn == learned0.concepts["binomial-distribution"].fn == 20
    for rules_k, learned_k in curve[20]:
        assert rules_k.problems == 20  # scored on the 20 labelled problems it did not train on
        assert rules_k.concepts["binomial-distribution"].fn_rate == 1.0
        assert learned_k.concepts["binomial-distribution"].fn_rate <= 0.2  # 20 of its own labels teach it the word


def test_rule_pruning_deletes_the_lines_the_analysis_page_lists_and_keeps_the_rest() -> None:
    from benchmarks.rule_pruning import listed, only_harm, pruned

    rules = {
        # line 1 right twice; line 2 wrong twice and right once, where line 1 also matches
        "nchoosek": {"pattern": r"\bchoose\b|\bselect", "ignore_case": True},
        # the backtracking engine runs it: no lines to judge, kept whole
        "p-value": {"pattern": r"p-value(?=s?\b)", "ignore_case": True},
        # matches an unlabelled problem only: nothing to go by, kept
        "Poisson-process": {"pattern": r"\barrivals\b", "ignore_case": True},
    }
    texts = ["Choose 2 of 5.", "Choose and select 3.", "Select a p-value.", "Select the test.", "Arrivals."]
    truth = [{"nchoosek"}, {"nchoosek"}, {"p-value"}, set(), None]
    kept, dropped = pruned(rules, texts, truth, listed)
    assert dropped == 1 and kept["nchoosek"]["pattern"] == r"\bchoose\b"
    assert kept["p-value"] == rules["p-value"] and kept["Poisson-process"] == rules["Poisson-process"]
    # only-harm weighs what no other line matches: line 2's own matches are both wrong, its right one shared
    assert pruned(rules, texts, truth, only_harm) == (kept, 1)
    # a rule whose every line goes is left out
    kept, dropped = pruned({"nchoosek": {"pattern": r"\bselect", "ignore_case": True}}, texts, truth, listed)
    assert kept == {} and dropped == 1


def test_with_the_triplet_share_on_a_books_tuning_triplets_choose_its_share_and_are_scored_out_of_fold() -> None:
    """devset_table1 --triplet-share (stop 38): a book's first and third samples' triplets, and the
    demo's, are what a course would have accepted; the second samples' and the test splits' never are.
    A set that chose its book's share is scored with the share chosen on the other folds; a fresh set
    with the run's own vectors."""
    import numpy as np

    from benchmarks import devset_table1

    bank = devset_table1.Bank(slugs=["c0"])
    for name, m in (("gs", 2), ("gs-3", 3), ("gs-2", 2), ("demo", 1), ("math", 1)):
        bank.triplets[name] = np.arange(3 * m).reshape(m, 3)
    assert devset_table1.accepted_triplets(bank) == {"gs": ["gs", "gs-3"], "demo": ["demo"]}
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]] * 3)  # every triplet right with these vectors
    notes = {"triplet_share": {"gs": {"out_of_fold": [1, 0, 0, 1, 0]}}}
    assert devset_table1.set_correct(bank, vectors, notes, "gs").tolist() == [True, False]
    assert devset_table1.set_correct(bank, vectors, notes, "gs-3").tolist() == [False, True, False]
    assert devset_table1.set_correct(bank, vectors, notes, "gs-2").tolist() == [True, True]
    assert devset_table1.set_correct(bank, vectors, notes, "demo").tolist() == [True]  # no share chosen there
    assert devset_table1.triplet_share_params(bank) == {} and not devset_table1.bank_data(bank, {"rules": [[0]] * 9}, "rules", vectors).share_triplets
    bank.share_triplets = True
    assert devset_table1.triplet_share_params(bank) == {"triplet_share_min": 30}


def test_the_benchmarks_rules_read_the_solution_as_the_app_does_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """devset_table1 and rule_quality (stop 39): the rules and the learned half read a problem's statement
    and then its solution (extraction.rule_text, RULES_READ_SOLUTIONS); --no-solutions, the statement alone.
    The text methods read the statement either way."""
    from benchmarks import devset_table1, rule_quality

    bank = devset_table1.Bank(texts=["Find P(X = 0).", "Roll a die."], books=["demo", "demo"], labels=[None, None],
                              slugs=["Poisson-distribution"], solutions=["X is Poisson, so e^{-2}.", None])
    assert bank.rule_texts() == ["Find P(X = 0).\n\nSolution: X is Poisson, so e^{-2}.", "Roll a die."]
    rules = {"Poisson-distribution": {"pattern": r"\bpoisson\b", "ignore_case": True}}
    sets, _ = devset_table1.source_sets(bank, rules_without=lambda name: rules)
    assert sets["rules"] == [[0], []] and sets["unseen"] == [[0], []]
    bank.texts.append("A third problem, listed without a solution.")  # as a bank built by hand may be
    assert bank.rule_texts()[2] == "A third problem, listed without a solution."
    bank.texts.pop()
    bank.reads_solutions = False
    assert bank.rule_texts() == bank.texts
    assert devset_table1.source_sets(bank, rules_without=lambda name: rules)[0]["rules"] == [[], []]
    record = {"text": "Find P(X = 0).", "solution": "X is Poisson."}
    assert rule_quality.rule_text(record) == "Find P(X = 0).\n\nSolution: X is Poisson."
    monkeypatch.setattr(rule_quality, "READS_SOLUTIONS", False)
    assert rule_quality.rule_text(record) == "Find P(X = 0)."


def test_the_oracles_mend_the_rules_one_kind_of_error_at_a_time_on_labelled_problems_only() -> None:
    """devset_table1 --oracles (stop 43): "no wrong concept" drops what the labels lack, "no missed
    concept" adds what the rules missed, an unlabelled problem keeps the rules' concepts, and the
    overlap ceiling counts ties and even overlaps as half."""
    import numpy as np

    from benchmarks.devset_table1 import Bank, oracle_sets, oracles, overlap_ceiling

    bank = Bank(slugs=["a", "b", "c", "d"])
    # rows: A (labels a, b; rules a, d), B (labels a, b; rules a), C (labels c; rules d), unlabelled (rules d)
    bank.labels = [["a", "b"], ["a", "b"], ["c"], None]
    bank.texts = ["anchor", "near", "far", "unlabelled"]
    bank.books = ["openstax"] * 4
    rules = [[0, 3], [0], [3], [3]]
    mended = oracle_sets(bank, rules)
    assert mended["rules"] == rules
    assert mended["no wrong concept"] == [[0], [0], [], [3]]
    assert mended["no missed concept"] == [[0, 1, 3], [0, 1], [2, 3], [3]]
    triplet = np.array([[0, 1, 2]])
    # By the rules A shares a with B as much as d with C (Jaccard 1/2 each): even, counted half; by the labels, B wins.
    assert overlap_ceiling(rules, triplet) == 0.5
    assert overlap_ceiling(bank.sets(bank.labels), triplet) == 1.0
    assert overlap_ceiling(rules, np.array([[2, 0, 1]])) == 1.0  # {d}: {a, d} shares more than {a}
    assert overlap_ceiling(rules, np.array([[2, 1, 0]])) == 0.0  # the same, positive and negative swapped
    assert overlap_ceiling([[0], [1], [1]], triplet) == 0.5  # B and C tie: only the text could order them

    # The same bank with rules that get the triplet wrong: A carries a wrong c (shared with C) and B
    # misses a. Dropping wrong concepts is not enough here (A and B still share nothing); adding the
    # missed ones is. The mended rows are real runs of the method, each draw its own seed.
    bank.triplets = {"openstax": triplet}
    rules = [[0, 2], [1], [2], [3]]
    out = oracles(bank, {"rules": rules, "labels": bank.sets(bank.labels)}, np.eye(4), seeds=2, methods=("onehot", "prob2vec"))
    for method in ("onehot", "prob2vec"):
        assert out[method] == {"rules": {"openstax": 0.0}, "no wrong concept": {"openstax": 0.0},
                               "no missed concept": {"openstax": 1.0}, "labels": {"openstax": 1.0}}
    assert out["overlap"] == {"labels": {"openstax": 1.0}, "rules": {"openstax": 0.0}}


def test_rule_quality_counts_the_concepts_found_missed_and_wrong() -> None:
    """rule_quality.py (stop 43) prints, per set, how many labelled concepts the rules found, missed and
    found wrongly: the counts behind recall and precision, pooled over concepts."""
    from benchmarks.rule_quality import measure
    from concepts import extraction

    compiled = extraction.compile_rules([extraction.Rule("nchoosek", r"\bchoose\b"), extraction.Rule("pmf", r"\bpmf\b")])
    texts = ["choose two of five", "the pmf of X", "choose a pmf", "nothing here"]
    truth = [{"nchoosek"}, {"nchoosek"}, {"pmf"}, {"pmf"}]
    r = measure(texts, truth, ["nchoosek", "pmf"], compiled)
    # found: nchoosek in 0 (right), pmf in 1 (wrong), nchoosek in 2 (wrong) and pmf in 2 (right);
    # missed: nchoosek in 1, pmf in 3.
    assert (r["found_right"], r["missed"], r["wrong"]) == (2, 2, 2)
    assert r["micro_recall"] == 0.5 and r["micro_precision"] == 0.5
