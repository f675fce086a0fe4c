from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from problems.bank_io import dump_csv, dump_jsonl
from problems.command_io import known_collection, write_output
from problems.models import Problem
from problems.selectors import problem_records


class Command(BaseCommand):
    help = "Export problems (with their ground-truth labels) to JSONL or CSV that import_problems reads back."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="output path, or - for standard output")
        parser.add_argument("--collection", help="only this collection")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="default: from the file name, else jsonl")

    def handle(self, *args: Any, **options: Any) -> None:
        qs = Problem.objects.order_by("collection", "source_id")
        if options["collection"]:
            qs = qs.filter(collection=known_collection(options["collection"]))
        fmt = options["format"] or ("csv" if options["file"].endswith(".csv") else "jsonl")
        lines = dump_csv(problem_records(qs)) if fmt == "csv" else dump_jsonl(problem_records(qs))
        write_output(self, options["file"], lines, "problems")
