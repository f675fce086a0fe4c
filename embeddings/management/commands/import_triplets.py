from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from embeddings.models import TripletStatus
from embeddings.services import TripletRejected, triplets_import, triplets_parse
from problems.command_io import read_input, refuse_bad_lines


class Command(BaseCommand):
    help = (
        'Import similarity triplets from JSONL lines {"anchor": id, "positive": id, "negative": id} (ids of the '
        "collection; the three from one module). A file with any bad line imports nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--collection", required=True)
        parser.add_argument("--status", choices=TripletStatus.values, default=TripletStatus.PROPOSED)

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        records, errors = triplets_parse(data=read_input(path), collection=options["collection"], importing=True)
        refuse_bad_lines(self, path, errors)
        try:
            created, updated = triplets_import(records=records, status=options["status"])
        except TripletRejected as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{created} triplets created, {updated} updated ({options['status']})")
