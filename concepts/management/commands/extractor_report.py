from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from concepts.models import ExtractorReport, JobStatus
from concepts.services import extractor_report_compute
from problems.command_io import known_collection


class Command(BaseCommand):
    help = "FP and FN rates of the rule extractor against ground-truth labels, per concept and averaged."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", default="", help="only problems of this collection")
        parser.add_argument("--source", default="rules", choices=["rules", "hybrid"],
                            help="the rules (default), or the hybrid source: rules + the extractor learned from labels (cross-validated)")
        parser.add_argument("--held-out", action="store_true",
                            help="measure on the problems held out from rule writing alone (the rules' figure on text they were not written from)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["collection"]:
            known_collection(options["collection"])  # a typo is an error naming the collections, no report row
        report = ExtractorReport.objects.create(collection=options["collection"], source=options["source"], held_out=options["held_out"])
        report = extractor_report_compute(report_id=report.id) or report
        if report.status == JobStatus.FAILED:
            raise CommandError(report.error)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2, sort_keys=True))
            return
        pct = lambda v: "—" if v is None else f"{v * 100:.2f}%"  # noqa: E731
        which = "labelled problems held out from rule writing" if report.held_out else "labelled problems"
        judged = "rules" if report.source == "rules" else "concepts"  # a hybrid report also judges what only the learned half finds
        self.stdout.write(f"{report.problems} {which}, {len(report.concepts)} {judged}, source {report.source}")
        self.stdout.write(f"average FP rate {pct(report.fp_rate)}, average FN rate {pct(report.fn_rate)}")
        self.stdout.write(f"{'concept':32} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>5} {'fp rate':>8} {'fn rate':>8}")
        for slug, s in sorted(report.concepts.items()):
            self.stdout.write(
                f"{slug:32} {s['tp']:>4} {s['fp']:>4} {s['fn']:>4} {s['tn']:>5} {pct(s['fp_rate']):>8} {pct(s['fn_rate']):>8}"
            )
