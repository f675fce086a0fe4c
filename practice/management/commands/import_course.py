from __future__ import annotations

import gzip
import json
import sys
import zlib
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from practice.backup import BackupError, course_import
from problems.bank_io import unstorable_text
from problems.command_io import read_input


class Command(BaseCommand):
    help = (
        "Restore a course from an export_course file into a database with no course in it (--replace: delete "
        "the course there first). One transaction: a bad file imports nothing and says what and where."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="an export_course file (.json, or gzip-compressed), or - for standard input")
        parser.add_argument(
            "--replace", action="store_true",
            help="delete every problem, concept, rule, label, triplet, attempt and run here first (users stay)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["file"]
        raw = sys.stdin.buffer.read() if name == "-" else read_input(Path(name))
        if raw[:2] == b"\x1f\x8b":  # gzip's magic number, whatever the file is called
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as exc:
                raise CommandError(f"{name}: not a valid gzip file ({exc}); nothing was imported") from None
        try:
            data = json.loads(raw)
        except UnicodeDecodeError as exc:
            raise CommandError(f"{name}: not UTF-8 text ({exc}); nothing was imported") from None
        except json.JSONDecodeError as exc:
            raise CommandError(f"{name}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; nothing was imported") from None
        except RecursionError:
            raise CommandError(f"{name}: not valid JSON: nested too deeply; nothing was imported") from None
        except ValueError as exc:  # json's limit on integer digits
            raise CommandError(f"{name}: not valid JSON: {exc}; nothing was imported") from None
        unstorable = unstorable_text(data)  # PostgreSQL would refuse it halfway through the import
        if unstorable:
            raise CommandError(f"{name}: {unstorable}; nothing was imported")
        try:
            summary = course_import(data=data, replace=options["replace"])
        except BackupError as exc:
            raise CommandError(f"{name}: {exc}; nothing was imported") from None
        self.stdout.write(f"Imported the course from {name}: {summary.summary()}")
        from embeddings.services import text_vectors_hint

        hint = text_vectors_hint()  # backups leave the sentence-vector cache out
        if hint:
            self.stderr.write(hint)
