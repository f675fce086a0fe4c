from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from concepts.models import GroundTruthLabel
from problems.command_io import known_collection, write_output


class Command(BaseCommand):
    help = 'Export ground-truth labels as JSONL lines {"id", "concepts"} that import_labels reads back.'

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="output path, or - for standard output")
        parser.add_argument("--collection", required=True)
        parser.add_argument("--held-out", action="store_true", help="only the problems held out from rule writing")

    def handle(self, *args: Any, **options: Any) -> None:
        labels: dict[str, list[str]] = {}
        labels_qs = GroundTruthLabel.objects.filter(problem__collection=known_collection(options["collection"]))
        if options["held_out"]:
            labels_qs = labels_qs.filter(problem__held_out__isnull=False)
        rows = labels_qs.values_list("problem__source_id", "concept__slug")
        for source_id, slug in rows.order_by("problem__source_id", "concept__slug"):
            labels.setdefault(source_id, []).append(slug)
        lines = [json.dumps({"id": sid, "concepts": slugs}) + "\n" for sid, slugs in labels.items()]
        write_output(self, options["file"], lines, "label sets")
