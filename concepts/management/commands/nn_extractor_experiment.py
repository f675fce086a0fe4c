from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from concepts.models import JobStatus, NeuralExperiment
from concepts.neural.schemes import SCHEMES
from concepts.selectors import neural_results, neural_suggestion_lists
from concepts.services import ExperimentInputError, NEURAL_PARAMS, neural_experiment_execute, neural_experiment_start


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


class Command(BaseCommand):
    help = "The paper's Table 3 on this bank: FN/FP of the neural extractor per training scheme over random train/test rounds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--concepts", required=True, help="Comma-separated concept slugs.")
        parser.add_argument("--rounds", type=int, default=100, help="Random train/test splits per concept and scheme (default 100).")
        parser.add_argument("--schemes", default=",".join(SCHEMES), help=f"Comma-separated schemes (default all: {','.join(SCHEMES)}).")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--no-suggest", action="store_true", help="Skip training the best extractors and storing their label suggestions.")
        parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=f"Training override ({', '.join(NEURAL_PARAMS)}); repeatable.")
        parser.add_argument("--json", action="store_true", help="Print the results as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        params = {}
        for item in options["param"]:
            name, sep, value = item.partition("=")
            if not sep:
                raise CommandError(f"--param expects NAME=VALUE, got {item!r}")
            params[name.strip()] = value.strip()
        schemes = [s.strip() for s in options["schemes"].split(",") if s.strip()]
        if not schemes:  # the service reads no schemes as all of them; an empty option is a mistake
            raise CommandError("--schemes names no scheme; leave it out for all of them")
        try:
            experiment = neural_experiment_start(
                concepts=[s.strip() for s in options["concepts"].split(",") if s.strip()],
                schemes=schemes,
                rounds=options["rounds"],
                seed=options["seed"],
                params=params,
                suggest=not options["no_suggest"],
            )
        except ExperimentInputError as exc:
            raise CommandError(str(exc)) from None
        neural_experiment_execute(experiment_id=experiment.id)  # a no-op if a worker already took it
        experiment = NeuralExperiment.objects.get(id=experiment.id)
        if experiment.status == JobStatus.FAILED:
            raise CommandError(f"neural experiment #{experiment.id} failed: {experiment.error}")
        if experiment.status != JobStatus.DONE:
            raise CommandError(f"neural experiment #{experiment.id} is {experiment.get_status_display()} (a worker has it)")
        results = neural_results(experiment)
        lists = neural_suggestion_lists(experiment, limit=0)
        unlabelled, disagreements = lists["unlabelled_count"], lists["disagree_count"]
        if options["json"]:
            out = {"experiment": experiment.id, **results, "suggestions": {"unlabelled": unlabelled, "disagreements": disagreements}}
            self.stdout.write(json.dumps(out, indent=2))
            return
        slugs = experiment.concepts
        self.stdout.write(
            f"Neural experiment #{experiment.id}: {results['rounds']} rounds, word vectors {results['word_vectors']}, "
            f"{results['vocabulary']['all']} words ({results['vocabulary']['selected']} selected), {results['seconds']}s"
        )
        header = f"{'scheme':<52}" + "".join(f"{s[:18]:>20}" for s in slugs) + f"{'FN':>8}{'FP':>8}{'ΔFN':>8}{'ΔFP':>8}"
        self.stdout.write(header)
        for key, row in results["schemes"].items():
            cells = "".join(f"{_pct(row['concepts'][s]['fn']):>9} /{_pct(row['concepts'][s]['fp']):>8} " for s in slugs)
            self.stdout.write(
                f"{row['label']:<52}{cells}{_pct(row['fn']):>8}{_pct(row['fp']):>8}"
                f"{_pct(row.get('fn_reduction')):>8}{_pct(row.get('fp_reduction')):>8}"
            )
        self.stdout.write("cells: FN / FP averaged over rounds; ΔFN, ΔFP: relative reduction against down-sampling")
        if experiment.suggest:
            self.stdout.write(f"Suggestions: {unlabelled} concepts on unlabelled problems; {disagreements} disagreements with the labels or rules")
