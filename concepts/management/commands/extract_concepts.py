from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from concepts.models import ExtractionRun, JobStatus
from concepts.services import extraction_run_execute, extraction_run_start


class Command(BaseCommand):
    help = "Apply every enabled concept rule to the whole bank (no new work if rules and problems are unchanged)."

    def handle(self, *args: Any, **options: Any) -> None:
        run = extraction_run_start()
        extraction_run_execute(run_id=run.id)  # a no-op if a worker or an earlier run already did it
        run = ExtractionRun.objects.get(id=run.id)
        if run.status == JobStatus.FAILED:
            raise CommandError(f"extraction run #{run.id} failed: {run.error}")
        state = "done" if run.status == JobStatus.DONE else run.get_status_display()
        seconds = f" in {run.seconds:.2f}s" if run.seconds is not None else ""
        self.stdout.write(
            f"Extraction run #{run.id} {state}: {run.problems_done} problems, {run.concepts_found} concepts "
            f"from {len(run.rule_versions)} rules{seconds}"
        )
