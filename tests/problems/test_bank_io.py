"""Pure parsing/writing of problem files: no database."""

from __future__ import annotations

import json

import pytest

from problems import bank_io
from problems.bank_io import parse_csv, parse_jsonl


def line(**obj: object) -> bytes:
    return json.dumps(obj).encode()


VALID = {
    "id": "a1",
    "text": "Find $P(A \\mid B)$.",
    "module": "conditional probability",
    "labels": ["conditional-probability"],
    "level": "easy",
    "answer": 0.5,
    "solution": None,
    "source": "ours",
    "extra_key": "ignored",
}

INVALID_LINES = [
    (b"{not json", "bad JSON"),
    (b"[1, 2]", "expected a JSON object"),
    (line(text="no id"), "missing 'id'"),
    (line(id="   ", text="an id of spaces"), "missing 'id'"),
    (line(id="x", text="t", title="t" * (bank_io.MAX_TITLE_CHARS + 1)), "'title' is longer than 200 characters"),
    (line(id="x"), "missing 'text'"),
    (line(id="x", text="   "), "empty 'text'"),
    (line(id="x", text=5), "'text' must be a string"),
    (line(id="x", text="t", labels=3), "'labels' must be a list"),
    (line(id=True, text="t"), "'id' must be a string or an integer"),
    (line(id="x", text="t" * (bank_io.MAX_TEXT_CHARS + 1)), "oversized"),
    (b'{"id": "x", "text": "caf\xe9"}', "not UTF-8"),
    (line(id="x", text="t", released="maybe"), "'released' must be true or false"),
    # A name, title or solution that is a JSON object, list or true/false: stored as its JSON spelling
    # it made a module named `{"x": 1}` and a title `["x"]`.
    (line(id="x", text="t", module={"x": 1}), "'module' must be text (or a number), got dict"),
    (line(id="x", text="t", title=["x"]), "'title' must be text (or a number), got list"),
    (line(id="x", text="t", collection=True), "'collection' must be text (or a number), got bool"),
    (line(id="x", text="t", level=[3]), "'level' must be text (or a number), got list"),
    (line(id="x", text="t", source={"book": "b"}), "'source' must be text (or a number), got dict"),
    (line(id="x", text="t", solution=["step"]), "'solution' must be text (or a number), got list"),
]


def test_it_reads_a_valid_line_and_ignores_other_keys() -> None:
    result = parse_jsonl(line(**VALID) + b"\n\n")
    assert result.errors == []
    [rec] = result.records
    assert rec.source_id == "a1"
    assert rec.labels == ("conditional-probability",)
    assert rec.answer == "0.5"  # numbers keep their JSON spelling
    assert rec.solution == ""
    assert rec.title == "Find $P(A \\mid B)$."
    assert rec.line == 1
    # Numbers are names too ("module": 3), and an answer may be a list (TheoremQA's are).
    rec = parse_jsonl(line(**{**VALID, "module": 3, "level": 2.5, "answer": [1.0, 0.25]})).records[0]
    assert (rec.module, rec.level, rec.answer) == ("3", "2.5", "[1.0, 0.25]")


@pytest.mark.parametrize("raw, reason", INVALID_LINES)
def test_it_reports_each_bad_line_with_its_number(raw: bytes, reason: str) -> None:
    data = line(id="ok1", text="fine") + b"\n" + raw + b"\n" + line(id="ok2", text="fine")
    result = parse_jsonl(data)
    assert [e.line for e in result.errors] == [2]
    assert reason in result.errors[0].reason


def test_it_reports_every_bad_line_not_only_the_first() -> None:
    data = b"\n".join([b"{", line(id="a", text="t"), line(id="b"), b"null", line(id="a", text="again")])
    errors = parse_jsonl(data).errors
    assert [(e.line, e.reason.split(":")[0]) for e in errors] == [
        (1, "bad JSON"),
        (3, "missing 'text'"),
        (4, "expected a JSON object, got NoneType"),
        (5, "duplicate id 'a' (first on line 2)"),
    ]


def test_duplicates_are_ids_repeated_in_the_collection_a_record_is_imported_into() -> None:
    data = b"\n".join([line(id="1", text="First.", collection="A"), line(id="1", text="Second.", collection="B"), line(id="2", text="t")])
    assert parse_jsonl(data).errors == []  # each in its own collection
    [error] = parse_jsonl(data, collection="X").errors  # --collection puts them both in X
    assert (error.line, error.reason) == (2, "duplicate id '1' (first on line 1)")
    # a record without a collection goes to the default one (the folder's name), as does one naming it
    data = b"\n".join([line(id="1", text="First."), line(id="1", text="Second.", collection="c")])
    assert parse_jsonl(data, default_collection="d").errors == []
    assert [e.line for e in parse_jsonl(data, default_collection="c").errors] == [2]
    csv_data = b"id,collection,text\n1,A,First.\n1,B,Second.\n"
    assert parse_csv(csv_data).errors == []
    assert [str(e) for e in bank_io.parse_problem_file(csv_data, "p.csv", collection="X").errors] == [
        "line 3: duplicate id '1' (first on line 2)"
    ]


def test_it_refuses_an_oversized_line() -> None:
    raw = line(id="x", text="y" * (bank_io.MAX_LINE_BYTES + 10))
    [error] = parse_jsonl(raw).errors
    assert "oversized" in error.reason and error.line == 1


def test_integer_ids_become_strings() -> None:
    [rec] = parse_jsonl(line(id=17, text="t")).records
    assert rec.source_id == "17"


def test_csv_reads_labels_separated_by_semicolons() -> None:
    data = b'id,text,labels,module\nq1,"Two\nlines",nchoosek; permutations,counting\n'
    result = parse_csv(data)
    assert result.errors == []
    [rec] = result.records
    assert rec.text == "Two\nlines" and rec.labels == ("nchoosek", "permutations")


def test_csv_needs_id_and_text_columns() -> None:
    [error] = parse_csv(b"name,body\nx,y\n").errors
    assert "'id' and 'text'" in error.reason


def test_csv_reports_bad_rows_and_non_utf8() -> None:
    assert [e.line for e in parse_csv(b"id,text\na,ok\nb,\n").errors] == [3]
    assert parse_csv(b"id,text\na,caf\xe9\n").errors[0].reason == "not UTF-8"
    assert parse_csv(b"id,text\na,caf\xe9\n").errors[0].line == 2


def test_a_long_solution_that_jsonl_takes_reads_back_from_the_csv_export_and_later_rows_too() -> None:
    solution = "Step. " * 30_000  # 180,000 characters: over csv's own 131,072, under a row's cap
    records = parse_jsonl(line(id="a1", text="Roll a die.", solution=solution) + b"\n" + line(id="a2", text="Flip a coin.")).records
    assert [r.source_id for r in records] == ["a1", "a2"]
    result = parse_csv("".join(bank_io.dump_csv(records)).encode())
    assert result.errors == [] and [(r.source_id, r.solution) for r in result.records] == [("a1", records[0].solution), ("a2", "")] and len(records[0].solution) > 131_072
    # A row over the cap is still a bad line, and the rows after it are read.
    too_long = "x" * (bank_io.MAX_LINE_BYTES + 1)
    result = parse_csv(f"id,text,solution\nb1,Roll.,{too_long}\nb2,Flip.,\n".encode())
    assert [(e.line, "oversized" in e.reason) for e in result.errors] == [(2, True)] and [r.source_id for r in result.records] == ["b2"]


@pytest.mark.parametrize("dump, parse", [(bank_io.dump_jsonl, parse_jsonl), (bank_io.dump_csv, parse_csv)])
def test_dump_then_parse_gives_back_the_same_records(dump, parse) -> None:  # type: ignore[no-untyped-def]
    records = parse_jsonl(
        b"\n".join(
            [
                line(**VALID),
                line(id="b,2", text='Quotes " and, commas\nand newlines', labels=[], released=True, collection="c"),
            ]
        )
    ).records
    text = "".join(dump(records)).encode()
    again = parse(text)
    assert again.errors == []
    strip = lambda r: (r.source_id, r.text, r.module, r.labels, r.level, r.answer, r.solution, r.source, r.title)  # noqa: E731
    assert [strip(r) for r in again.records] == [strip(r) for r in records]
    assert [bool(r.released) for r in again.records] == [False, True]


def test_titles_are_derived_from_the_first_sentence() -> None:
    assert bank_io.derive_title("Roll two dice. What is the sum?") == "Roll two dice."
    long = "word " * 40
    assert bank_io.derive_title(long).endswith("…") and len(bank_io.derive_title(long)) <= 81


@pytest.mark.parametrize("parse, encode", [
    (parse_jsonl, lambda rows: b"\n".join(line(**r) for r in rows)),
    (parse_csv, lambda rows: ("id,title,text\n" + "".join(f'{r["id"]},{r.get("title", "")},"{r["text"]}"\n' for r in rows)).encode()),
])
def test_a_file_s_exercises_that_share_a_lead_in_get_titles_of_their_own(parse: object, encode: object) -> None:
    lead = "Use the following information to answer the next two exercises. A survey asked 200 students how far they commute. "
    rows = [
        {"id": "1", "text": lead + "Find the sample mean of the distances."},
        {"id": "2", "text": lead + "Construct a 95% confidence interval for the mean."},
        {"id": "3", "text": lead + "Is the distribution skewed?", "title": "Given title"},
        {"id": "4", "text": "\\begin{tabular}{cc} x & P(x) \\end{tabular}"},
    ]
    records = parse(encode(rows)).records  # type: ignore[operator]
    assert [r.title for r in records] == [
        "Find the sample mean of the distances.",
        "Construct a 95% confidence interval for the mean.",
        "Given title",  # a title in the file is kept
        "Problem 4",  # nothing to read a title from: the id
    ]
    [long_id] = parse_jsonl(line(id="x" * bank_io.MAX_ID_CHARS, text="\\begin{tabular}{c} 1 \\end{tabular}")).records
    assert len(long_id.title) == bank_io.MAX_TITLE_CHARS  # an id may be longer than a title may be


def test_derived_titles_never_end_inside_math() -> None:
    text = "A screening test for a rare condition has sensitivity $P(+ \\mid \\text{disease}) = 0.99$ and more words."
    title = bank_io.derive_title(text, limit=60)
    assert title == "A screening test for a rare condition has sensitivity…"


@pytest.mark.parametrize(
    "cell, exported",
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("'=x", "''=x"),  # a quote the text really starts with stays apart from the one export adds
        ("''-x", "'''-x"),
        ("'plain", "'plain"),
        ("plain = fine", "plain = fine"),
        ("", ""),
    ],
)
def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised_and_read_back(cell: str, exported: str) -> None:
    from problems.bank_io import csv_cell_in, csv_cell_out

    assert csv_cell_out(cell) == exported
    assert csv_cell_in(exported) == cell
