from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from concepts.services import HeldOutRejected, held_out_draw


class Command(BaseCommand):
    help = (
        "Hold out problems of a collection from rule writing: COUNT unlabelled problems drawn at random over its modules, "
        "to be labelled blind and to measure the rules (extractor_report --held-out)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True)
        parser.add_argument("--count", type=int, required=True, help="how many problems to hold out")
        parser.add_argument("--seed", type=int, default=0, help="the random draw (the same seed on the same bank draws the same problems)")
        parser.add_argument("--user", help="username recorded as having marked them")
        parser.add_argument("--json", action="store_true", help='print {"collection", "held_out", "modules": {module: count}}')

    def handle(self, *args: Any, **options: Any) -> None:
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']!r}")
        try:
            modules = held_out_draw(collection=options["collection"], count=options["count"], seed=options["seed"], user=user)
        except HeldOutRejected as exc:
            raise CommandError(str(exc)) from exc
        total = sum(modules.values())
        if options["json"]:
            self.stdout.write(json.dumps({"collection": options["collection"], "held_out": total, "modules": modules}, indent=2))
            return
        short = f" (only {total} unlabelled problems were left)" if total < options["count"] else ""
        self.stdout.write(f"{total} problems of {options['collection']} held out from rule writing{short}:")
        for module, n in modules.items():
            self.stdout.write(f"  {module}: {n}")
        self.stdout.write("Label them in the labelling page's queue 'Held out from rule writing', then run extractor_report --held-out.")
