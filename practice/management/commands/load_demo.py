"""The demo course loader. It lives in `practice`, the app every other one sits under, because it
fills all of them: modules and problems, concepts and rules, annotators' labels, triplets, and the
demo class's attempts."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import F

from concepts.models import Concept, ConceptRuleVersion, LabelSet
from concepts.services import concepts_upsert, labels_set, rules_load
from embeddings.models import SimilarityTriplet
from embeddings.services import triplet_create, triplet_decide, triplet_vote
from problems.bank_io import parse_jsonl
from problems.demo_course import (
    DEMO_COLLECTION,
    DEMO_DIR,
    DEMO_EXTRA_TAS,
    DEMO_USERS,
    bank_files,
    demo_rules,
    read_jsonl,
    read_tsv,
)
from problems.models import Module, Problem
from problems.services import modules_upsert, problems_import

DECISIONS = {"accepted": "accept", "rejected": "reject", "swapped": "swap"}
DEMO_RULES_MESSAGE = "demo course rules"  # the change note of the rule versions load_demo saves


class Command(BaseCommand):
    help = "Load the demo course (modules, concepts, problems, rules, labels, triplets, demo users). Safe to run again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-users", action="store_true", help="do not create the demo logins (nor their labels and triplets)")

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        modules_upsert(rows=read_tsv("modules.tsv"))
        if not Module.objects.filter(open_for_practice=True).exists():
            # The demo instructor has opened the first six modules (a fresh course, once).
            Module.objects.filter(order__lte=6).update(open_for_practice=True)
        concepts_upsert(rows=read_tsv("concepts.tsv"))
        records = []
        for path in bank_files():
            parsed = parse_jsonl(path.read_bytes())
            if parsed.errors:
                raise CommandError(f"{path.name}: " + "; ".join(str(e) for e in parsed.errors))
            records += parsed.records
        report = problems_import(records=records, default_collection=DEMO_COLLECTION, collection=DEMO_COLLECTION, release=True)
        self.stdout.write(f"Demo course: {report.summary()}")
        rules = demo_rules()
        # `make run` loads the demo at every start: a rule whose current version someone else saved (a TA's
        # edit, a revert) is theirs now, and stays; the others follow rules.json.
        edited = set(
            ConceptRuleVersion.objects.filter(rule__concept__slug__in=rules, number=F("rule__version"))
            .exclude(message=DEMO_RULES_MESSAGE, author=None)
            .values_list("rule__concept__slug", flat=True)
        )
        changed = rules_load(rules={slug: spec for slug, spec in rules.items() if slug not in edited}, message=DEMO_RULES_MESSAGE)
        kept = f"; {len(edited)} edited since and kept" if edited else ""
        self.stdout.write(f"Concept rules: {len(rules)} in the demo set, {changed} created or changed{kept}")
        if options["no_users"]:
            return
        if not settings.DEBUG:
            self.stdout.write("Demo logins not created: DEBUG is off (they are for local use only).")
            return
        users = self._users()
        self.stdout.write("Demo logins (username / password): " + ", ".join(f"{u} / {p}" for u, p, _ in DEMO_USERS)
                          + "; more TAs: " + ", ".join(f"{u} / {p}" for u, p in DEMO_EXTRA_TAS))
        self._labels(users)
        self._triplets(users)
        self._words(users)
        self._practice()

    def _users(self) -> dict[str, Any]:
        User = get_user_model()
        users = {}
        for username, password, role in DEMO_USERS + [(u, p, "ta") for u, p in DEMO_EXTRA_TAS]:
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_password(password)
            user.is_staff = role == "instructor"
            user.save()
            user.groups.set([Group.objects.get(name=role)])
            users[username] = user
        return users

    def _labels(self, users: dict[str, Any]) -> None:
        """The experienced TA's label sets are the bank's labels; ta2 labelled 80 problems independently."""
        problems = {p.source_id: p for p in Problem.objects.filter(collection=DEMO_COLLECTION)}
        concepts = {c.slug: c for c in Concept.objects.all()}
        done = set(LabelSet.objects.filter(problem__collection=DEMO_COLLECTION).values_list("problem__source_id", "annotator__username"))
        count = 0
        for record in records_with_labels():
            if (record["id"], "ta") not in done:
                labels_set(problem=problems[record["id"]], annotator=users["ta"], concepts=[concepts[s] for s in record["labels"]])
                count += 1
        for record in read_jsonl("labels_ta2.jsonl"):
            if (record["id"], "ta2") not in done:
                labels_set(problem=problems[record["id"]], annotator=users["ta2"], concepts=[concepts[s] for s in record["concepts"]])
                count += 1
        self.stdout.write(f"Annotators' label sets: {count} new")

    def _triplets(self, users: dict[str, Any]) -> None:
        problems = {p.source_id: p for p in Problem.objects.filter(collection=DEMO_COLLECTION)}
        created = 0
        for record in read_jsonl("triplets.jsonl"):
            a, b, c = (problems[record[k]] for k in ("anchor", "positive", "negative"))
            if SimilarityTriplet.objects.filter(anchor=a, positive__in=[b, c], negative__in=[b, c]).exists():
                continue
            triplet = triplet_create(anchor=a, positive=b, negative=c, user=users[record["proposer"]], note=record.get("note", ""))
            for judge, choice in record["votes"].items():
                triplet_vote(triplet=triplet, voter=users[judge], choice=choice)
            triplet_decide(triplet=triplet, decision=DECISIONS[record["decision"]], user=users["headta"])
            created += 1
        self.stdout.write(f"Triplets: {created} new ({SimilarityTriplet.objects.filter(status='accepted').count()} accepted in all)")


    def _practice(self) -> None:
        """A class of 12 demo students (no login) who practised the open modules in the book's order,
        each solving a problem with chance ability ** (number of its concepts): the class progress page
        has a picture to show. The last of them is stuck. Once: never on a course with attempts."""
        import random

        from concepts.models import GroundTruthLabel
        from practice.models import Attempt
        from problems.roles import STUDENT

        if Attempt.objects.exists():
            return
        User = get_user_model()
        group = Group.objects.get(name=STUDENT)
        problems = list(Problem.objects.filter(collection=DEMO_COLLECTION, released=True, module__open_for_practice=True).order_by("module__order", "id"))
        sizes: dict[int, int] = {}
        for pid in GroundTruthLabel.objects.filter(problem__in=problems).values_list("problem_id", flat=True):
            sizes[pid] = sizes.get(pid, 0) + 1
        rng = random.Random(7)
        attempts = []
        for i in range(12):
            student, _ = User.objects.get_or_create(username=f"demo-class-{i + 1:02d}", defaults={"first_name": f"Student {i + 1}"})
            student.groups.add(group)
            ability = 0.95 - 0.05 * i
            for problem in problems[: rng.randint(8, 40)]:
                solved = rng.random() < ability ** sizes.get(problem.pk, 1) and i != 11
                verdict = "correct" if solved and problem.answer else "solved" if solved else "not_solved"
                attempts.append(Attempt(student=student, problem=problem, verdict=verdict, outcome=1.0 if solved else 0.0,
                                        recommended_because="demo history (the book's order)"))
        Attempt.objects.bulk_create(attempts)
        self.stdout.write(f"Demo class: 12 students with {len(attempts)} attempts (see Class progress)")

    def _words(self, users: dict[str, Any]) -> None:
        """The demo TA's word selection (the informative words of the bank), if the demo ships one."""
        from concepts.services import words_select

        path = DEMO_DIR / "selected_words.txt"
        if path.exists():
            words = [w.strip() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()]
            size = words_select(add=words, remove=[], user=users["ta"])
            self.stdout.write(f"Selected words: {size}")


def records_with_labels() -> list[dict[str, Any]]:
    out = []
    for path in bank_files():
        out += [r for r in read_jsonl(f"bank/{path.name}") if r.get("labels")]
    return out
