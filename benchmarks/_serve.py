"""What the load benchmarks share: gunicorn on loopback with the project's config, and a request budget.

``gunicorn_start`` collects the static files (DEBUG off serves hashed files from the manifest, as in
production) and starts ``gunicorn -c prob2vec_site/gunicorn.conf.py`` on 127.0.0.1 in its own process
group, DEBUG off, against the given database; it returns once ``/login/`` answers 200.
``gunicorn_stop`` ends that process group. Used by ``recommend_load.py`` and ``site_load.py``.
"""

from __future__ import annotations

import http.client
import os
import runpy
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUNICORN_CONF = ROOT / "prob2vec_site/gunicorn.conf.py"


def gunicorn_config_defaults() -> tuple[int, int]:
    """The (workers, threads) that prob2vec_site/gunicorn.conf.py picks on this machine, read from the file itself."""
    config = runpy.run_path(str(GUNICORN_CONF))
    return int(config.get("workers", 1)), int(config.get("threads", 1))


def gunicorn_start(url: str, *, port: int, workers: int | None = None, threads: int | None = None,
                   ready_note: str = "(practice bank built before forking)") -> subprocess.Popen:
    """Serve the site on 127.0.0.1:port against `url`; workers/threads default to the config's choice."""
    env = dict(os.environ, DATABASE_URL=url, DEBUG="False", SECRET_KEY="bench-only-" + "x" * 50, ALLOWED_HOSTS="127.0.0.1",
               SESSION_COOKIE_SECURE="False", CSRF_COOKIE_SECURE="False", CELERY_BROKER_URL="", LOG_LEVEL="WARNING",
               SECURE_SSL_REDIRECT="False", SECURE_HSTS_SECONDS="0")  # plain HTTP on 127.0.0.1
    cmd = [str(ROOT / ".venv/bin/gunicorn"), "-c", str(GUNICORN_CONF), "prob2vec_site.wsgi:application",
           "--bind", f"127.0.0.1:{port}", "--log-level", "warning"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    # DEBUG off serves hashed static files from the manifest, as in production.
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    t = time.perf_counter()
    server = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.time() + 180
    while time.time() < deadline:
        if server.poll() is not None:
            sys.exit(f"gunicorn exited with {server.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/login/")
            if conn.getresponse().status == 200:
                shown = workers if workers is not None else gunicorn_config_defaults()[0]
                print(f"gunicorn: {shown} workers ready in {time.perf_counter() - t:.1f} s {ready_note}".rstrip())
                return server
        except OSError:
            time.sleep(0.5)
    gunicorn_stop(server)
    sys.exit("gunicorn did not answer within 180 s")


def gunicorn_stop(server: subprocess.Popen | None) -> None:
    if server is None or server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)


class Budget:
    """A shared count of requests left: `take` one before each request."""

    def __init__(self, n: int):
        self.n, self.lock = n, threading.Lock()

    def take(self) -> bool:
        with self.lock:
            if self.n <= 0:
                return False
            self.n -= 1
            return True

    def left(self) -> bool:
        return self.n > 0
