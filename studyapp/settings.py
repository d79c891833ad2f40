"""Settings for the study platform.

Deployment settings come from the environment (12-factor); study parameters live in the database.

- ``DATABASE_URL``: e.g. ``sqlite:////tmp/x.sqlite3`` or ``postgres://user:pw@host/db``;
  default ``db.sqlite3`` in the repository root (WAL mode, busy timeout), or in the working directory
  when the package is installed rather than run from a checkout.
- ``DJANGO_DEBUG`` (0/1, default 0): participants must never see Django's technical error pages.
- ``DJANGO_SECRET_KEY``; without it a random key is generated once and kept in ``DJANGO_SECRET_KEY_FILE``
  (default ``.django-secret-key`` in the repository root, git-ignored, readable by its owner only).
- ``DJANGO_ALLOWED_HOSTS`` (comma separated; default localhost, 127.0.0.1, [::1]).
- ``STUDYAPP_STATIC_FROM_APPS`` (0/1, default 1): whitenoise serves static files straight from the apps,
  so ``make run`` needs no ``collectstatic``; set 0 after ``collectstatic`` to serve the compressed copies.
- ``DJANGO_CONN_MAX_AGE`` (60): seconds a worker keeps its PostgreSQL connection (health-checked before reuse);
  SQLite always connects per request.
- ``DJANGO_PG_PREPARED`` (0/1, default 1): PostgreSQL binds query values on the server, and a statement a
  connection runs a fifth time is prepared there (parsed and planned once; the same values and results).
  In the load benchmark's burst the database's CPU per request fell from 1.2-1.3 to 0.8-0.9 ms. Set 0
  behind a connection pooler that cannot keep prepared statements (PgBouncer in transaction mode before 1.21).
- ``STUDYAPP_HEARTBEAT_SECONDS`` (60): how often an open annotator page renews its leases;
  ``STUDYAPP_REDIRECT_SECONDS`` (3): how long the completion page shows the code before redirecting.
- ``STUDYAPP_JOB_STALE_SECONDS`` (30, at least 10): a review job (the review page's Apply, run by
  ``manage.py run_jobs``) or a decision being sent whose worker gave no sign of life this long (it beats every
  5 s) is taken over by another worker; one whose process on the same host has ended, at once.
- ``STUDYAPP_DISPLAY_CACHE_SECONDS`` (60; 0 = off): how long a server process keeps what it read and drew
  for item pages (result lists, queries, needs); an edit in the admin shows on item pages within that time.
- ``STUDYAPP_ROOM_CHECK_SECONDS`` (2; 0 = every arrival): how long a server process reuses the entry page's
  answer that a study has room for newcomers, while it showed room for many more (services.participation.room_check).
- ``STUDYAPP_BASE_URL`` (empty): the site's public address, e.g. ``https://study.example.org``; absolute
  links (``create_study``'s annotator link, the staff set-up page) use it, else the request's host
  (``create_study`` then prints the site's paths and says how to get absolute links; it warns about a
  local or plain-http address, as the set-up page does).
- ``STUDYAPP_MTURK_FRAME_ANCESTORS`` (empty; refused in production): extra origins that may frame MTurk
  workers' pages and stand in as ``turkSubmitTo`` in a local test (docs/annotator.md#security).
- ``STUDYAPP_MTURK_SANDBOX`` (0/1, default 0): the review's MTurk calls go to the requester sandbox, read
  by services/platforms/mturk_api.py with the usual AWS credential variables (never a Django setting,
  never stored; docs/studyapp.md "MTurk's Requester API").

A real deployment sets ``STUDYAPP_PRODUCTION=1`` (served over HTTPS by a reverse proxy); then
``manage.py check --deploy`` is clean and:

- ``DJANGO_ALLOWED_HOSTS`` must be set, without ``*`` (``manage.py check`` error studyapp.E002), and
  ``DJANGO_DEBUG`` must be off (refused otherwise);
- HTTP is redirected to HTTPS (``DJANGO_SSL_REDIRECT``, default 1; 0 when the proxy does it), cookies
  are secure, HSTS is sent (``DJANGO_HSTS_SECONDS`` 31536000, ``DJANGO_HSTS_SUBDOMAINS`` 1,
  ``DJANGO_HSTS_PRELOAD`` 1);
- the proxy says the request came over HTTPS with ``X-Forwarded-Proto`` (``DJANGO_PROXY_SSL_HEADER``;
  empty when gunicorn terminates TLS itself) and appends the client address to ``X-Forwarded-For``
  (``STUDYAPP_PROXY_HOPS``, the number of proxies that do, default 1 in production and 0 otherwise);
- ``manage.py load_demo`` creates no staff login with a known password (use ``createsuperuser``).

Always: Django's password validators, a strict Content-Security-Policy (``studyapp.middleware``),
staff sign-in throttled after ``STUDYAPP_LOGIN_FAILURES`` (5) failures per user name (NFKC, casefolded) within
``STUDYAPP_LOGIN_WINDOW_SECONDS`` (900), four times that per client address; at most
``STUDYAPP_ARRIVALS_PER_CLIENT`` (20; 0 = no limit) newcomers per client and study within
``STUDYAPP_ARRIVALS_WINDOW_SECONDS`` (600), see docs/annotator.md#security. The counts live in the
cache that every worker and machine shares (``STUDYAPP_CACHE_URL``: empty = the database, or
``redis://HOST:PORT/DB``; ``locmem`` = each process's own, refused in production with more than one
worker), counted atomically with their windows kept (``studyapp.cache_backends``).
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import tempfile
import warnings
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

PACKAGE_DIR = Path(__file__).resolve().parent
# The repository root in a checkout (manage.py beside the package); the working directory when the
# package is installed (pip install "diversity-prefs[web]"): where db.sqlite3 and the secret key go by default.
BASE_DIR = PACKAGE_DIR.parent if (PACKAGE_DIR.parent / "manage.py").is_file() else Path.cwd()


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (0/1), got {raw!r}")


def env_int(name: str, default: int, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def stored_secret_key(path: Path) -> str:
    """The key kept in ``path``, created with a random value on first use (safe when processes race)."""
    try:
        key = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    key = secrets.token_urlsafe(50)
    draft = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(key + "\n")
        os.link(draft, path)  # atomic: the first process to get here wins
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    except OSError as exc:  # e.g. a read-only checkout: run anyway, sessions end with the process
        print(f"warning: cannot keep a secret key in {path} ({exc}); using a temporary one", file=sys.stderr)
    finally:
        draft.unlink(missing_ok=True)
    return key


PRODUCTION = env_bool("STUDYAPP_PRODUCTION", False)
DEBUG = env_bool("DJANGO_DEBUG", False)
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG must be off when STUDYAPP_PRODUCTION=1 (participants would see stack traces)")
if PRODUCTION and not os.environ.get("DJANGO_ALLOWED_HOSTS", "").strip():
    raise ImproperlyConfigured("STUDYAPP_PRODUCTION=1 needs DJANGO_ALLOWED_HOSTS, the public host name(s) of the site")
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "").strip() or stored_secret_key(
    Path(os.environ.get("DJANGO_SECRET_KEY_FILE") or BASE_DIR / ".django-secret-key")
)
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "studyapp.apps.StudyappConfig",
]

MIDDLEWARE = [
    "studyapp.middleware.RequestSizeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "studyapp.middleware.DatabasePauseMiddleware",
    "studyapp.middleware.PlatformFrameMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "studyapp.middleware.StaffSessionMiddleware",  # Django's AuthenticationMiddleware and the staff-session check
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "studyapp.middleware.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "studyapp.urls"
WSGI_APPLICATION = "studyapp.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [PACKAGE_DIR / "templates"],  # first, so its admin/index.html and 404/500 pages win
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DJANGO_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# A database that does not answer must fail a request long before gunicorn kills the worker (its timeout, 30 s),
# and every wait is bounded (docs/studyapp.md "When the database is slow"). gunicorn.conf.py sets the web
# workers' values (connect 3 s, lock 2 s, statement 3 s); the defaults here are those of commands (and of
# `make run`). Connecting gives up after DJANGO_DB_CONNECT_TIMEOUT seconds; PostgreSQL cancels a statement
# that waits for a lock longer than STUDYAPP_DB_LOCK_TIMEOUT or runs longer than STUDYAPP_DB_STATEMENT_TIMEOUT
# (0 = no limit); the client gives up on a wait one second after the statement timeout (a frozen server
# cancels nothing: studyapp.pg_deadline); TCP keepalives notice a machine or network that is gone within
# DJANGO_DB_KEEPALIVE_SECONDS. Each failure is an OperationalError: the error page answers 503 with Retry-After.
DB_CONNECT_TIMEOUT = env_int("DJANGO_DB_CONNECT_TIMEOUT", 5, minimum=2)  # libpq counts whole seconds, at least 2
DB_LOCK_TIMEOUT = env_int("STUDYAPP_DB_LOCK_TIMEOUT", 30)
DB_STATEMENT_TIMEOUT = env_int("STUDYAPP_DB_STATEMENT_TIMEOUT", 600)
DB_KEEPALIVE_SECONDS = env_int("DJANGO_DB_KEEPALIVE_SECONDS", 20, minimum=4)
STUDYAPP_DB_WAIT_SECONDS = DB_STATEMENT_TIMEOUT + 1 if DB_STATEMENT_TIMEOUT else 0
# After the database did not answer at all, a process answers 503 at once for this long (studyapp.pg_deadline).
STUDYAPP_DB_PAUSE_SECONDS = env_int("STUDYAPP_DB_PAUSE_SECONDS", 5)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _limits = {"lock_timeout": DB_LOCK_TIMEOUT, "statement_timeout": DB_STATEMENT_TIMEOUT}
    if any(_limits.values()):
        _options["options"] = " ".join(f"-c {name}={seconds * 1000}" for name, seconds in _limits.items() if seconds)
    _options.update(
        connect_timeout=DB_CONNECT_TIMEOUT,
        keepalives=1,
        keepalives_idle=DB_KEEPALIVE_SECONDS // 2,
        keepalives_interval=max(1, DB_KEEPALIVE_SECONDS // 8),
        keepalives_count=4,
        tcp_user_timeout=DB_KEEPALIVE_SECONDS * 1000,  # unacknowledged data: the peer is gone
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool("DJANGO_PG_PREPARED", True):
    DATABASES["default"].setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside one writer; IMMEDIATE transactions take the write lock up front,
    # so concurrent writers queue on the busy timeout instead of failing with "database is locked".
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": min(30, DB_STATEMENT_TIMEOUT) if DB_STATEMENT_TIMEOUT else 30,
        }
    )
    # The test database is a file, not Django's in-memory default: the concurrency tests run many
    # threads, and a shared-cache memory database takes table locks that ignore the busy timeout.
    # One file per process, so test runs started side by side do not clobber each other.
    DATABASES["default"].setdefault("TEST", {}).setdefault(
        "NAME", str(Path(tempfile.gettempdir()) / f"studyapp-test-{os.getpid()}.sqlite3")
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# HTTPS behind a reverse proxy (see the module docstring); all off for `make run` on plain HTTP.
SECURE_SSL_REDIRECT = PRODUCTION and env_bool("DJANGO_SSL_REDIRECT", True)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = PRODUCTION
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31536000) if PRODUCTION else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = PRODUCTION and env_bool("DJANGO_HSTS_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = PRODUCTION and env_bool("DJANGO_HSTS_PRELOAD", True)
_proxy_header = os.environ.get("DJANGO_PROXY_SSL_HEADER", "X-Forwarded-Proto" if PRODUCTION else "").strip()
SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https") if _proxy_header else None
STUDYAPP_PROXY_HOPS = env_int("STUDYAPP_PROXY_HOPS", 1 if PRODUCTION else 0)
STUDYAPP_BASE_URL = os.environ.get("STUDYAPP_BASE_URL", "").strip().rstrip("/")


def env_origins(name: str) -> tuple[str, ...]:
    """Space-separated origins (``scheme://host[:port]``, no path) from the environment."""
    origins = tuple(os.environ.get(name, "").split())
    bad = [o for o in origins if not re.fullmatch(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?", o)]
    if bad:
        raise ImproperlyConfigured(f"{name} must list origins like https://host:port, got {' '.join(bad)!r}")
    return origins


# Extra origins that may frame MTurk workers' pages and stand in as turkSubmitTo (a local test of the
# framed flow); MTurk's own worker sites are always allowed (services.platforms.mturk). Never in production.
STUDYAPP_MTURK_FRAME_ANCESTORS = env_origins("STUDYAPP_MTURK_FRAME_ANCESTORS")
if PRODUCTION and STUDYAPP_MTURK_FRAME_ANCESTORS:
    raise ImproperlyConfigured("STUDYAPP_MTURK_FRAME_ANCESTORS is for local tests; leave it empty when STUDYAPP_PRODUCTION=1")
# load_demo may create the "staff" superuser with a printed or given password: only outside production.
STUDYAPP_DEMO_STAFF = not PRODUCTION


def cache_settings(url: str) -> dict:
    """The cache of ``STUDYAPP_CACHE_URL``: empty or ``db`` the database (table ``studyapp_cache``, made by
    ``migrate``), ``redis://host:port/db`` (or ``rediss://``, ``unix://``) a Redis server, ``locmem`` each
    process's own memory (one process only: development and tests)."""
    if url in ("", "db"):
        return {"BACKEND": "studyapp.cache_backends.DatabaseCache", "LOCATION": "studyapp_cache", "OPTIONS": {"MAX_ENTRIES": 100_000}}
    if url.split("://", 1)[0] in ("redis", "rediss", "unix"):
        # Short socket timeouts: a Redis that stops answering costs a request 2 s, never a worker.
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2}}  # fmt: skip
    if url in ("locmem", "locmem://"):
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    raise ImproperlyConfigured(f"STUDYAPP_CACHE_URL must be empty or db, redis://HOST:PORT/DB or locmem, got {url!r}")


if os.environ.get("STUDYAPP_CACHE_DIR"):
    raise ImproperlyConfigured(
        "STUDYAPP_CACHE_DIR is no longer read: the file cache's counters were not atomic and lost their windows. "
        "Leave STUDYAPP_CACHE_URL empty (the database) or set it to redis://HOST:PORT/DB"
    )
# Throttling counts (staff sign-in failures, admissions) and cached reports live in the cache, shared by
# every worker and machine unless it is locmem (a system check refuses that in production with several workers).
CACHES = {"default": cache_settings(os.environ.get("STUDYAPP_CACHE_URL", "").strip())}
STUDYAPP_WORKERS = env_int("WEB_CONCURRENCY", (os.cpu_count() or 1) + 1, minimum=1)  # gunicorn.conf.py reads the same
# Staff sessions end on the server when staff sign out or change their password, and after this long
# (default 8 hours); participants' sessions keep Django's SESSION_COOKIE_AGE (two weeks).
STUDYAPP_STAFF_SESSION_SECONDS = env_int("STUDYAPP_STAFF_SESSION_SECONDS", 8 * 3600, minimum=60)
STUDYAPP_LOGIN_FAILURES = env_int("STUDYAPP_LOGIN_FAILURES", 5, minimum=1)
STUDYAPP_LOGIN_WINDOW_SECONDS = env_int("STUDYAPP_LOGIN_WINDOW_SECONDS", 900, minimum=1)
# Newcomers per client (IPv4 address or IPv6 /64) and study within the window; 0 turns the limit off.
STUDYAPP_ARRIVALS_PER_CLIENT = env_int("STUDYAPP_ARRIVALS_PER_CLIENT", 20)
STUDYAPP_ARRIVALS_WINDOW_SECONDS = env_int("STUDYAPP_ARRIVALS_WINDOW_SECONDS", 600, minimum=1)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sessions live in a signed cookie: an anonymous visit costs no database row and a request no session
# read. The session holds only the annotator's token per study (a secret of that browser already) and,
# before consent, the platform parameters; the signature (SECRET_KEY) makes them tamper-proof.
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"

# Participant pages are shown in their study's language (Study.language, activated per request by the
# annotator views); staff pages stay in English. The catalogues live in locale/ (docs/annotator.md#languages).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文"), ("ja", "日本語")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = env_bool("STUDYAPP_STATIC_FROM_APPS", True)
if WHITENOISE_USE_FINDERS:  # then the collected folder is optional: no warning when it is missing
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Annotator pages: how often an open page renews the annotator's leases, and how long the completion
# page shows the code before it redirects to the platform.
STUDYAPP_HEARTBEAT_SECONDS = env_int("STUDYAPP_HEARTBEAT_SECONDS", 60, minimum=1)
STUDYAPP_REDIRECT_SECONDS = env_int("STUDYAPP_REDIRECT_SECONDS", 3)
# The review page's Apply runs as a job (manage.py run_jobs); a job or a decision whose worker was silent this long
# (it beats every 5 s: services.review.leases) is taken over.
STUDYAPP_JOB_STALE_SECONDS = env_int("STUDYAPP_JOB_STALE_SECONDS", 30, minimum=10)
STUDYAPP_DISPLAY_CACHE_SECONDS = env_int("STUDYAPP_DISPLAY_CACHE_SECONDS", 60)
STUDYAPP_ROOM_CHECK_SECONDS = env_int("STUDYAPP_ROOM_CHECK_SECONDS", 2)
# purge_platform_ids removes raw platform ids this many days after a participant was last seen, unless the
# study says otherwise (its platform_id_retention_days); the pseudonymous answers stay.
STUDYAPP_PLATFORM_ID_RETENTION_DAYS = env_int("STUDYAPP_PLATFORM_ID_RETENTION_DAYS", 90, minimum=1)
CSRF_FAILURE_VIEW = "studyapp.views.site.csrf_failure"
STUDYAPP_RETRY_AFTER_SECONDS = env_int("STUDYAPP_RETRY_AFTER_SECONDS", 30, minimum=1)  # the 503's Retry-After
# Request bodies: answers and forms are a few kilobytes; the admin's study form a JSON configuration.
STUDYAPP_MAX_BODY_BYTES = env_int("STUDYAPP_MAX_BODY_BYTES", 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = FILE_UPLOAD_MAX_MEMORY_SIZE = STUDYAPP_MAX_BODY_BYTES

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "INFO")},
}
