"""The demo course: an original problem bank over the course's concept dictionary.

`modules.tsv` and `concepts.tsv` are copies of the course's starting dictionary; `bank/*.jsonl`
holds our own problems, one file per module, with ground-truth labels.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parent
DEMO_COLLECTION = "demo"

# Demo logins, one per role. Created only while DEBUG is on: never on a production site.
DEMO_USERS = [
    ("student", "demo-student", "student"),
    ("ta", "demo-ta", "ta"),
    ("headta", "demo-headta", "head_ta"),
    ("instructor", "demo-instructor", "instructor"),
]
# The other TAs who propose and judge the demo triplets (the paper had four TAs and a head TA).
DEMO_EXTRA_TAS = [("ta2", "demo-ta2"), ("ta3", "demo-ta3"), ("ta4", "demo-ta4")]


def read_jsonl(name: str) -> list[dict[str, object]]:
    path = DEMO_DIR / name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_tsv(name: str) -> list[dict[str, str]]:
    with open(DEMO_DIR / name, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# Where a branch of a starter rule came from (`rules.json`, "from"): the demo bank, the concept
# dictionary and textbook usage in general, or the misses of one dev set (benchmarks/devsets/: the
# three dev books, and the genre dev samples of MATH and TheoremQA, drawn outside their test splits).
# benchmarks/rule_quality.py measures "leave one book out" by dropping the branches only that set
# motivated.
RULE_ORIGINS = ("demo", "general", "openstax", "openintro", "gs", "math-dev", "theoremqa-dev")


def demo_rule_branches() -> dict[str, dict[str, object]]:
    """rules.json as written: slug -> {ignore_case, branches: [{re, from}]}, or {} if absent."""
    path = DEMO_DIR / "rules.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def join_branches(branches: list[dict[str, object]], without: str = "", strict: bool = False, statement_only: bool = False) -> str:
    """One pattern of the branches' alternatives, leaving out those whose only origin is ``without``
    (``strict``: every branch that names ``without`` among its origins). Only the branches that read
    the statement alone (``"statement_only": true``) with ``statement_only``, only the others without."""

    def kept(b: dict[str, object]) -> bool:
        origins = set(b["from"])  # type: ignore[arg-type]
        if bool(b.get("statement_only")) != statement_only:
            return False
        return not without or (without not in origins if strict else bool(origins - {without}))

    return "|".join(str(b["re"]) for b in branches if kept(b))


def demo_rules(without: str = "", strict: bool = False) -> dict[str, dict[str, object]]:
    """The demo course's concept rules, slug -> {pattern, ignore_case[, statement_pattern]} (what
    `rules_load` takes): ``pattern`` joins the branches matched anywhere a rule reads, and
    ``statement_pattern`` the branches matched in the statement alone (README "Where a branch reads").

    ``without`` names a dev book: its own branches are left out (a rule left empty is dropped);
    ``strict`` also leaves out the branches it shares with other origins.
    """
    rules: dict[str, dict[str, object]] = {}
    for slug, spec in demo_rule_branches().items():
        branches = spec["branches"]
        pattern = join_branches(branches, without, strict)  # type: ignore[arg-type]
        statement_pattern = join_branches(branches, without, strict, statement_only=True)  # type: ignore[arg-type]
        if pattern or statement_pattern:
            rules[slug] = {"pattern": pattern, "ignore_case": bool(spec.get("ignore_case", True))}
            if statement_pattern:
                rules[slug]["statement_pattern"] = statement_pattern
    return rules


def bank_files() -> list[Path]:
    return sorted((DEMO_DIR / "bank").glob("*.jsonl"))
