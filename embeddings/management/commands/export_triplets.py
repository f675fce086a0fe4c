from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from embeddings.models import SimilarityTriplet, TripletStatus
from problems.command_io import known_collection, write_output


class Command(BaseCommand):
    help = (
        'Export triplets as JSONL lines {"anchor", "positive", "negative", "status"}. import_triplets reads the ids back '
        "and ignores the status (each import sets its own --status): export one --status at a time to carry statuses over."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="output path, or - for standard output")
        parser.add_argument("--collection", required=True)
        parser.add_argument("--status", choices=TripletStatus.values, help="only triplets with this status")

    def handle(self, *args: Any, **options: Any) -> None:
        qs = SimilarityTriplet.objects.filter(anchor__collection=known_collection(options["collection"])).select_related("anchor", "positive", "negative")
        if options["status"]:
            qs = qs.filter(status=options["status"])
        lines = [
            json.dumps({"anchor": t.anchor.source_id, "positive": t.positive.source_id, "negative": t.negative.source_id, "status": t.status}) + "\n"
            for t in qs.order_by("id")
        ]
        write_output(self, options["file"], lines, "triplets")
