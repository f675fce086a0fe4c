from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from embeddings.services import text_vectors_cached
from problems.models import Problem


class Command(BaseCommand):
    help = (
        "Fill the cache of the problems' all-MiniLM-L6-v2 sentence vectors ahead of a rebuild (the MiniLM fallback "
        "text and the minilm method read it): only texts without a vector, or edited since theirs was made, are "
        "encoded. Interrupted, it keeps the batches it finished; run it again to go on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", help="only the problems of this collection (default: the whole bank)")

    def handle(self, *args: Any, **options: Any) -> None:
        problems = Problem.objects.order_by("id")
        if options["collection"]:
            problems = problems.filter(collection=options["collection"])
        rows = list(problems.values_list("id", "text"))
        if not rows:
            where = f"collection {options['collection']!r}" if options["collection"] else "the bank"
            raise CommandError(f"no problems in {where}: nothing to encode")
        ids, texts = [pid for pid, _ in rows], [text for _, text in rows]
        started = time.monotonic()

        def progress(done: int, total: int) -> None:
            self.stderr.write(f"encoded {done} of the {total} texts not cached yet ({time.monotonic() - started:.0f} s)")

        try:
            _, encoded = text_vectors_cached(ids=ids, texts=texts, on_progress=progress if options["verbosity"] > 0 else None)
        except RuntimeError as exc:  # the sentence model cannot load
            raise CommandError(f"{exc}; the cache was left as it was") from exc
        except KeyboardInterrupt:
            raise CommandError("interrupted: the batches already encoded stay cached; run the command again to go on") from None
        seconds = time.monotonic() - started
        rate = f" ({encoded / seconds:.1f} problems/s)" if encoded and seconds > 0 else ""
        self.stdout.write(f"{len(ids)} problems: {encoded} encoded, {len(ids) - encoded} from the cache, in {seconds:.1f} s{rate}")
