"""`make run`: runserver and a real Celery worker side by side, on an embedded broker, with no Redis.

    python -m prob2vec_site.devrun [HOST:PORT]

Both children get CELERY_BROKER_URL=filesystem:// (unless it is already set), so the web process queues
a job as a file under .broker/ (prob2vec_site/settings.py) and returns at once, and the worker runs it and
writes its progress to the job's row, which the page polls. Each child runs in its own process group;
when either exits, or this process gets Ctrl-C or SIGTERM, both groups are stopped (SIGTERM, then
SIGKILL after a grace period), so no worker outlives the server. Development only: production runs
gunicorn and `celery worker` on Redis (README, "Production").
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRACE_SECONDS = 10.0


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + GRACE_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for child in children:  # whatever is left, and the group's grandchildren (runserver's reloader child)
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()


def main(argv: list[str]) -> int:
    address = argv[1] if len(argv) > 1 else "127.0.0.1:8000"
    env = {**os.environ}
    env.setdefault("CELERY_BROKER_URL", "filesystem://localhost/")
    worker_args = [
        sys.executable, "-m", "celery", "-A", "prob2vec_site", "worker", "--pool", "solo", "--loglevel", "INFO",
        "--hostname", f"devrun-{os.getpid()}@%h", "--without-heartbeat", "--without-gossip", "--without-mingle",
    ]
    children = [
        subprocess.Popen(worker_args, cwd=ROOT, env=env, start_new_session=True),
        subprocess.Popen([sys.executable, "manage.py", "runserver", address], cwd=ROOT, env=env, start_new_session=True),
    ]
    print(f"devrun: worker pid {children[0].pid}, web pid {children[1].pid}, broker {env['CELERY_BROKER_URL']}", flush=True)
    stopping = {"signal": 0}

    def on_signal(signum: int, frame: object) -> None:
        stopping["signal"] = signum

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        while not stopping["signal"] and all(child.poll() is None for child in children):
            time.sleep(0.3)
    finally:
        ended = [c for c in children if c.poll() is not None]
        if ended and not stopping["signal"]:
            which = "worker" if ended[0] is children[0] else "web server"
            print(f"devrun: the {which} exited ({ended[0].returncode}); stopping the other", file=sys.stderr, flush=True)
        _stop(children)
    return 0 if stopping["signal"] else (children[1].returncode or 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
