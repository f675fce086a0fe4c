from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from embeddings.algorithms.methods import METHODS
from embeddings.management.commands.rebuild_embeddings import rebuild
from concepts.models import JobStatus
from embeddings.models import EmbeddingRun
from embeddings.selectors import TEXT_SOURCE, accepted_triplets, triplet_results
from embeddings.services import EmbeddingInputError, triplets_parse
from problems.command_io import read_input, refuse_bad_lines


def out_of_fold_lines(triplets: list[tuple[int, int, int]], runs: dict[tuple[str, str], EmbeddingRun]) -> list[str]:
    """Per run whose collections chose their text share on some of these triplets (README, "No problem
    without a vector", step 5): how many are judged out of fold (on stderr: the JSON stays as it is)."""
    asked = set(triplets)
    lines = []
    for (method, source), run in sorted(runs.items()):
        chose = {tuple(t[:3]) for t in (run.notes or {}).get("triplet_share_out_of_fold", [])}
        if chose & asked:
            lines.append(f"{method}/{source}: {len(chose & asked)} of the {len(triplets)} triplets chose their collection's text share "
                         f"in run #{run.pk}, so each is judged with the share chosen on the other folds")
    return lines


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
        methods = list(METHODS) if options["methods"] == "all" else [m.strip() for m in options["methods"].split(",") if m.strip()]
        if not methods:
            raise CommandError("--methods names no method; leave it out for all of them")
        unknown = [m for m in methods if m not in METHODS]
        if unknown:
            raise CommandError(f"unknown method(s): {', '.join(unknown)}")
        problems = []
        # The runs for the current inputs, one per cell. A cell whose rebuild failed is null (and named on
        # stderr), never an older run's figure: that run was built from inputs that are gone.
        built: dict[tuple[str, str], EmbeddingRun] = {}
        failed: set[tuple[str, str]] = set()
        for method in methods:
            sources = ["labels"] if METHODS[method].kind == "text" else ["labels", "rules", "hybrid"]
            for source in sources:
                cell = (method, TEXT_SOURCE if METHODS[method].kind == "text" else source)
                try:
                    run = rebuild(method, source)
                except EmbeddingInputError as exc:
                    problems.append(f"{method}/{source}: {exc}")
                    failed.add(cell)
                    continue
                if run.status != JobStatus.DONE:
                    problems.append(f"{method}/{source}: {run.error or run.status}")
                    failed.add(cell)
                else:
                    built[cell] = run
        for problem in problems:
            self.stderr.write(f"not evaluated: {problem}")
        for line in out_of_fold_lines(triplets, built):
            self.stderr.write(line)
        results = triplet_results(triplets, runs=built)
        for method, source in failed:
            results.setdefault(method, {})[source] = None
        table = {m: {s: (None if r is None else r["accuracy"]) for s, r in v.items()} for m, v in results.items()}
        intervals = {m: {s: (None if r is None else [r["low"], r["high"]]) for s, r in v.items()} for m, v in results.items()}
        if options["json"]:
            self.stdout.write(json.dumps({"triplets": len(triplets), "results": table, "intervals": intervals}, indent=2, sort_keys=True))
            return
        self.stdout.write(f"{len(triplets)} triplets; accuracy [95% bootstrap interval]")
        self.stdout.write(f"{'method':24} {'labels':>16} {'rules':>16} {'hybrid':>16} {'text':>16}")
        for method in methods:
            row = results.get(method, {})

            def cell(source: str) -> str:
                if source not in row:
                    return ""
                r = row[source]
                return "—" if r is None else f"{r['accuracy'] * 100:.1f}% [{r['low'] * 100:.0f}–{r['high'] * 100:.0f}]"

            self.stdout.write(f"{method:24} {cell('labels'):>16} {cell('rules'):>16} {cell('hybrid'):>16} {cell('text'):>16}")
