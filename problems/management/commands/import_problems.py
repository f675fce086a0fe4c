from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from problems.bank_io import MAX_COLLECTION_CHARS, parse_problem_file
from problems.command_io import read_input, refuse_bad_lines
from problems.services import ImportRejected, problems_import


class Command(BaseCommand):
    help = (
        "Import problems from a JSONL or CSV file. (collection, id) identifies a problem: importing again "
        "updates in place. A file with any bad line imports nothing and every bad line is reported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="path to a .jsonl or .csv file")
        parser.add_argument("--collection", help="collection name (default: the file's folder name)")
        parser.add_argument("--release", action="store_true", help="release the imported problems to students")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        collection = options["collection"]
        if collection and len(collection) > MAX_COLLECTION_CHARS:
            raise CommandError(
                f"--collection is longer than {MAX_COLLECTION_CHARS} characters ({len(collection)}); nothing was imported"
            )
        default_collection = path.resolve().parent.name  # checked with the lines that go there
        parsed = parse_problem_file(
            read_input(path), path.name, collection=collection, default_collection=default_collection
        )
        try:
            if parsed.errors:
                raise ImportRejected(parsed.errors)
            report = problems_import(
                records=parsed.records,
                default_collection=default_collection,
                collection=collection,
                release=True if options["release"] else None,
            )
        except ImportRejected as exc:
            refuse_bad_lines(self, path, exc.errors)
        self.stdout.write(report.summary())
        from embeddings.services import text_vectors_hint

        hint = text_vectors_hint()
        if hint:  # on stderr: stdout keeps the one summary line that scripts read
            self.stderr.write(hint)
