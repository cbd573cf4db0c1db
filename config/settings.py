"""felab's one settings module, driven by the environment.

DJANGO_ENV=production turns on the production checks: the site refuses to start
without SECRET_KEY and ALLOWED_HOSTS, and cookies, HSTS and HTTPS are strict.
Anything else is development: SQLite by default, a throwaway secret key.
"""

import hashlib
import os
import tempfile
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


PRODUCTION = os.environ.get("DJANGO_ENV", "development").strip().lower() == "production"
DEBUG = env_flag("DJANGO_DEBUG")

if PRODUCTION:
    SECRET_KEY = os.environ.get("SECRET_KEY", "")
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
    missing = [
        name for name, value in [("SECRET_KEY", SECRET_KEY), ("ALLOWED_HOSTS", ALLOWED_HOSTS)] if not value
    ]
    if missing:
        raise ImproperlyConfigured(
            f"DJANGO_ENV=production needs {' and '.join(missing)} in the environment; refusing to start."
        )
    if DEBUG:
        raise ImproperlyConfigured("DJANGO_DEBUG must be off when DJANGO_ENV=production.")
else:
    # A development key: it signs nothing that outlives this machine.
    SECRET_KEY = os.environ.get("SECRET_KEY") or "felab-development-only-not-a-secret"
    ALLOWED_HOSTS = env_list("ALLOWED_HOSTS") or ["localhost", "127.0.0.1", "[::1]", "testserver"]

CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "serving",
    "pagecache",
    "accounts",
    "lessons",
    "quiz",
    "felab_sim",
    # After felab_sim, whose db_worker command (the task worker, watching for dead workers'
    # runs) replaces theirs: of two apps' commands of one name, the app listed first wins.
    "django_tasks",
    "django_tasks_db",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "serving.middleware.security_headers",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "serving.admin_filters.AdminFilterGuard",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"

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
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several gunicorn workers write to one file: WAL lets readers go on while one writes,
    # IMMEDIATE takes the write lock at BEGIN (no lock upgrade to deadlock on), and the busy
    # timeout makes a second writer wait for the lock instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000;",
        }
    )
    # The test database is a file as well, not SQLite's shared in-memory database: its table
    # locks fail at once ("database table is locked") where a file's wait, and tests run a task
    # worker writing a run's progress while a browser reads the page. One file per process.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"felab-test-{os.getpid()}.sqlite3")
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where collectstatic writes and WhiteNoise (or nginx, docs/deploy.md) serves from.
STATIC_ROOT = Path(os.environ.get("FELAB_STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
# Hashed file names never change content, so browsers may keep them for a year.
WHITENOISE_MAX_AGE = 0 if DEBUG else 60 * 60 * 24 * 365

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The first loads the request's user with their Instructors flag in one query. A session
# records the backend that logged it in: Django's, listed second, keeps the sessions it
# started logged in (the first refuses every log in it cannot make, so it never runs twice).
AUTHENTICATION_BACKENDS = [
    "accounts.backends.InstructorFlagBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

if PRODUCTION:
    # DJANGO_INSECURE_HTTP=1 is for serving production settings on a machine without TLS
    # (benchmarks, a laptop): no HTTPS redirect, no HSTS, cookies sent over plain HTTP.
    HTTPS = not env_flag("DJANGO_INSECURE_HTTP")
    SECURE_SSL_REDIRECT = HTTPS
    SESSION_COOKIE_SECURE = HTTPS
    CSRF_COOKIE_SECURE = HTTPS
    SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365 if HTTPS else 0
    SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
    SECURE_HSTS_PRELOAD = HTTPS

# This instance's scratch folder, for the simulation permits and the file cache: one per
# database, so two felabs on one machine (checkouts, test runs) never share permits or a cache,
# while one site's workers and hosts on this machine do.
_DATABASE_IDENTITY = "|".join(
    str(DATABASES["default"].get(key, "")) for key in ("ENGINE", "HOST", "PORT", "NAME")
)
INSTANCE_TMP = (
    Path(tempfile.gettempdir())
    / f"felab-{os.getuid()}-{hashlib.sha256(_DATABASE_IDENTITY.encode()).hexdigest()[:12]}"
)

# Password reset emails. Development (`make run`) prints them on the console; production sends
# them through the SMTP server the environment names (docs/deploy.md). Without EMAIL_HOST,
# production still starts: the reset form then fails to send (its page the same as when it
# sends), the log says why at ERROR and /readyz reports mail degraded until a send succeeds
# (accounts/mail.py: Django's SMTP backend, recording each send's outcome).
if PRODUCTION:
    EMAIL_BACKEND = "accounts.mail.SMTPBackend"
    EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
    EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_SSL = env_flag("EMAIL_USE_SSL")
    # STARTTLS on the submission port unless the connection is TLS from the start (port 465).
    EMAIL_USE_TLS = env_flag("EMAIL_USE_TLS", default=not EMAIL_USE_SSL)
    EMAIL_TIMEOUT = 10
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "felab <noreply@localhost>")

# Slow work (real sweeps) runs in task workers, `manage.py db_worker`, on any host: the queue
# is a table in the site's database, so it needs no server of its own.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# Heavy simulations (more than SIM_LIGHT_WORK units of work, felab_sim.engine.sweep.limits.WebLimits,
# about 20 ms; the default sweep is 117,000) take one of SIM_PERMITS permits shared by the host's workers, waiting at most
# SIM_PERMIT_WAIT_S for one before a 503: half the cores, so the other pages keep the rest. The
# wait is short because a sync worker waiting for a permit is a worker no other page can have:
# with 2 s, five flooding requests held all five workers and the home page's p50 went from
# 3.8 to 80.8 ms (bench/bench_flood.py); with 0.05 s it stayed at 3.8.
SIM_PERMITS = int(os.environ.get("FELAB_SIM_PERMITS", "0")) or max(1, (os.cpu_count() or 2) // 2)
SIM_PERMIT_WAIT_S = float(os.environ.get("FELAB_SIM_PERMIT_WAIT_S", "0.05"))
SIM_PERMITS_DIR = Path(os.environ.get("FELAB_SIM_PERMITS_DIR", INSTANCE_TMP / "sim-permits"))
SIM_LIGHT_WORK = 450_000

# The practice server that `make run` starts beside the site; sweeps from /sim/ measure it.
PRACTICE_SERVER_URL = os.environ.get("FELAB_PRACTICE_URL", "http://127.0.0.1:8001/v1")

# Rate limits per client address (an IPv6 /64 counts as one): (requests, window in seconds).
# 0 requests turns one off. "write" counts every POST that records study (Show answer, ratings,
# practice answers, hints) per address, "learner-write" the same per learner: a classroom behind
# one address shares the first, so it is the larger.
RATE_LIMITS = {
    "login": (int(os.environ.get("FELAB_LOGIN_LIMIT", "10")), 60),
    "sweep": (int(os.environ.get("FELAB_SWEEP_LIMIT", "120")), 60),
    "write": (int(os.environ.get("FELAB_WRITE_LIMIT", "1200")), 60),
    "learner-write": (int(os.environ.get("FELAB_LEARNER_WRITE_LIMIT", "120")), 60),
}
# The proxies in front of the site (addresses or networks, e.g. nginx on 127.0.0.1). Only a
# request from one of them may name its client in X-Forwarded-For or its scheme in
# X-Forwarded-Proto; with none configured both headers are ignored, since a client could
# send them itself.
TRUSTED_PROXIES = env_list("FELAB_TRUSTED_PROXIES")
if TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# REDIS_URL: one cache for every host, where rate limits count, the content version is kept and
# sessions are read from memory (cached_db keeps them in the database too, so a Redis restart logs
# no one out). Redis is only ever a cache: while it is down pages, answers and log-ins carry on from
# the database, where rate limits count too (serving/cache_outage.py, serving/ratelimit.py).
# Without it, rate limits and the content version live in the database, sessions are read from it
# on every request (a cache of one process or host would miss a log out on another) unless
# FELAB_ONE_HOST says this is the only host, and the rest is cached per host (production: a file
# cache its workers share) or per process (development).
REDIS_URL = os.environ.get("REDIS_URL", "")
CACHE_PREFIX = os.environ.get("FELAB_CACHE_PREFIX", "felab")
RATE_LIMIT_KEY_PREFIX = f"{CACHE_PREFIX}:ratelimit"
CACHE_DIR = os.environ.get("FELAB_CACHE_DIR", str(INSTANCE_TMP / "cache"))
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "serving.cache_outage.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": CACHE_PREFIX,
            # A Redis that stops answering costs a request a quarter of a second, not a hang.
            "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
        },
    }
    SESSION_CACHE_ALIAS = "default"
else:
    CACHES = {
        "default": (
            {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": CACHE_DIR}
            if PRODUCTION
            else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
        ),
        # FELAB_ONE_HOST: the only app host, whose workers share this folder, so a log out
        # (which deletes the file) reaches all of them; several hosts read the database, where
        # a log out on one reaches every other.
        "sessions": (
            {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": str(Path(CACHE_DIR) / "sessions"),
                "OPTIONS": {"MAX_ENTRIES": 100_000},
            }
            if PRODUCTION and env_flag("FELAB_ONE_HOST")
            else {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
        ),
    }
    SESSION_CACHE_ALIAS = "sessions"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
}
