"""Attempt now lives in practice/ (practice/0001 took it over, table and rows unchanged): remove it
from problems' state only. The table `problems_attempt` stays; practice.Attempt uses it."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("problems", "0006_attempt_client_key"),
        ("practice", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Attempt")],
            database_operations=[],
        ),
    ]
