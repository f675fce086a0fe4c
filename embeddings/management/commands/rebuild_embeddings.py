from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from embeddings.algorithms.methods import METHODS
from concepts.models import JobStatus
from embeddings.models import EmbeddingRun
from embeddings.services import EmbeddingInputError, embedding_run_execute, embedding_run_start


def rebuild(method: str, source: str) -> EmbeddingRun:
    """Start (or reuse) a run and execute it here; a worker that also picks it up finds it claimed."""
    run = embedding_run_start(method=method, source=source)
    embedding_run_execute(run_id=run.id)
    return EmbeddingRun.objects.defer("vectors", "problem_ids", "concept_vectors").get(id=run.id)


class Command(BaseCommand):
    help = "Rebuild embeddings of the bank (identical inputs reuse the earlier run). The newest Prob2Vec run becomes active."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--method", default="prob2vec", help=f"one of {', '.join(METHODS)}, or all")
        parser.add_argument("--source", default="labels", choices=["labels", "rules", "hybrid"],
                            help="concepts from expert labels, the rules, or the rules plus the learned extractor (hybrid)")

    def handle(self, *args: Any, **options: Any) -> None:
        methods = list(METHODS) if options["method"] == "all" else [options["method"]]
        failed = []
        for method in methods:
            try:
                run = rebuild(method, options["source"])
            except EmbeddingInputError as exc:
                raise CommandError(str(exc)) from exc
            if run.status != JobStatus.DONE:
                failed.append(f"{method}: {run.error or run.status}")
                self.stderr.write(f"{method}/{run.source}: run #{run.id} {run.status}: {run.error}")
                continue
            loss = f", loss {run.loss:.4f}" if run.loss is not None else ""
            took = f" in {run.seconds:.2f}s" if run.seconds is not None else " (reused)"
            self.stdout.write(f"{method}/{run.source}: run #{run.id} done: {run.problems} problems, dim {run.dim}, "
                              f"{len(run.missing)} without a vector{loss}{took}")
        if failed:
            raise CommandError("; ".join(failed))
