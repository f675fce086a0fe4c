"""Reading and writing problem files (JSONL and CSV). Pure: no Django imports.

The JSONL format is the one of `shared/data/*/problems.jsonl`: one object per line with
`id, text, module, labels, level, answer, solution, source` (other keys ignored). We also read
and write `title`, `released` and `collection`, so an export imports back to the same bank.
CSV has the same columns; `labels` holds slugs separated by ";".

Parsing never writes anything: it returns every record or every error, with line numbers, so the
caller can refuse a file with any bad line as a whole.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

MAX_LINE_BYTES = 256 * 1024
MAX_TEXT_CHARS = 50_000
MAX_ID_CHARS = 300
MAX_COLLECTION_CHARS = 100
MAX_MODULE_CHARS = 200
MAX_LEVEL_CHARS = 50
MAX_SOURCE_CHARS = 500
MAX_TITLE_CHARS = 200

CSV_COLUMNS = ["collection", "id", "title", "module", "labels", "level", "released", "answer", "solution", "source", "text"]


@dataclass(frozen=True)
class ProblemRecord:
    source_id: str
    text: str
    module: str = ""
    labels: tuple[str, ...] = ()
    level: str = ""
    answer: str = ""
    solution: str = ""
    source: str = ""
    title: str = ""
    released: bool | None = None
    collection: str = ""
    line: int = 0


@dataclass(frozen=True)
class LineError:
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class ParseResult:
    records: list[ProblemRecord] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)


def _as_text(value: Any) -> str:
    """Answers come as strings, numbers, booleans or lists; keep their JSON spelling if not a string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _as_released(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "1", "yes"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "0", "no"}:
        return False
    raise ValueError(f"'released' must be true or false, got {value!r}")


def derive_title(text: str, limit: int = 80) -> str:
    """A readable title from problem text: the first sentence as it reads rendered, cut at a word
    boundary and never inside math (problems/latex_html.py `title_from_text`)."""
    from problems.latex_html import title_from_text

    return title_from_text(text, limit)


def record_from_mapping(obj: Any, line: int, labels_as_text: bool = False) -> ProblemRecord:
    """Validate one decoded object; raise ValueError with the reason if it is unusable.

    `labels` is a list of slugs; only a CSV row (`labels_as_text`) spells it as one text, "a;b"."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    if "id" not in obj or obj["id"] is None or obj["id"] == "":
        raise ValueError("missing 'id'")
    if not isinstance(obj["id"], (str, int)) or isinstance(obj["id"], bool):
        raise ValueError("'id' must be a string or an integer")
    source_id = str(obj["id"]).strip()
    if not source_id:  # an id of spaces would be stored as ""
        raise ValueError("missing 'id'")
    if len(source_id) > MAX_ID_CHARS:
        raise ValueError(f"'id' is longer than {MAX_ID_CHARS} characters")
    if "text" not in obj or obj["text"] is None:
        raise ValueError("missing 'text'")
    if not isinstance(obj["text"], str):
        raise ValueError("'text' must be a string")
    text = obj["text"].strip()
    if not text:
        raise ValueError("empty 'text'")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"'text' is oversized ({len(text)} characters, at most {MAX_TEXT_CHARS})")
    labels = obj.get("labels") or []
    if isinstance(labels, str) and labels_as_text:  # a CSV cell: slugs separated by ";"
        labels = [s for s in (p.strip() for p in labels.split(";")) if s]
    if not isinstance(labels, list) or not all(isinstance(s, str) for s in labels):
        raise ValueError("'labels' must be a list of strings")
    limits = {
        "module": MAX_MODULE_CHARS,
        "level": MAX_LEVEL_CHARS,
        "source": MAX_SOURCE_CHARS,
        "title": MAX_TITLE_CHARS,
        "collection": MAX_COLLECTION_CHARS,
    }
    for key in (*limits, "solution"):
        # A name, a title or a solution that is a JSON object, list or true/false is a mistake in the
        # file, not text: stored as its JSON spelling it made a module named `{"x": 1}`. (Answers may
        # be lists or numbers: TheoremQA's are.)
        if obj.get(key) is not None and (isinstance(obj[key], bool) or not isinstance(obj[key], (str, int, float))):
            raise ValueError(f"'{key}' must be text (or a number), got {type(obj[key]).__name__}")
    values = {key: _as_text(obj.get(key)).strip() for key in limits}
    for key, limit in limits.items():
        if len(values[key]) > limit:
            raise ValueError(f"'{key}' is longer than {limit} characters")
    return ProblemRecord(
        source_id=source_id,
        text=text,
        module=values["module"],
        labels=tuple(dict.fromkeys(s.strip() for s in labels if s.strip())),
        level=values["level"],
        answer=_as_text(obj.get("answer")),
        solution=_as_text(obj.get("solution")),
        source=values["source"],
        title=values["title"],  # or derived when the whole file is read: _derive_titles
        released=_as_released(obj.get("released")),
        collection=values["collection"],
        line=line,
    )


def _derive_titles(result: ParseResult) -> None:
    """A title for each record without one, from its text, told apart from the others of the file
    (problems/latex_html.py `distinct_titles`: exercises that share a lead-in are titled by their own
    question)."""
    from problems.latex_html import distinct_titles

    titles = distinct_titles([rec.text for rec in result.records])
    result.records = [
        rec if rec.title else replace(rec, title=title or f"Problem {rec.source_id}"[:MAX_TITLE_CHARS])  # a text that is one table
        for rec, title in zip(result.records, titles)
    ]


def import_collection(rec: ProblemRecord, collection: str | None = None, default_collection: str = "") -> str:
    """The collection a record is imported into: `collection` if given (`--collection`, the upload
    form's field), then the record's own, then `default_collection` (the file's folder name; the
    file name's stem on the upload page). "" when there is none."""
    return collection or rec.collection or default_collection


def collection_errors(
    records: Iterable[ProblemRecord], collection: str | None = None, default_collection: str = ""
) -> list[LineError]:
    """What the collections the records go to make wrong: a name longer than the column (reported
    once, on the first line that goes there; a record's own name is checked with its line), and an
    id already given on an earlier line of the same collection."""
    errors: list[LineError] = []
    seen: dict[tuple[str, str], int] = {}
    too_long: set[str] = set()
    for rec in records:
        coll = import_collection(rec, collection, default_collection)
        if len(coll) > MAX_COLLECTION_CHARS and coll not in too_long:
            too_long.add(coll)
            where = "given for the whole file" if collection else "of the record" if rec.collection else "named after the file"
            reason = f"the collection {where}, '{coll[:40]}…', is longer than {MAX_COLLECTION_CHARS} characters"
            errors.append(LineError(rec.line, f"{reason}: pass a shorter collection name"))
        key = (coll, rec.source_id)
        if key in seen:
            errors.append(LineError(rec.line, f"duplicate id {rec.source_id!r} (first on line {seen[key]})"))
        else:
            seen[key] = rec.line
    return errors


def iter_jsonl_objects(data: bytes) -> Iterable[tuple[int, dict[str, Any], str]]:
    """(line number, object, "") for each JSON object line, or (line number, {}, reason) for a bad one.

    Blank lines are skipped. Shared by every JSONL import (problems, labels, triplets).
    """
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            yield number, {}, f"line is oversized ({len(raw)} bytes, at most {MAX_LINE_BYTES})"
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, {}, f"not UTF-8 (byte {exc.start + 1} of the line)"
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, {}, f"bad JSON: {exc.msg} at column {exc.colno}"
            continue
        except RecursionError:
            yield number, {}, "bad JSON: nested too deeply"
            continue
        except ValueError as exc:  # json's own limit on integers: "Exceeds the limit (4300 digits) ..."
            reason = "a number with too many digits" if "digits" in str(exc) else str(exc)
            yield number, {}, f"bad JSON: {reason}"
            continue
        if not isinstance(obj, dict):
            yield number, {}, f"expected a JSON object, got {type(obj).__name__}"
            continue
        # A decoded NUL or lone surrogate can only come from a \u escape (raw ones are bad JSON or bad
        # UTF-8), so only lines with such an escape are walked: the walk would cost a third of parsing.
        unstorable = unstorable_text(obj) if _NUL_OR_SURROGATE_ESCAPE.search(line) else ""
        if unstorable:
            yield number, {}, unstorable
            continue
        yield number, obj, ""


_SURROGATE = re.compile(r"[\ud800-\udfff]")
_NUL_OR_SURROGATE_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")


def unstorable_text(value: Any) -> str:
    """Why a decoded JSON value cannot be stored as text, or "": a NUL character (PostgreSQL text
    refuses it) or a lone surrogate such as \\ud800 (not Unicode, so not UTF-8), in any string, key
    or value, at any depth. Walked with a stack: the value may be nested as deep as json allows."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                path = f"{where}.{key}" if where else str(key)
                stack.append((path, key))
                stack.append((path, inner))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", inner) for i, inner in enumerate(item))
        elif isinstance(item, str):
            if "\x00" in item:
                return f"a NUL character (\\u0000) in '{where}' at position {item.index(chr(0)) + 1}"
            bad = _SURROGATE.search(item)
            if bad:
                return f"a lone surrogate (\\u{ord(bad.group()):04x}, not valid Unicode) in '{where}' at position {bad.start() + 1}"
    return ""


def parse_jsonl(data: bytes, *, collection: str | None = None, default_collection: str = "") -> ParseResult:
    """Every record or every error of a JSONL file. `collection` and `default_collection` are those
    of the import (`import_collection`): an id is a duplicate in the collection it goes to."""
    result = ParseResult()
    for number, obj, error in iter_jsonl_objects(data):
        if error:
            result.errors.append(LineError(number, error))
            continue
        try:
            result.records.append(record_from_mapping(obj, number))
        except ValueError as exc:
            result.errors.append(LineError(number, str(exc)))
    _derive_titles(result)
    result.errors.extend(collection_errors(result.records, collection, default_collection))
    result.errors.sort(key=lambda e: e.line)
    return result


def parse_csv(data: bytes, *, collection: str | None = None, default_collection: str = "") -> ParseResult:
    """Every record or every error of a CSV file; `collection`, `default_collection`: `parse_jsonl`."""
    result = ParseResult()
    try:
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        result.errors.append(LineError(line, "not UTF-8"))
        return result
    # csv's own cap on a field (128 KiB by default) is lower than a row's: a solution that JSONL and
    # our export take stopped the read there, losing the rows after it. No field is longer than the
    # file; rows are capped by MAX_LINE_BYTES below, each a bad line of its own.
    csv.field_size_limit(max(csv.field_size_limit(), len(content) + 1))
    reader = csv.DictReader(io.StringIO(content, newline=""))
    has_nul = "\x00" in content  # valid UTF-8, but PostgreSQL text refuses it (JSONL: iter_jsonl_objects)
    if not reader.fieldnames or "id" not in reader.fieldnames or "text" not in reader.fieldnames:
        result.errors.append(LineError(1, "CSV header must name at least the columns 'id' and 'text'"))
        return result
    try:
        for row in reader:
            line = reader.line_num  # last physical line of this row; quoted fields may span lines
            if None in row:
                result.errors.append(LineError(line, "more fields than the header has"))
                continue
            if len(";".join(v or "" for v in row.values()).encode()) > MAX_LINE_BYTES:
                result.errors.append(LineError(line, f"row is oversized (more than {MAX_LINE_BYTES} bytes)"))
                continue
            unstorable = unstorable_text(row) if has_nul else ""
            if unstorable:
                result.errors.append(LineError(line, unstorable))
                continue
            try:
                cells = {key: csv_cell_in(value) if isinstance(value, str) else value for key, value in row.items()}
                result.records.append(record_from_mapping(cells, line, labels_as_text=True))
            except ValueError as exc:
                result.errors.append(LineError(line, str(exc)))
    except csv.Error as exc:
        result.errors.append(LineError(reader.line_num, f"bad CSV: {exc}"))
    _derive_titles(result)
    result.errors.extend(collection_errors(result.records, collection, default_collection))
    result.errors.sort(key=lambda e: e.line)
    return result


def parse_problem_file(
    data: bytes, filename: str, *, collection: str | None = None, default_collection: str = ""
) -> ParseResult:
    if filename.lower().endswith(".csv"):
        return parse_csv(data, collection=collection, default_collection=default_collection)
    return parse_jsonl(data, collection=collection, default_collection=default_collection)


def _record_dict(rec: ProblemRecord) -> dict[str, Any]:
    return {
        "collection": rec.collection,
        "id": rec.source_id,
        "title": rec.title,
        "module": rec.module,
        "labels": list(rec.labels),
        "level": rec.level or None,
        "released": bool(rec.released),
        "answer": rec.answer or None,
        "solution": rec.solution or None,
        "source": rec.source,
        "text": rec.text,
    }


def dump_jsonl(records: Iterable[ProblemRecord]) -> Iterable[str]:
    for rec in records:
        yield json.dumps(_record_dict(rec), ensure_ascii=False) + "\n"


# A spreadsheet runs a cell that starts with one of these as a formula (`=HYPERLINK(...)`, `+SUM`, `@SUM`;
# tab and carriage return are read past by some). Exported cells that start with one get a leading `'`,
# which spreadsheets show as text. A cell that starts with `'`s before such a character gets one more `'`,
# so `'=x` and `=x` stay apart, and reading a CSV removes exactly the one `'` that exporting added.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _looks_like_formula(cell: str) -> bool:
    return cell.startswith(_FORMULA_START) or (cell.startswith("'") and cell.lstrip("'").startswith(_FORMULA_START))


def csv_cell_out(cell: str) -> str:
    """A cell as exported: neutralised if a spreadsheet would run it."""
    return "'" + cell if _looks_like_formula(cell) else cell


def csv_cell_in(cell: str) -> str:
    """A cell as read: the inverse of `csv_cell_out` (other cells are left exactly as they are)."""
    return cell[1:] if cell.startswith("'") and _looks_like_formula(cell[1:]) else cell


def dump_csv(records: Iterable[ProblemRecord]) -> Iterable[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for rec in records:
        row = _record_dict(rec)
        row["labels"] = ";".join(rec.labels)
        row["released"] = "true" if rec.released else "false"
        writer.writerow([csv_cell_out("" if row[c] is None else str(row[c])) for c in CSV_COLUMNS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.getvalue():
        yield buffer.getvalue()
