"""`make test` must fail at once, saying what to start, when a service is down (never skip silently)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_pytest(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_layering.py", "-q"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_unreachable_postgres_stops_the_run_with_instructions() -> None:
    result = run_pytest(DATABASE_URL="postgres://postgres@127.0.0.1:1/prob2vec")
    assert result.returncode == 2
    assert "PostgreSQL is not reachable at 127.0.0.1:1" in result.stdout + result.stderr
    assert "pg_ctlcluster" in result.stdout + result.stderr


def test_an_unreachable_redis_stops_the_run_with_instructions() -> None:
    result = run_pytest(TEST_REDIS_URL="redis://127.0.0.1:1/0")
    assert result.returncode == 2 and "Redis is not reachable at 127.0.0.1:1" in result.stdout + result.stderr


def test_sqlite_is_refused_for_the_suite() -> None:
    result = run_pytest(DATABASE_URL="sqlite:////tmp/x.sqlite3")
    assert result.returncode == 2 and "the suite runs on PostgreSQL" in result.stdout + result.stderr
