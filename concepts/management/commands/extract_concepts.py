from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from concepts.models import ExtractionSource, JobStatus
from concepts.services import ExtractionInputError, extraction_run_ensure


class Command(BaseCommand):
    help = (
        "Apply every enabled concept rule to the whole bank (no new work if rules and problems are unchanged); "
        "--source hybrid then adds what the extractor learned from the ground-truth labels finds."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--source", default="rules", choices=["rules", "hybrid"], help="rules (default), or rules + learned (hybrid)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            run = extraction_run_ensure(source=options["source"])
        except ExtractionInputError as exc:
            raise CommandError(str(exc)) from exc
        if run.status == JobStatus.FAILED:
            raise CommandError(f"extraction run #{run.id} failed: {run.error}")
        if run.status == JobStatus.CANCELLED:
            raise CommandError(f"extraction run #{run.id} was cancelled")
        if run.status != JobStatus.DONE:  # another worker has it and did not finish within the task time limit
            raise CommandError(
                f"extraction run #{run.id} is still {run.get_status_display().lower()} after waiting "
                f"{settings.CELERY_TASK_TIME_LIMIT}s for the worker that has it; see the worker logs"
            )
        state = "done"
        seconds = f" in {run.seconds:.2f}s" if run.seconds is not None else ""
        if run.source == ExtractionSource.HYBRID:
            d = run.details
            self.stdout.write(
                f"Hybrid extraction #{run.id} {state}: {run.problems_done} problems, {run.concepts_found} concepts "
                f"({d.get('added', 0)} added by the learned extractor, trained on {d.get('labelled_problems', 0)} labelled problems, "
                f"{len(d.get('thresholds', {}))} concepts learned){seconds}"
            )
            return
        self.stdout.write(
            f"Extraction run #{run.id} {state}: {run.problems_done} problems, {run.concepts_found} concepts "
            f"from {len(run.rule_versions)} rules{seconds}"
        )
