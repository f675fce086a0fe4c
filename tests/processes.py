"""Real processes for full-stack tests: Celery workers, gunicorn and throwaway Redis servers, run
against the test database. Each runs in its own session with its output in a log file, and every
helper that starts one is a context manager that kills it (and its children) on the way out."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parents[1]


def wait_for(predicate: Callable[[], Any], seconds: float = 60.0, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def database_url(settings: Any) -> str:
    """The test database, for processes started outside pytest."""
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


class Process:
    """A started child: `popen`, and its combined stdout/stderr in `log_path`."""

    def __init__(self, name: str, args: list[str], env: dict[str, str]) -> None:
        self.name = name
        fd, path = tempfile.mkstemp(prefix=f"{name}-", suffix=".log")
        self.log_path = Path(path)
        with os.fdopen(fd, "w") as out:  # a file, not a pipe: a chatty child never blocks on a full pipe
            self.popen = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL the process and everything it started (its own session): no clean-up of any kind."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(timeout=10)

    def stop(self, seconds: float = 10.0) -> None:
        """SIGTERM, then SIGKILL for whatever is left after `seconds`; the log file goes too."""
        if self.alive():
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
                self.popen.wait(timeout=seconds)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
        self.kill()  # the children of a process that exited on SIGTERM may still be there
        self.log_path.unlink(missing_ok=True)

    def wait_for_log(self, text: str, seconds: float = 60.0) -> None:
        if not wait_for(lambda: text in self.log() or not self.alive(), seconds) or text not in self.log():
            raise AssertionError(f"{self.name} never logged {text!r}; its log:\n{self.log()[-6000:]}")


def _env(settings: Any, broker_url: str, extra: dict[str, str] | None) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(settings),
        "CELERY_BROKER_URL": broker_url,
        "DB_CONN_MAX_AGE": "0",  # no idle connection left to hold up the test database's flush
        "PRACTICE_BANK_RECHECK_SECONDS": "0",
        "PRACTICE_BANK_COUNT_SECONDS": "0",
        **(extra or {}),
    }


@contextmanager
def celery_worker(settings: Any, broker_url: str, env: dict[str, str] | None = None, name: str = "worker") -> Iterator[Process]:
    """`celery worker --pool solo` on the test database; yields once it is consuming."""
    worker = start_celery_worker(settings, broker_url, env, name)
    try:
        yield worker
    finally:
        worker.stop()


def start_celery_worker(settings: Any, broker_url: str, env: dict[str, str] | None = None, name: str = "worker") -> Process:
    """Start a worker and wait until it is consuming; the caller stops or kills it."""
    worker = Process(
        name,
        [sys.executable, "-m", "celery", "-A", "prob2vec_site", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--hostname", f"{name}-{os.getpid()}@%h", "--without-heartbeat", "--without-gossip", "--without-mingle"],
        _env(settings, broker_url, env),
    )
    try:
        worker.wait_for_log(" ready.")
    except BaseException:
        worker.stop()
        raise
    return worker


@contextmanager
def gunicorn(settings: Any, broker_url: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """The site under gunicorn (prob2vec_site/gunicorn.conf.py, 2 workers); yields its base URL."""
    import requests

    port = free_port()
    server = Process(
        "gunicorn",
        [sys.executable, "-m", "gunicorn", "-c", "prob2vec_site/gunicorn.conf.py", "prob2vec_site.wsgi:application",
         "--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "60"],
        _env(settings, broker_url, env),
    )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if not server.alive():
            return True
        try:
            return requests.get(f"{base}/login/", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    try:
        if not wait_for(up, 60) or not server.alive():
            raise AssertionError(f"gunicorn did not start; its log:\n{server.log()[-6000:]}")
        yield base
    finally:
        server.stop()


@contextmanager
def redis_server() -> Iterator[tuple[str, Process]]:
    """A throwaway Redis (no persistence) on a free port; yields its URL and process (kill it to take Redis down)."""
    import redis

    port = free_port()
    server = Process("redis", ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], dict(os.environ))
    url = f"redis://127.0.0.1:{port}/0"

    def up() -> bool:
        try:
            return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
        except redis.RedisError:
            return False

    try:
        if not wait_for(up, 20):
            raise AssertionError(f"redis-server did not start; its log:\n{server.log()[-3000:]}")
        yield url, server
    finally:
        server.stop()


def filesystem_broker(folder: Path) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The embedded broker of `make run` in `folder`: (URL, env for a worker, this process's transport options)."""
    for sub in ("queue", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    options = {"data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
               "control_folder": str(folder / "control"), "polling_interval": 0.2}
    return "filesystem://localhost/", {"CELERY_BROKER_DIR": str(folder)}, options


@contextmanager
def celery_app_on(broker_url: str, settings: Any, transport_options: dict[str, Any] | None = None) -> Iterator[Any]:
    """Point this process's Celery app at a real broker (not eager) for the duration."""
    from prob2vec_site.celery import app

    old = {"broker_url": app.conf.broker_url, "task_always_eager": app.conf.task_always_eager,
           "broker_transport_options": app.conf.broker_transport_options}

    def reset_connections() -> None:
        # The app caches its broker connections and producers; drop those made for the previous broker.
        # (Not app.close(): that also unregisters the app, and shared tasks imported later never reach it.)
        app._pool = None
        app.amqp._producer_pool = None

    reset_connections()
    app.conf.update(broker_url=broker_url, broker_write_url=broker_url, broker_read_url=broker_url, task_always_eager=False)
    if transport_options is not None:
        app.conf.update(broker_transport_options=transport_options)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield app
    finally:
        reset_connections()
        app.conf.update(**old, broker_write_url=None, broker_read_url=None)
