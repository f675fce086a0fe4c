"""Indexes for the problem list on PostgreSQL (the list benchmark: benchmarks/list_page.py).

- `problems_problem.module_order`: a copy of the problem's module `order`, kept equal to it by
  triggers (on a problem's insert or module change, and on a module's order change), with an index
  on (module_order, collection, source_id). The list's default sort, module order then collection
  then id, then reads pages from that index instead of sorting the whole bank on every request.
  It is not a model field: only `selectors.problem_list` reads it (PostgreSQL only).
- `problems_problem.search_vector`: the full-text document of 0002's index expression, stored as a
  generated column and indexed with GIN instead of that expression. With the expression index every
  plan that reads rows outside the index (a page read in sort order, a module filter) computes
  `to_tsvector` again for each row, which PostgreSQL costs at a small fraction of its real cost
  (~50 us a problem): pages of searches for words in ~1% of the bank took 150-350 ms at 100,000
  problems. The stored document is computed once per write, and matching it is cheap.
- An index on `source_id` alone, for the `OR source_id = %s` of the search (`PG_SEARCH_WHERE`):
  without it that branch can only scan a whole index (or the table), so PostgreSQL cannot combine
  it cheaply with the GIN index.

SQLite (the zero-setup default) is left as it is.
"""

from django.db import migrations

FORWARD = [
    "ALTER TABLE problems_problem ADD COLUMN IF NOT EXISTS module_order integer",
    """
    CREATE OR REPLACE FUNCTION problems_problem_set_module_order() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.module_order := (SELECT m."order" FROM problems_module m WHERE m.id = NEW.module_id);
        RETURN NEW;
    END
    $$
    """,
    """
    CREATE TRIGGER problem_set_module_order BEFORE INSERT OR UPDATE OF module_id ON problems_problem
    FOR EACH ROW EXECUTE FUNCTION problems_problem_set_module_order()
    """,
    """
    CREATE OR REPLACE FUNCTION problems_module_copy_order() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE problems_problem SET module_order = NEW."order" WHERE module_id = NEW.id;
        RETURN NULL;
    END
    $$
    """,
    """
    CREATE TRIGGER module_copy_order AFTER UPDATE OF "order" ON problems_module
    FOR EACH ROW WHEN (OLD."order" IS DISTINCT FROM NEW."order") EXECUTE FUNCTION problems_module_copy_order()
    """,
    """
    UPDATE problems_problem p SET module_order = m."order"
    FROM problems_module m WHERE m.id = p.module_id AND p.module_order IS DISTINCT FROM m."order"
    """,
    "CREATE INDEX IF NOT EXISTS problem_sort_by_module ON problems_problem (module_order, collection, source_id)",
    # After the backfill above: updating a row computes its generated columns again.
    """
    ALTER TABLE problems_problem ADD COLUMN IF NOT EXISTS search_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('english'::regconfig, title || ' ' || text)) STORED
    """,
    "CREATE INDEX IF NOT EXISTS problem_search_vector ON problems_problem USING gin (search_vector)",
    "DROP INDEX IF EXISTS problem_search_gin",
    "CREATE INDEX IF NOT EXISTS problem_source_id ON problems_problem (source_id)",
]

BACKWARD = [
    "DROP INDEX IF EXISTS problem_source_id",
    "DROP INDEX IF EXISTS problem_sort_by_module",
    "DROP TRIGGER IF EXISTS module_copy_order ON problems_module",
    "DROP FUNCTION IF EXISTS problems_module_copy_order()",
    "DROP TRIGGER IF EXISTS problem_set_module_order ON problems_problem",
    "DROP FUNCTION IF EXISTS problems_problem_set_module_order()",
    "ALTER TABLE problems_problem DROP COLUMN IF EXISTS module_order",
    "CREATE INDEX IF NOT EXISTS problem_search_gin ON problems_problem USING gin "
    "(to_tsvector('english'::regconfig, title || ' ' || text))",  # 0002's index
    "DROP INDEX IF EXISTS problem_search_vector",
    "ALTER TABLE problems_problem DROP COLUMN IF EXISTS search_vector",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in FORWARD:
            schema_editor.execute(sql)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("problems", "0002_search_index")]
    operations = [migrations.RunPython(forward, backward)]
