"""The throwaway PostgreSQL databases the benchmarks fill (psycopg2, outside Django)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse


def admin_connect(url: str) -> Any:
    """An autocommit connection to the server's `postgres` database, for CREATE/DROP DATABASE."""
    import psycopg2

    p = urlparse(url)
    conn = psycopg2.connect(
        host=p.hostname or "127.0.0.1", port=p.port or 5432, user=p.username or "postgres",
        password=p.password, dbname="postgres",
    )
    conn.autocommit = True
    return conn


def db_exists(url: str, name: str) -> bool:
    conn = admin_connect(url)
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        found = cur.fetchone() is not None
    conn.close()
    return found


def db_create(url: str, name: str, drop_first: bool = True) -> None:
    from psycopg2 import sql

    conn = admin_connect(url)
    with conn.cursor() as cur:
        if drop_first:
            cur.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    conn.close()


def db_drop(url: str, name: str) -> None:
    from psycopg2 import sql

    conn = admin_connect(url)
    with conn.cursor() as cur:
        cur.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    conn.close()


def django_on_fresh_db(url: str) -> str:
    """Create (or recreate) the database `url` names, point Django at it and set Django up; returns its name.
    Run `migrate` next; drop it with `db_drop(url, name)`."""
    import os
    from urllib.parse import urlparse

    name = urlparse(url).path.lstrip("/")
    db_create(url, name)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prob2vec_site.settings")
    import django

    django.setup()
    return name
