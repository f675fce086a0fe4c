from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from embeddings.algorithms.methods import METHODS
from embeddings.management.commands.rebuild_embeddings import rebuild
from concepts.models import JobStatus
from embeddings.selectors import accepted_triplets, triplet_table
from embeddings.services import EmbeddingInputError, triplets_parse
from problems.command_io import read_input, refuse_bad_lines


class Command(BaseCommand):
    help = (
        "Triplet accuracy of every method and concept source (the paper's Table 1): on the accepted triplets, "
        "or on the triplets of a JSONL file (not stored). Missing or outdated embeddings are rebuilt first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", default="", help="only triplets of this collection (required with --triplets)")
        parser.add_argument("--triplets", help='JSONL lines {"anchor", "positive", "negative"} (ids of the collection)')
        parser.add_argument("--methods", default="all", help="comma-separated methods (default: all)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["triplets"]:
            if not options["collection"]:
                raise CommandError("--triplets needs --collection: the ids are those of one collection")
            path = Path(options["triplets"])
            records, errors = triplets_parse(data=read_input(path), collection=options["collection"])
            refuse_bad_lines(self, path, errors, what="nothing was evaluated")
            triplets = [(r.anchor, r.positive, r.negative) for r in records]
        else:
            triplets = accepted_triplets(options["collection"])
        if not triplets:
            raise CommandError("no triplets to evaluate: accept some first, or pass --triplets FILE")
        methods = list(METHODS) if options["methods"] == "all" else [m.strip() for m in options["methods"].split(",")]
        unknown = [m for m in methods if m not in METHODS]
        if unknown:
            raise CommandError(f"unknown method(s): {', '.join(unknown)}")
        problems = []
        for method in methods:
            sources = ["labels"] if METHODS[method].kind == "text" else ["labels", "rules"]
            for source in sources:
                try:
                    run = rebuild(method, source)
                except EmbeddingInputError as exc:
                    problems.append(f"{method}/{source}: {exc}")
                    continue
                if run.status != JobStatus.DONE:
                    problems.append(f"{method}/{source}: {run.error or run.status}")
        for problem in problems:
            self.stderr.write(f"not evaluated: {problem}")
        table = {m: v for m, v in triplet_table(triplets).items() if m in methods}
        if options["json"]:
            self.stdout.write(json.dumps({"triplets": len(triplets), "results": table}, indent=2, sort_keys=True))
            return
        self.stdout.write(f"{len(triplets)} triplets")
        self.stdout.write(f"{'method':16} {'labels':>8} {'rules':>8} {'text':>8}")
        for method in methods:
            row = table.get(method, {})
            cell = lambda s: "" if s not in row else ("—" if row[s] is None else f"{row[s] * 100:.2f}%")  # noqa: E731
            self.stdout.write(f"{method:16} {cell('labels'):>8} {cell('rules'):>8} {cell('text'):>8}")
