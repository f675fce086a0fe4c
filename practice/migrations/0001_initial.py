"""Attempt moves from problems/ to practice/ without touching its table or its rows.

State only: the model `practice.Attempt` is created over the existing table `problems_attempt`
(problems/0004 and 0006 made it), and problems/0007 removes `problems.Attempt` from problems' state.
On a fresh database the table is made by those problems migrations, as before.

The content type `problems.attempt` is renamed to `practice.attempt`, so the permissions that hang
on it (view_attempt, add_attempt, ... and the role groups that hold them) come along instead of being
created anew, and no group loses them.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_move(apps, schema_editor, old="problems", new="practice"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    if ContentType.objects.using(db).filter(app_label=new, model="attempt").exists():
        return  # already there (made by a post_migrate since): nothing to carry
    ContentType.objects.using(db).filter(app_label=old, model="attempt").update(app_label=new)


def content_type_back(apps, schema_editor):
    content_type_move(apps, schema_editor, old="practice", new="problems")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("problems", "0006_attempt_client_key"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Attempt",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("verdict", models.CharField(choices=[("correct", "correct"), ("incorrect", "incorrect"), ("solved", "solved (self-report)"), ("partly", "partly solved (self-report)"), ("not_solved", "not solved (self-report)"), ("skipped", "skipped")], max_length=12)),
                        ("outcome", models.FloatField(help_text="1 solved, 0.5 partly, 0 not solved (skips are not outcomes).")),
                        ("answer", models.TextField(blank=True, help_text="What the student typed, if anything.")),
                        ("recommended_because", models.CharField(blank=True, help_text="The reason the problem was offered.", max_length=300)),
                        ("client_key", models.CharField(blank=True, default="", help_text="The submission's own key (the practice form's, or an API client's): the same key is stored once.", max_length=64)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("problem", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="attempts", to="problems.problem")),
                        ("student", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="attempts", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "problems_attempt",
                        "ordering": ["created_at", "id"],
                        "indexes": [models.Index(fields=["student", "created_at"], name="attempt_student_time")],
                        "constraints": [
                            models.UniqueConstraint(condition=models.Q(("client_key", ""), _negated=True), fields=("student", "client_key"), name="attempt_unique_client_key")
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_move, content_type_back),
    ]
