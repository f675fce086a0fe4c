from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from embeddings.algorithms.methods import METHODS
from concepts.models import JobStatus
from embeddings.models import EmbeddingRun
from embeddings.services import EmbeddingInputError, embedding_run_start, embedding_run_wait


def rebuild(method: str, source: str) -> EmbeddingRun:
    """Start (or reuse) a run and execute it here; a worker that also picks it up finds it claimed. A run
    a worker (or the lab) is already building is waited for, so the command reports it finished."""
    run = embedding_run_start(method=method, source=source)
    return embedding_run_wait(run_id=run.id)


class Command(BaseCommand):
    help = (
        "Rebuild embeddings of the bank (identical inputs reuse the earlier run). A new run of the site default "
        "(Prob2Vec on the expert labels unless an instructor chose another) becomes active; any other run only with --activate."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--method", default="prob2vec", help=f"one of {', '.join(METHODS)}, or all")
        parser.add_argument("--source", default="labels", choices=["labels", "rules", "hybrid"],
                            help="concepts from expert labels, the rules, or the rules plus the learned extractor (hybrid)")
        parser.add_argument("--activate", action="store_true",
                            help="make the (last) run built the active embedding even if it is not of the site default "
                                 "(off by default: only the site default's runs become active by themselves)")

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
        if options["activate"]:
            from embeddings.services import embedding_activate

            embedding_activate(run_id=run.id)
            self.stdout.write(f"run #{run.id} ({run.method}/{run.source}) is now the active embedding")
        else:
            from embeddings.selectors import active_run

            active = active_run()
            if active is not None:
                self.stdout.write(f"active embedding: run #{active.id} ({active.method}/{active.source})")
