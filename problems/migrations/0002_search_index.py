"""Full-text search index on PostgreSQL; SQLite (the zero-setup default) searches with LIKE instead."""

from django.db import migrations

INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS problem_search_gin ON problems_problem USING gin "
    "(to_tsvector('english'::regconfig, title || ' ' || text))"
)


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(INDEX_SQL)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS problem_search_gin")


class Migration(migrations.Migration):
    dependencies = [("problems", "0001_initial")]
    operations = [migrations.RunPython(create_index, drop_index)]
