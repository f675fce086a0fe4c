from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from concepts.services import labels_import, labels_parse
from problems.command_io import read_input, refuse_bad_lines


class Command(BaseCommand):
    help = (
        'Import concept labels from JSONL lines {"id": <problem id in the collection>, "concepts": [slugs]}. '
        "A file with any bad line imports nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--collection", required=True, help="the collection the ids belong to")
        parser.add_argument(
            "--annotator", help="username: store the labels as this annotator's label sets (default: as ground truth)"
        )
        parser.add_argument(
            "--held-out", action="store_true",
            help="also hold every problem of the file out of rule writing: its labels measure the rules, never tune them",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        data = read_input(path)
        annotator = None
        if options["annotator"]:
            annotator = get_user_model().objects.filter(username=options["annotator"]).first()
            if annotator is None:
                raise CommandError(f"no user {options['annotator']!r}")
        records, errors = labels_parse(data=data, collection=options["collection"])
        refuse_bad_lines(self, path, errors)
        count = labels_import(records=records, annotator=annotator, held_out=options["held_out"])
        target = f"label sets of {annotator.get_username()}" if annotator else "ground truth"
        held = ", held out from rule writing" if options["held_out"] else ""
        self.stdout.write(f"{count} problems labelled ({target}{held})")
