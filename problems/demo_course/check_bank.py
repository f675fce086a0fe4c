"""Validate the demo course bank files: python problems/demo_course/check_bank.py [FILES...]

Pure stdlib; used by the demo-course authors and by the test suite.
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_dictionary() -> tuple[dict[str, int], dict[str, str]]:
    with open(HERE / "modules.tsv", encoding="utf-8") as f:
        modules = {r["module"]: int(r["order"]) for r in csv.DictReader(f, delimiter="\t")}
    with open(HERE / "concepts.tsv", encoding="utf-8") as f:
        concepts = {r["slug"]: r["module"] for r in csv.DictReader(f, delimiter="\t")}
    return modules, concepts


def check_file(path: Path, modules: dict[str, int], concepts: dict[str, str]) -> list[str]:
    errors = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"{where}: bad JSON ({e})")
            continue
        for key in ("id", "text", "module", "labels"):
            if key not in rec:
                errors.append(f"{where}: missing {key}")
        if rec.get("module") not in modules:
            errors.append(f"{where}: unknown module {rec.get('module')!r}")
        labels = rec.get("labels") or []
        if not labels:
            errors.append(f"{where}: no labels")
        for slug in labels:
            if slug not in concepts:
                errors.append(f"{where}: unknown concept slug {slug!r}")
        if not str(rec.get("text", "")).strip():
            errors.append(f"{where}: empty text")
    return errors


def main(argv: list[str]) -> int:
    modules, concepts = load_dictionary()
    files = [Path(a) for a in argv] or sorted((HERE / "bank").glob("*.jsonl"))
    errors: list[str] = []
    ids: dict[str, str] = {}
    per_module: dict[str, int] = {}
    for path in files:
        errors += check_file(path, modules, concepts)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if rec.get("id") in ids:
                errors.append(f"{path.name}:{n}: duplicate id {rec['id']!r} (also {ids[rec['id']]})")
            ids[rec.get("id")] = f"{path.name}:{n}"
            per_module[rec.get("module")] = per_module.get(rec.get("module"), 0) + 1
    for e in errors:
        print(e)
    print(f"{len(ids)} problems, {len(errors)} errors; per module: {per_module}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
