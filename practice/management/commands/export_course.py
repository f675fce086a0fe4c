from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from practice.backup import CourseSummary, course_export


def write_atomic(path: Path, payload: bytes) -> None:
    """Write a temporary file beside `path`, then rename it: a reader never sees half a backup.
    mkstemp makes it readable by its owner only, which suits a file holding password hashes."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class Command(BaseCommand):
    help = (
        "Back up the whole course (problems, concepts, rules with their history, labels, triplets and votes, "
        "attempts, runs with their vectors, and the users they name) as one JSON file that import_course restores."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="output path (gzip-compressed when it ends in .gz), or - for standard output")

    def handle(self, *args: Any, **options: Any) -> None:
        target = options["file"]
        data = course_export()
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        summary = CourseSummary(data["counts"]).summary()
        if target == "-":
            self.stdout.write(text)
            self.stderr.write(f"Exported the course: {summary}")
            return
        path = Path(target)
        payload = text.encode("utf-8")
        if path.name.endswith(".gz"):
            payload = gzip.compress(payload, mtime=0)
        try:
            write_atomic(path, payload)
        except OSError as exc:
            raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc
        self.stdout.write(f"Exported the course to {path}: {summary}")
