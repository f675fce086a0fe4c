"""gunicorn settings: `gunicorn -c prob2vec_site/gunicorn.conf.py prob2vec_site.wsgi:application`.

The app is loaded once in the master, which also builds the practice bank (every problem's vector
and concepts for the recommender) before forking: workers share it copy-on-write, and no student
waits seconds for the first recommendation of a 100,000-problem bank. It also imports the embedding
methods (torch) once, so no worker spends seconds on that on its first lab page. Command-line flags and
GUNICORN_CMD_ARGS override anything here.
"""

import logging
import multiprocessing
import os

# One BLAS thread per worker: the workers are the parallelism, and numpy threads fighting over
# the same cores make a millisecond of linear algebra take ten. (Set before the app is imported.)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

bind = os.getenv("GUNICORN_BIND", "127.0.0.1:8000")
workers = int(os.getenv("WEB_CONCURRENCY", str(min(8, 2 * multiprocessing.cpu_count() + 1))))
preload_app = True
timeout = int(os.getenv("GUNICORN_TIMEOUT", "60"))
max_requests = int(os.getenv("GUNICORN_MAX_REQUESTS", "5000"))  # recycle workers now and then, staggered
max_requests_jitter = max_requests // 10
accesslog = os.getenv("GUNICORN_ACCESS_LOG") or None


def when_ready(server):  # noqa: ANN001 (gunicorn hook)
    try:
        from practice.selectors import practice_bank

        bank = practice_bank()
        server.log.info("practice bank ready: %d problems (embedding run %s)", len(bank.ids), bank.run_id)
    except Exception:  # a down database must not stop the site from starting; the first request builds it
        logging.getLogger(__name__).exception("practice bank not built at start")
    try:
        # The lab pages list the embedding methods, whose modules import torch: seconds of CPU that
        # every worker would otherwise spend on its first lab page, holding up the requests behind it.
        # Imported here (no torch op runs, so no thread pool exists yet), workers share it copy-on-write.
        import embeddings.algorithms.methods  # noqa: F401
    except Exception:
        logging.getLogger(__name__).exception("embedding methods not imported at start")
    finally:
        from django.db import connections

        connections.close_all()  # never share a database connection across fork
