"""Settings come from the environment; run in subprocesses so each sees a clean environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `python -c code`, or `python manage.py args` when code is "manage"."""
    base = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "prob2vec_site.settings", "HOME": str(ROOT)}
    argv = ["manage.py", *args] if code == "manage" else ["-c", code]
    return subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=300
    )


SHOW = "import django; django.setup(); from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'], s.CELERY_TASK_ALWAYS_EAGER, s.DEBUG, s.ALLOWED_HOSTS)"


def test_defaults_are_sqlite_eager_celery_and_debug() -> None:
    out = run_python(SHOW).stdout
    assert out.startswith("django.db.backends.sqlite3 ") and str(ROOT / "db.sqlite3") in out
    assert out.rstrip().endswith("True True ['127.0.0.1', 'localhost', '[::1]']")


def test_env_selects_postgres_and_a_real_broker() -> None:
    out = run_python(
        SHOW,
        DATABASE_URL="postgres://u:p@db.example:5433/course",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
        DEBUG="False",
        SECRET_KEY="x" * 50,
        ALLOWED_HOSTS="studio.example.edu",
    ).stdout
    assert out.split() == ["django.db.backends.postgresql", "course", "False", "False", "['studio.example.edu']"]


def test_the_embedded_broker_of_make_run_is_a_real_queue_in_a_folder(tmp_path: Path) -> None:
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_TRANSPORT_OPTIONS['data_folder_in'], "
        "s.CELERY_BROKER_TRANSPORT_OPTIONS['data_folder_out'], s.DATABASES['default']['OPTIONS']['transaction_mode'])"
    )
    out = run_python(code, CELERY_BROKER_URL="filesystem://localhost/", CELERY_BROKER_DIR=str(tmp_path / "b")).stdout.split()
    queue = str(tmp_path / "b" / "queue")
    assert out == ["False", queue, queue, "IMMEDIATE"] and (tmp_path / "b" / "control").is_dir()
    assert "prob2vec_site.devrun" in (ROOT / "Makefile").read_text()  # `make run` starts runserver with a worker


def test_secret_key_is_required_when_debug_is_off() -> None:
    result = run_python(SHOW, DEBUG="False")
    assert result.returncode != 0 and "SECRET_KEY is required when DEBUG is off" in result.stderr


def test_secret_key_can_come_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "key").write_text("s" * 60 + "\n")
    code = "import django; django.setup(); from django.conf import settings as s; print(s.SECRET_KEY)"
    assert run_python(code, DEBUG="False", SECRET_KEY_FILE=str(tmp_path / "key")).stdout.strip() == "s" * 60


@pytest.mark.parametrize(
    "env, message",
    [
        ({"DEBUG": "maybe"}, "Unexpected value DEBUG=maybe"),
        ({"DATABASE_URL": "mysql://x/y"}, "Unexpected value DATABASE_URL=mysql://x/y"),
        ({"EMBEDDING_FALLBACK_TEXT": "bert"}, "Unexpected value EMBEDDING_FALLBACK_TEXT=bert, use 'minilm' or 'lsa'"),
        ({"EMBEDDING_TRIPLET_SHARE_MIN": "thirty"}, "Unexpected value EMBEDDING_TRIPLET_SHARE_MIN=thirty, use a whole number of triplets (0: off)"),
        ({"RULES_READ_SOLUTIONS": "sometimes"}, "Unexpected value RULES_READ_SOLUTIONS=sometimes, use 'True' or 'False'"),
        ({"EMBEDDING_TRIPLET_SHARE_MIN": "²"}, "Unexpected value EMBEDDING_TRIPLET_SHARE_MIN=², use a whole number"),
        # Durations: a number of seconds, finite and not negative (a NaN budget would never run out).
        ({"PRACTICE_BANK_RECHECK_SECONDS": "abc"}, "Unexpected value PRACTICE_BANK_RECHECK_SECONDS=abc, use a number of seconds"),
        ({"PRACTICE_BANK_COUNT_SECONDS": "inf"}, "Unexpected value PRACTICE_BANK_COUNT_SECONDS=inf, use a number of seconds, 0 or more"),
        ({"RULE_FALLBACK_BUDGET_SECONDS": "nan"}, "Unexpected value RULE_FALLBACK_BUDGET_SECONDS=nan, use a number of seconds, 0 or more"),
        ({"ATTEMPT_DUPLICATE_WINDOW_SECONDS": "-5"}, "Unexpected value ATTEMPT_DUPLICATE_WINDOW_SECONDS=-5, use a number of seconds, 0 or more"),
        ({"SECRET_KEY_FILE": "/nonexistent/key"}, "SECRET_KEY_FILE=/nonexistent/key cannot be read: No such file or directory"),
    ],
)
def test_unexpected_values_are_refused(env: dict[str, str], message: str) -> None:
    result = run_python(SHOW, **env)
    assert result.returncode != 0 and message in result.stderr


def test_deploy_check_is_clean_under_production_settings() -> None:
    result = run_python(
        "manage",
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="False",
        SECRET_KEY="k" * 64 + "-production-like-secret-Zq9",
        ALLOWED_HOSTS="studio.example.edu",
        SECURE_SSL_REDIRECT="True",
        SECURE_HSTS_SECONDS="31536000",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="True",
        SECURE_HSTS_PRELOAD="True",
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_the_sqlite_default_that_make_run_uses_migrates_and_loads_the_demo(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    for args in (["migrate", "--noinput", "-v0"], ["load_demo"], ["load_demo"]):
        result = run_python("manage", *args, DATABASE_URL=database_url)
        assert result.returncode == 0, result.stderr
    assert "0 created, 0 updated, 286 unchanged" in result.stdout
    assert "student / demo-student" in result.stdout
