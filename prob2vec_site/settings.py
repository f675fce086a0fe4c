"""Prob2Vec Studio settings: one module, every value from the environment with an embedded default.

With no variables set you get a working development site: SQLite in the project folder and Celery
tasks run eagerly in the caller. `make run` sets CELERY_BROKER_URL=filesystem:// and starts a real
worker beside runserver (prob2vec_site/devrun.py), so long jobs run in the background there too. Production sets DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY,
ALLOWED_HOSTS and DEBUG=False (see README, "Configuration").
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    value = os.getenv(name, default)
    if value.lower() in {"true", "1", "yes", "on"}:
        return True
    if value.lower() in {"false", "0", "no", "off", ""}:
        return False
    raise ImproperlyConfigured(f"Unexpected value {name}={value}, use 'True' or 'False'")


def envint(name: str, default: str) -> int:
    value = os.getenv(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"Unexpected value {name}={value}, use an integer") from None


def envseconds(name: str, default: str) -> float:
    """A duration in seconds: a finite number, 0 or more (a NaN budget would never run out, and
    float() takes "nan" and "inf")."""
    value = os.getenv(name, default)
    try:
        seconds = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"Unexpected value {name}={value}, use a number of seconds") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ImproperlyConfigured(f"Unexpected value {name}={value}, use a number of seconds, 0 or more")
    return seconds


def envsecret(name: str, default: str = "") -> str:
    """Read NAME, or the file named by NAME_FILE (Docker/Kubernetes secrets)."""
    path = os.getenv(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE={path} cannot be read: {exc.strerror or exc}") from None
    return os.getenv(name, default)


DEBUG = envbool("DEBUG", "True")

SECRET_KEY = envsecret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off (set SECRET_KEY or SECRET_KEY_FILE)")
    SECRET_KEY = "dev-only-insecure-key-never-used-with-DEBUG-off"

ALLOWED_HOSTS = [h for h in os.getenv("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.getenv("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
# A form that fails the CSRF check (a page left open across a sign-in or sign-out) gets the site's own page.
CSRF_FAILURE_VIEW = "prob2vec_site.security.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from our static files (the machines are offline)
    "django_htmx",
    "template_partials",
    "problems",
    "concepts",
    "embeddings",
    "practice",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "prob2vec_site.security.ContentSecurityPolicyMiddleware",
    # Outside the others, so it sees every response: Vary: HX-Request on all of them, and an htmx
    # request whose session has expired goes to the login page (prob2vec_site/htmx.py).
    "prob2vec_site.htmx.HtmxSiteMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before the CSRF middleware, which reads form bodies: an oversized body is refused unread.
    "prob2vec_site.security.BodySizeLimitMiddleware",
    "prob2vec_site.security.NoNulInFormsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "problems.roles.CourseRoleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# Scripts only from our own static files: no inline script, no eval (htmx runs with allowEval off,
# see base.html). Styles allow inline `style` because KaTeX's markup and Swagger UI need them.
CONTENT_SECURITY_POLICY = os.getenv(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)

ROOT_URLCONF = "prob2vec_site.urls"
WSGI_APPLICATION = "prob2vec_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "problems.roles.role_context",
                "problems.navigation.navigation",
            ],
        },
    },
]

# Default database engine is SQLite, so a fresh checkout runs with no server to install.
DATABASE_URL = os.getenv("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
if not DATABASE_URL.startswith(("sqlite:", "postgres:", "postgresql:")):
    raise ImproperlyConfigured(f"Unexpected value DATABASE_URL={DATABASE_URL}, use sqlite:///PATH or postgres://...")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=envint("DB_CONN_MAX_AGE", "60"))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["TEST"] = {"NAME": os.getenv("DB_TEST_NAME", "test_prob2vec")}
else:
    # `make run` has a worker writing job progress beside the web process: WAL lets pages read meanwhile,
    # and a transaction takes the write lock when it begins (IMMEDIATE), so a writer waits up to `timeout`
    # for the other one instead of failing at once with "database is locked" when it upgrades a read lock.
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE"}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Every sign-in path (login form, admin, API token) goes through the throttled backend.
AUTHENTICATION_BACKENDS = ["problems.login_throttle.ThrottledModelBackend"]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.getenv("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# Uploads: a problem file is read whole to validate every line before anything is written.
# How often a process asks whether the bank, labels or active embedding changed before recommending
# (index seeks), and how often it also counts rows to notice deletions (table scans).
PRACTICE_BANK_RECHECK_SECONDS = envseconds("PRACTICE_BANK_RECHECK_SECONDS", "3")
PRACTICE_BANK_COUNT_SECONDS = envseconds("PRACTICE_BANK_COUNT_SECONDS", "60")
# Sign-in throttling (login form and POST /api/token/): failures per account, and per address,
# within the window; beyond that, tries are refused until the oldest failure leaves the window.
LOGIN_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", "5")
LOGIN_IP_FAILURE_LIMIT = envint("LOGIN_IP_FAILURE_LIMIT", "30")
LOGIN_FAILURE_WINDOW_SECONDS = envint("LOGIN_FAILURE_WINDOW_SECONDS", "900")
PROBLEM_IMPORT_MAX_BYTES = envint("PROBLEM_IMPORT_MAX_BYTES", str(50 * 1024 * 1024))
# A rule RE2 refuses runs on the backtracking `regex` module: at most RULE_FALLBACK_TIMEOUT_SECONDS on
# one problem, and at most RULE_FALLBACK_BUDGET_SECONDS over the whole bank (a preview, a save's check,
# one extraction run), so a slow rule cannot tie up a worker however large the bank.
RULE_FALLBACK_BUDGET_SECONDS = envseconds("RULE_FALLBACK_BUDGET_SECONDS", "2")
# The rules (and the hybrid source's learned half) read a problem's solution after its statement, where it
# has one (README, "Rules read the solution"): labellers read it too, and it often names what the statement
# leaves to the solver. False: the statement alone, as before stop 39.
RULES_READ_SOLUTIONS = envbool("RULES_READ_SOLUTIONS", "true")
# The text the concept methods' fallback reads (embeddings/algorithms/fallback.py): "minilm" (the
# sentence model, cached per problem text; a first rebuild encodes the whole bank) or "lsa" (an LSA of the
# bank's TF-IDF: seconds, no model). Empty: the methods' default (minilm).
EMBEDDING_FALLBACK_TEXT = os.getenv("EMBEDDING_FALLBACK_TEXT", "")
if EMBEDDING_FALLBACK_TEXT not in {"", "lsa", "minilm"}:
    raise ImproperlyConfigured(f"Unexpected value EMBEDDING_FALLBACK_TEXT={EMBEDDING_FALLBACK_TEXT}, use 'minilm' or 'lsa'")
# The text share from accepted triplets (README, "No problem without a vector", step 5): in rules and hybrid runs, a collection with at least
# this many accepted triplets chooses its text share on them. Empty or 0: off (the default); 30 is what was measured.
_triplet_share_min = os.getenv("EMBEDDING_TRIPLET_SHARE_MIN", "").strip()
if _triplet_share_min and not re.fullmatch(r"[0-9]+", _triplet_share_min):  # isdigit() takes "²", which int() refuses
    raise ImproperlyConfigured(f"Unexpected value EMBEDDING_TRIPLET_SHARE_MIN={_triplet_share_min}, use a whole number of triplets (0: off)")
EMBEDDING_TRIPLET_SHARE_MIN = int(_triplet_share_min or 0)
# The same attempt posted again within this many seconds (a double click, a client's retry) is stored once.
ATTEMPT_DUPLICATE_WINDOW_SECONDS = envseconds("ATTEMPT_DUPLICATE_WINDOW_SECONDS", "10")
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Celery: with no broker, tasks run eagerly in the caller. The choice lives here, visibly,
# never at runtime by pinging Redis.
CELERY_BROKER_URL = os.getenv("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if not CELERY_BROKER_URL:
    CELERY_BROKER_URL = "memory://localhost/"  # never used while eager; a host keeps kombu quiet
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_TIME_LIMIT = envint("CELERY_TASK_TIME_LIMIT", "1800")
CELERY_TASK_SOFT_TIME_LIMIT = envint("CELERY_TASK_SOFT_TIME_LIMIT", "1700")
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Faults (README, "Production" > "Faults"). Tasks ack late: Redis hands a job whose worker died to
# another worker once the visibility timeout passes. A job still running by then would be handed out
# twice, so the timeout must outlast the hard time limit.
_visibility_timeout = envint("CELERY_BROKER_VISIBILITY_TIMEOUT", "3600")
if _visibility_timeout <= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        f"CELERY_BROKER_VISIBILITY_TIMEOUT={_visibility_timeout} must be longer than "
        f"CELERY_TASK_TIME_LIMIT={CELERY_TASK_TIME_LIMIT}: a job still running then is given to a second worker"
    )
# A frozen or unreachable Redis must fail a job's start in seconds, not hang the request (the default
# socket timeout is forever).
_broker_timeout = envint("CELERY_BROKER_TIMEOUT", "3")
CELERY_BROKER_CONNECTION_TIMEOUT = _broker_timeout
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": _visibility_timeout,
    "socket_connect_timeout": _broker_timeout,
    "socket_timeout": _broker_timeout,
}
# The embedded broker of `make run` (README, "Background jobs without Redis"): kombu's filesystem transport,
# messages as files in one folder that the web process writes and the worker (prob2vec_site/devrun.py)
# reads. For one machine only; production uses Redis.
if CELERY_BROKER_URL.startswith("filesystem:"):
    CELERY_BROKER_DIR = Path(os.getenv("CELERY_BROKER_DIR", str(BASE_DIR / ".broker")))
    for _folder in ("queue", "control"):
        (CELERY_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "queue"),
        "data_folder_out": str(CELERY_BROKER_DIR / "queue"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "polling_interval": 0.5,
    }
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
# A pool child killed mid-task (out of memory) puts its message back rather than dropping it.
CELERY_TASK_REJECT_ON_WORKER_LOST = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an API client without credentials is answered 401 with `WWW-Authenticate: Token`.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["problems.roles.HasCourseRole"],
    # JSON and forms, each bounded by DATA_UPLOAD_MAX_MEMORY_SIZE; no endpoint takes a file.
    "DEFAULT_PARSER_CLASSES": [
        "prob2vec_site.security.BoundedJSONParser",
        "prob2vec_site.security.BoundedFormParser",
        "prob2vec_site.security.FieldsOnlyMultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Prob2Vec Studio API",
    "DESCRIPTION": (
        "The problem bank, concept rules and extraction, ground-truth labels, similarity triplets and practice. "
        "Authenticate with a token (`POST /api/token/` with username and password, then "
        "`Authorization: Token <key>`) or, from the browser, with the session cookie and the CSRF token."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# HTTPS: on by default once DEBUG is off, so the production recipe passes `check --deploy --fail-level
# WARNING` as it stands. Behind a TLS proxy set BEHIND_TLS_PROXY=True; to serve plain HTTP on purpose
# (a load test on 127.0.0.1) set SECURE_SSL_REDIRECT=False and SECURE_HSTS_SECONDS=0.
_production = "False" if DEBUG else "True"
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", _production)
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", _production)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", _production)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "0" if DEBUG else str(365 * 24 * 3600))
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _production)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", _production)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if envbool("BEHIND_TLS_PROXY", "False") else None

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"no_client_error_traceback": {"()": "prob2vec_site.security.NoTracebackForClientErrors"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "celery.app.trace": {"level": "WARNING"},
        # A 403 or 400 is logged in one line (path and reason), without a traceback.
        "django.request": {"filters": ["no_client_error_traceback"]},
        "django.security": {"filters": ["no_client_error_traceback"]},
    },
}
