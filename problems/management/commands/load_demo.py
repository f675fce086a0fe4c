from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from concepts.services import concepts_upsert, rules_load
from problems.bank_io import parse_jsonl
from problems.demo_course import DEMO_COLLECTION, DEMO_USERS, bank_files, demo_rules, read_tsv
from problems.services import modules_upsert, problems_import


class Command(BaseCommand):
    help = "Load the demo course (modules, concepts, problems with labels, demo users). Safe to run again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-users", action="store_true", help="do not create the demo logins")

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        modules_upsert(rows=read_tsv("modules.tsv"))
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
        changed = rules_load(rules=rules, message="demo course rules")
        self.stdout.write(f"Concept rules: {len(rules)} in the demo set, {changed} created or changed")
        if options["no_users"]:
            return
        if not settings.DEBUG:
            self.stdout.write("Demo logins not created: DEBUG is off (they are for local use only).")
            return
        User = get_user_model()
        for username, password, role in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_password(password)
                user.save()
            user.groups.set([Group.objects.get(name=role)])
            if role == "instructor":
                user.is_staff = True
                user.save(update_fields=["is_staff"])
        self.stdout.write("Demo logins (username / password): " + ", ".join(f"{u} / {p}" for u, p, _ in DEMO_USERS))
