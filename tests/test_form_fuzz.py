"""A fuzz pass over the site's HTML forms and the problem upload page (schemathesis covers the JSON API).

Each page is fetched as a role that may open it, its POST forms are read from the HTML (fields, hidden
values, select options, buttons), and Hypothesis submits them with field values drawn from what the
page offered and from hostile input: NUL bytes, bytes that are not UTF-8 (a lone surrogate's encoding),
5,000-digit numbers, deep JSON, huge and empty values, missing and repeated fields. No submission may
get a server error. The upload page gets generated JSONL and CSV files the same way.

Bounded for `make test`: FORM_FUZZ_EXAMPLES (default 12) submissions per form, derandomized, so a
failure reproduces. Raise it for a longer pass: `FORM_FUZZ_EXAMPLES=500 pytest tests/test_form_fuzz.py`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote_from_bytes, urljoin, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.getenv("FORM_FUZZ_EXAMPLES", "12"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@dataclass
class Form:
    action: str
    fields: dict[str, list[str]] = field(default_factory=dict)  # name -> values the page offered
    multiple: set[str] = field(default_factory=set)


class _Forms(HTMLParser):
    """Every <form method="post"> of a page, with its fields and the values the page offers for them."""

    def __init__(self, page_url: str):
        super().__init__()
        self.page_url, self.forms, self.current, self.select = page_url, [], None, None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            if a.get("method", "get").lower() == "post":
                self.current = Form(urljoin(self.page_url, a.get("action") or self.page_url))
                self.forms.append(self.current)
            return
        if self.current is None or not a.get("name"):
            return
        name = a["name"]
        values = self.current.fields.setdefault(name, [])
        if tag in ("input", "button"):
            values.append(a.get("value", "on" if a.get("type") in ("checkbox", "radio") else ""))
        elif tag == "textarea":
            values.append("")
        elif tag == "select":
            self.select = name
            if "multiple" in a:
                self.current.multiple.add(name)
        elif tag == "option" and self.select:
            self.current.fields[self.select].append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.current = None
        elif tag == "select":
            self.select = None


def forms_of(html: str, url: str) -> list[Form]:
    parser = _Forms(url)
    parser.feed(html)
    # Signing out and deleting would end the pass early; they take no input worth fuzzing.
    return [f for f in parser.forms if not urlsplit(f.action).path.endswith(("/logout/", "/delete/"))]


HOSTILE = st.sampled_from([
    b"", b"\x00", b"a\x00b", b"\xed\xa0\x80", b"\xff\xfe", b"9" * 5000, b"-1", b"0", b"1e400", b"NaN",
    b"[" * 3000, b'{"a": ' * 500, b"<script>alert(1)</script>", b"$\\rule{3000px}{3000px}$", b"(a+)+$",
    b"\\1(", b"x" * 70_000, "ｓａｍ".encode(), b"'; DROP TABLE problems_problem; --", b"../../etc/passwd",
    b"%00", b"=HYPERLINK(\"x\")",
])
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40).map(lambda s: s.encode())


def value(offered: list[str]) -> st.SearchStrategy[bytes]:
    choices = [HOSTILE, TEXT, st.binary(max_size=30), st.integers(-(10**30), 10**30).map(lambda i: str(i).encode())]
    offered = [v for v in offered if v]
    if offered:
        choices.insert(0, st.sampled_from(offered).map(str.encode))
    return st.one_of(*choices)


def body(data: st.DataObject, form: Form) -> bytes:
    """A urlencoded body: each field left out, sent once, or repeated; values as raw bytes."""
    pairs: list[tuple[str, bytes]] = []
    for name, offered in form.fields.items():
        times = data.draw(st.sampled_from([0, 1, 1, 1, 2] if name not in form.multiple else [0, 1, 2, 3]), label=f"{name} times")
        pairs += [(name, data.draw(value(offered), label=name)) for _ in range(times)]
    if data.draw(st.booleans(), label="extra field"):
        pairs.append((data.draw(st.text(max_size=10), label="extra name"), data.draw(value([]), label="extra value")))
    return "&".join(f"{quote_from_bytes(n.encode('utf-8', 'surrogatepass'))}={quote_from_bytes(v)}" for n, v in pairs).encode()


@pytest.fixture
def site(course: dict[str, Any], make_user: Any, concept_factory: Any) -> dict[str, Any]:
    """The practice course (problems, modules open for practice, an embedding), a rule, a labelled
    problem, a triplet proposed by someone else, and a user per role."""
    from concepts.services import rule_save
    from embeddings.services import triplet_create

    users = {role: make_user(f"fuzz-{role}", role) for role in ("student", "ta", "head_ta", "instructor")}
    rule_save(concept=concept_factory("nchoosek"), pattern=r"\bchoose\b", user=users["ta"])
    rule_save(concept=concept_factory("nchoosek"), pattern=r"\bchoose\b|binom", user=users["ta"])  # history: a version to revert to
    triplet = triplet_create(anchor=course["count1"], positive=course["count2"], negative=course["binom"], user=users["instructor"])
    return {"users": users, "problem": course["count1"].pk, "triplet": triplet.pk}


# (role, page): every page of the site that holds a POST form.
PAGES = [
    ("anonymous", "/login/"),
    ("anonymous", "/admin/login/"),
    ("student", "/practice/"),
    ("ta", "/problems/new/"),
    ("ta", "/problems/{problem}/edit/"),
    ("ta", "/concepts/nchoosek/rule/"),
    ("ta", "/concepts/nchoosek/rule/history/"),
    ("ta", "/concepts/label/{problem}/"),
    ("ta", "/concepts/words/"),
    ("ta", "/concepts/extraction/"),
    ("ta", "/concepts/reports/"),
    ("ta", "/concepts/neural/"),
    ("ta", "/triplets/new/?module={module}&anchor={problem}"),
    ("ta", "/triplets/judge/"),
    ("ta", "/triplets/{triplet}/"),
    ("head_ta", "/concepts/label/{problem}/"),
    ("head_ta", "/triplets/consensus/"),
    ("instructor", "/lab/"),
]


@pytest.mark.parametrize("role, page", PAGES)
def test_no_form_submission_gets_a_server_error(site: dict[str, Any], course: dict[str, Any], role: str, page: str) -> None:
    client = Client()  # raise_request_exception: a server error fails the test with its traceback
    if role != "anonymous":
        client.force_login(site["users"][role])
    url = page.format(problem=site["problem"], triplet=site["triplet"], module=course["count1"].module_id)
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    forms = forms_of(response.content.decode(), "http://testserver" + url)
    assert forms, f"{url} has no POST form to fuzz"

    for form in forms:
        target = urlsplit(form.action)
        path = target.path + (f"?{target.query}" if target.query else "")

        @FUZZ
        @given(data=st.data())
        def submit(data: st.DataObject) -> None:
            response = client.post(path, body(data, form), content_type="application/x-www-form-urlencoded")
            assert response.status_code < 500, (path, response.status_code)

        submit()


# --- the upload page ----------------------------------------------------------------------------------

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=False), st.text(max_size=30),
    st.sampled_from(["\x00", "a\ud800b", "\udfff", "=SUM(1)", "$x$", "", " ", "nchoosek", "9" * 400]),
)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
RECORD = st.fixed_dictionaries(
    {},
    optional={
        key: JSON_VALUES
        for key in ("id", "text", "module", "labels", "level", "answer", "solution", "source", "title", "released", "collection")
    },
)
RAW_LINES = st.sampled_from([
    b"[" * 5000, b'{"id": ' + b"7" * 5000 + b', "text": "x"}', b"\xff\xfe\x00", b"not json", b"{}", b'{"id": 1, "text": "a\\u0000"}',
    b'{"id": 1, "text": "a\\ud800"}', b'{"id": 1, "text": "ok", "labels": "nchoosek"}', b"\x00" * 10,
])


@st.composite
def problem_file(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(["bank.jsonl", "bank.csv", "bank.json", "BANK.NDJSON", "x.txt", ".jsonl", "a b.csv"]))
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            record = draw(RECORD)
            lines.append(json.dumps(record).encode() if not name.endswith(".csv") else ",".join(map(str, record.values())).encode("utf-8", "surrogatepass"))
        else:
            lines.append(draw(RAW_LINES | st.binary(max_size=40)))
    if name.endswith(".csv") and draw(st.booleans()):
        lines.insert(0, draw(st.sampled_from([b"id,text", b"collection,id,title,module,labels,level,released,answer,solution,source,text", b"text", b""])))
    return name, b"\n".join(lines)


def test_no_upload_gets_a_server_error(site: dict[str, Any]) -> None:
    client = Client()
    client.force_login(site["users"]["ta"])

    @settings(FUZZ, max_examples=EXAMPLES * 4)
    @given(upload=problem_file(), collection=st.text(st.characters(blacklist_categories=("Cs",)), max_size=120), release=st.booleans())
    def submit(upload: tuple[str, bytes], collection: str, release: bool) -> None:
        name, content = upload
        data: dict[str, Any] = {"file": SimpleUploadedFile(name, content), "collection": collection}
        if release:
            data["release"] = "on"
        response = client.post("/problems/import/", data)
        assert response.status_code < 500, response.status_code

    submit()
