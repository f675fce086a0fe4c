"""The dev sets: expert labels and triplets on three public books, kept here by problem id only.

The books' text stays in ``../shared/data`` (never committed); this module joins the two. Plain
Python, no Django: benchmarks and tests read it directly, and write the files the app's own import
commands take (``import_problems``, ``import_labels``, ``import_triplets``).

A book's problems are imported with their **chapter** as the module: triplets are built within one
chapter, and the app refuses a triplet whose problems span modules.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# folder under shared/data -> short name used in tables and in rules.json "from" tags
BOOKS = {
    "openstax-introductory-statistics-2e": "openstax",
    "openintro-statistics-4e": "openintro",
    "grinstead-snell-probability": "gs",
}
# Test splits (TEST_SETS.md): collections the rules were never written from; measured, never tuned on.
TEST_SETS = {
    "theoremqa-probability-statistics": "theoremqa",
    "math-counting-probability": "math",
}
# Genre dev samples (sample_genre_dev.py): problems of the test splits' collections that the test
# splits did not take, labelled for tuning rules on competition counting and theorem questions.
# Folder -> short name; each folder is its shared/data collection's name plus "-dev" (GENRE_DEV_OF).
GENRE_DEV = {
    "math-counting-probability-dev": "math-dev",
    "theoremqa-probability-statistics-dev": "theoremqa-dev",
}
GENRE_DEV_OF = {dev: dev.removesuffix("-dev") for dev in GENRE_DEV}
# Second samples of a dev book (sample.py --second, stop 33): more of its problems, drawn after the rules
# were written, outside its first sample and so outside its triplets, labelled the same way. A yardstick:
# no rule is written from them (rule_quality.py prints no misses for them, rule_workbench.py does not
# offer them). Folder -> short name; the folder is the book's plus "-2". ``origin`` maps a short name to
# its book's, so that leave-one-book-out leaves out the book's branches; the bank (devset_table1) holds
# their labels with the book's (``book_labels``).
SECOND_SAMPLES = {
    "openstax-introductory-statistics-2e-2": "openstax-2",
    "openintro-statistics-4e-2": "openintro-2",
    "grinstead-snell-probability-2": "gs-2",
}
SECOND_OF = {folder: folder.removesuffix("-2") for folder in SECOND_SAMPLES}
# Third samples of a dev book (sample.py --third, stop 34): more of its problems again, outside the first
# and second samples, labelled the same way. Unlike the second samples they are for tuning: rules are
# written from their misses (tagged with the book's origin) and the bank trains the learned extractor on
# their labels, as a course that labels more of its bank would. Folder -> short name ("-3").
THIRD_SAMPLES = {
    "openstax-introductory-statistics-2e-3": "openstax-3",
    "openintro-statistics-4e-3": "openintro-3",
    "grinstead-snell-probability-3": "gs-3",
}
THIRD_OF = {folder: folder.removesuffix("-3") for folder in THIRD_SAMPLES}
# A later sample's folder -> its book's folder.
SAMPLE_OF = {**SECOND_OF, **THIRD_OF}


def second_sample(book: str) -> str | None:
    """The folder of a book's second sample (never written from: what a course holds out), if it has one."""
    return next((folder for folder, of in SECOND_OF.items() if of == book), None)


def collection_of(folder: str) -> str:
    """The shared/data collection a dev-set folder draws from."""
    return GENRE_DEV_OF.get(folder) or SAMPLE_OF.get(folder) or folder


_BOOK_OF_SAMPLE = {name: BOOKS[SAMPLE_OF[folder]] for folder, name in {**SECOND_SAMPLES, **THIRD_SAMPLES}.items()}


def origin(name: str) -> str:
    """The rules.json origin of a dev set's short name: a later sample's is its book's ("gs-2" -> "gs")."""
    return _BOOK_OF_SAMPLE.get(name, name)


def shared_data_dir() -> Path:
    """``$PROB2VEC_SHARED_DATA``, else ``../shared/data`` beside the project."""
    return Path(os.environ.get("PROB2VEC_SHARED_DATA") or ROOT.parent / "shared" / "data")


def missing_reason(shared: Path | None = None, collections: dict[str, str] = BOOKS) -> str:
    """Why the dev sets (or ``collections``) cannot be used here, or "" when all their problems are present."""
    shared = shared or shared_data_dir()
    absent = [book for book in collections if not (shared / collection_of(book) / "problems.jsonl").exists()]
    if absent:
        return f"the public collections are not at {shared} (missing: {', '.join(absent)}); set PROB2VEC_SHARED_DATA"
    return ""


def _jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def chapter_of(record: dict) -> str:
    return str(record.get("chapter") or record["module"].split(".")[0])


def book_problems(book: str, shared: Path | None = None) -> list[dict]:
    """Every problem of the book, as in shared/data but with ``module`` set to its chapter."""
    records = _jsonl((shared or shared_data_dir()) / collection_of(book) / "problems.jsonl")
    return [{**r, "module": chapter_of(r), "section": r["module"]} for r in records]


def labels(book: str) -> dict[str, list[str]]:
    """Resolved ground truth: problem id -> concept slugs, most specific first."""
    return {r["id"]: r["concepts"] for r in _jsonl(HERE / book / "labels.jsonl")}


def book_labels(book: str) -> dict[str, list[str]]:
    """Every label of a book: its first sample's and its later samples' (what a course's bank holds)."""
    merged = dict(labels(book))
    for folder, of in SAMPLE_OF.items():
        if of == book:
            merged.update(labels(folder))
    return merged


def skipped(book: str) -> dict[str, str]:
    """Sampled problems left unlabelled by the guide: id -> reason."""
    return {r["id"]: r["reason"] for r in _jsonl(HERE / book / "skipped.jsonl")}


def triplets(book: str) -> list[dict]:
    """Accepted expert triplets: {anchor, positive, negative, kind, wording}."""
    return _jsonl(HERE / book / "triplets.jsonl")


def overlap(book: str, annotator: str) -> dict[str, list[str] | None]:
    """One annotator's independent labels of the shared sample (None: skipped by the guide)."""
    return {r["id"]: (None if "skip" in r else r["concepts"]) for r in _jsonl(HERE / book / f"overlap-{annotator}.jsonl")}


def write_import_files(book: str, folder: Path, shared: Path | None = None, problems: str = "all") -> dict[str, Path]:
    """Write ``problems.jsonl`` (module = chapter), ``labels.jsonl`` and ``triplets.jsonl`` for the
    import commands into ``folder``; ``problems="labelled"`` keeps only the labelled problems and the
    first sample's labels. With every problem, the labels are those rules were written from (the first
    and third samples'); where the book has a second sample (never written from), also
    ``held_out_labels`` and ``held_out_triplets``: what a course imports with ``import_labels
    --held-out`` and scores with ``evaluate_triplets --triplets``."""
    folder.mkdir(parents=True, exist_ok=True)
    second = second_sample(book)
    held_out = labels(second) if second is not None else {}

    def write_labels(path: Path, by_id: dict[str, list[str]]) -> None:
        path.write_text("".join(json.dumps({"id": i, "concepts": c}) + "\n" for i, c in by_id.items()), encoding="utf-8")

    def write_triplets(path: Path, rows: list[dict]) -> None:
        path.write_text("".join(json.dumps({k: t[k] for k in ("anchor", "positive", "negative")}) + "\n" for t in rows), encoding="utf-8")

    truth = labels(book) if problems == "labelled" else {i: c for i, c in book_labels(book).items() if i not in held_out}
    records = [r for r in book_problems(book, shared) if problems == "all" or r["id"] in truth]
    paths = {"problems": folder / f"{book}.jsonl", "labels": folder / f"{book}-labels.jsonl", "triplets": folder / f"{book}-triplets.jsonl"}
    keys = ("id", "text", "module", "level", "answer", "solution", "source")
    paths["problems"].write_text("".join(json.dumps({k: r.get(k) for k in keys} | {"labels": []}) + "\n" for r in records), encoding="utf-8")
    write_labels(paths["labels"], truth)
    write_triplets(paths["triplets"], triplets(book))
    if second is not None and problems == "all":
        paths["held_out_labels"] = folder / f"{second}-labels.jsonl"
        paths["held_out_triplets"] = folder / f"{second}-triplets.jsonl"
        write_labels(paths["held_out_labels"], held_out)
        write_triplets(paths["held_out_triplets"], triplets(second))
    return paths
