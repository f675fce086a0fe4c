"""The README is long (every section's figures and commands live there), so its contents list is how a
newcomer finds their way: it must name every section, in order, with a link that lands on it."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (word characters, hyphens and
    spaces stay), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(text: str) -> list[tuple[int, str]]:
    """The README's ## and ### headings, outside code blocks, in order."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^(##|###) (.+)$", line)):
            found.append((len(match.group(1)) - 2, match.group(2)))
    return found


def _contents(text: str) -> list[tuple[int, str, str]]:
    """The contents list under **Contents**: (depth, title, anchor) per entry."""
    block = text.split("**Contents**\n\n", 1)[1].split("\n\n", 1)[0]
    entries = []
    for line in block.splitlines():
        match = re.match(r"^( *)- \[(.+)\]\(#([^)]+)\)$", line)
        assert match, f"not a contents entry: {line!r}"
        entries.append((len(match.group(1)) // 2, match.group(2), match.group(3)))
    return entries


def test_the_contents_list_every_section_in_order_with_a_working_link() -> None:
    text = README.read_text(encoding="utf-8")
    headings = _headings(text)
    assert len(headings) > 20
    assert [(depth, title) for depth, title, _ in _contents(text)] == headings
    anchors = [anchor for _, _, anchor in _contents(text)]
    assert anchors == [_anchor(title) for _, title in headings]
    assert len(set(anchors)) == len(anchors), "two sections share an anchor: GitHub would suffix the second"


def test_a_heading_anchor_follows_githubs_rule() -> None:
    assert _anchor("Table 1 on the demo course (81 accepted triplets, `python manage.py evaluate_triplets`)") == (
        "table-1-on-the-demo-course-81-accepted-triplets-python-managepy-evaluate_triplets"
    )
    assert _anchor("Prob2Vec: an ensemble of draws") == "prob2vec-an-ensemble-of-draws"
    assert _anchor("Table 3 on the demo course (`benchmarks/nn_table3.py`, 100 rounds, FN / FP)") == (
        "table-3-on-the-demo-course-benchmarksnn_table3py-100-rounds-fn--fp"
    )
