"""Settings for every environment, driven by environment variables (see README, "Configuration").

With no variables set Evergreen runs embedded: SQLite, in-process tasks, a local-memory cache.
DATABASE_URL, REDIS_URL and EVERGREEN_DEBUG=0 turn it into the production deployment.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

from evergreen_site.settings.env import LOG_LEVELS, Env
from evergreen_site.settings.evergreen import EvergreenSettings

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = Env()

DEBUG = env.flag("EVERGREEN_DEBUG", True)

SECRET_KEY = env.text("EVERGREEN_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("EVERGREEN_SECRET_KEY must be set when EVERGREEN_DEBUG=0.")
    SECRET_KEY = "insecure-development-key-only-for-make-run-and-tests"  # noqa: S105

ALLOWED_HOSTS = env.items("EVERGREEN_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env.items("EVERGREEN_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "knowledge.admin_apps.EvergreenAdminConfig",  # django.contrib.admin with Evergreen's site (its dashboard)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "knowledge",
    "api",
    "mcp_bridge",
]

MIDDLEWARE = [
    "gateway.telemetry.TelemetryMiddleware",
    "gateway.security.SecurityEventMiddleware",
    "gateway.outages.DependencyFailureMiddleware",
    "evergreen_site.csp.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "evergreen_site.urls"
WSGI_APPLICATION = "evergreen_site.wsgi.application"

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

DATABASE_URL = env.url(
    "DATABASE_URL",
    f"sqlite:///{BASE_DIR / 'var' / 'evergreen.sqlite3'}",
    schemes=("postgres", "postgresql", "pgsql", "sqlite"),
)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL, conn_max_age=env.whole("EVERGREEN_DB_CONN_MAX_AGE", 60), conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A PostgreSQL that accepts connections and never answers (a hung host) fails a new connection
    # after this many seconds instead of never; readers then serve from memory (README).
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.whole("EVERGREEN_DB_CONNECT_TIMEOUT", 3, minimum=1)
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Embedded mode: wait for the single writer instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.url("REDIS_URL", "", schemes=("redis", "rediss", "unix"))
# The reply cache (whole /api/context answers, pack records for /api/verify) may grow to anything the
# agents ask, so it belongs on a Redis of its own with `maxmemory` and an eviction policy (see
# docker-compose.yml), never on the one holding the broker's queues and the rate limits.
CACHE_REDIS_URL = env.url("EVERGREEN_CACHE_REDIS_URL", REDIS_URL, schemes=("redis", "rediss", "unix"))


def _redis_cache(location: str) -> dict[str, object]:
    """Django's Redis cache with short timeouts and a circuit breaker (knowledge.resilience)."""
    return {
        "BACKEND": "knowledge.resilience.cache.GuardedRedisCache",
        "LOCATION": location,
        "KEY_PREFIX": "evergreen",
        "TIMEOUT": 900,
    }


if REDIS_URL:
    CACHES = {"default": _redis_cache(REDIS_URL), "replies": _redis_cache(CACHE_REDIS_URL)}
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "TIMEOUT": 900},
        "replies": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "replies"},
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# ISO 8601 dates in the admin (evergreen_site/formats/en/formats.py).
FORMAT_MODULE_PATH = ["evergreen_site.formats"]

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "var" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

LOGIN_URL = "admin:login"

# --- Evergreen (typed; see evergreen_site/settings/evergreen.py) --------------------------------
EVERGREEN = EvergreenSettings.from_env(env)

# --- Celery: Redis in production; without a broker, tasks run in-process on commit. -------------
CELERY_BROKER_URL = env.text("CELERY_BROKER_URL", REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if CELERY_TASK_ALWAYS_EAGER:
    CELERY_BROKER_URL = "memory://"
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Tasks sent by tasks (a build's webhook notices) go to this queue; tests give each run its own.
CELERY_TASK_DEFAULT_QUEUE = env.text("EVERGREEN_CELERY_QUEUE", "celery")
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
# Above one second: a worker's BRPOP waits that long for a message on the same socket.
BROKER_TIMEOUT_SECONDS = env.number("EVERGREEN_BROKER_TIMEOUT_SECONDS", 2.0, minimum=1.5)
# A build whose worker died unacknowledged is redelivered after `visibility_timeout` seconds (keep it
# longer than the longest build); workers look for such messages every interval x throttle seconds.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.whole("EVERGREEN_BROKER_VISIBILITY_TIMEOUT", 3600, minimum=1),
    "unacked_restore_interval": env.whole("EVERGREEN_BROKER_RESTORE_INTERVAL", 10, minimum=1),
    "unacked_restore_throttle": env.whole("EVERGREEN_BROKER_RESTORE_THROTTLE", 10, minimum=1),
    # A hung broker fails a hand-over within these timeouts instead of holding the request that
    # published (the build request stays in the outbox for the reconciler).
    "socket_connect_timeout": BROKER_TIMEOUT_SECONDS,
    "socket_timeout": BROKER_TIMEOUT_SECONDS,
}
# One try and one retry: a publish whose broker is down answers within about two timeouts.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
CELERY_BEAT_SCHEDULE = {
    "queue-pending-release-builds": {
        "task": "knowledge.tasks.release_builds_reconcile_task",
        "schedule": EVERGREEN.build_reconcile_seconds,
    },
    "publish-scheduled-versions": {
        "task": "knowledge.tasks.versions_publish_due_task",
        "schedule": 60.0,
    },
    "mark-stale-and-expired-entries": {
        "task": "knowledge.tasks.freshness_sweep_task",
        "schedule": 3600.0,
    },
    "prune-old-release-files": {
        "task": "knowledge.tasks.releases_prune_task",
        "schedule": 24 * 3600.0,
    },
    "prune-expired-a2a-tasks": {
        "task": "knowledge.tasks.a2a_tasks_prune_task",
        "schedule": 3600.0,
    },
    "retry-overdue-webhooks": {
        "task": "knowledge.tasks.webhooks_sweep_task",
        "schedule": 60.0,
    },
    "write-the-request-log": {
        "task": "knowledge.tasks.request_log_drain_task",
        "schedule": env.number("EVERGREEN_REQUEST_LOG_DRAIN_SECONDS", 5.0, minimum=1),
    },
    "prune-the-request-log": {
        "task": "knowledge.tasks.request_logs_prune_task",
        "schedule": 24 * 3600.0,
    },
    "mail-the-weekly-gap-digest": {
        "task": "knowledge.tasks.gaps_digest_task",
        "schedule": crontab(minute=0, hour=7, day_of_week=1),
    },
}

# --- E-mail (the weekly knowledge-gap digest): SMTP when EVERGREEN_SMTP_HOST is set, else the console.
EMAIL_HOST = env.text("EVERGREEN_SMTP_HOST")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env.whole("EVERGREEN_SMTP_PORT", 587, minimum=1)
EMAIL_HOST_USER = env.text("EVERGREEN_SMTP_USER")
EMAIL_HOST_PASSWORD = env.text("EVERGREEN_SMTP_PASSWORD")
EMAIL_USE_TLS = env.flag("EVERGREEN_SMTP_TLS", True)
DEFAULT_FROM_EMAIL = env.text("EVERGREEN_FROM_EMAIL", "evergreen@localhost")

# --- REST framework ---------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Evergreen API",
    "DESCRIPTION": "Token-budgeted, citable knowledge for AI agents.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Two choice sets are named `status` (feedback, the publish gate): name each enum after its owner.
    "ENUM_NAME_OVERRIDES": {
        "FeedbackStatusEnum": "knowledge.models.content.Feedback.Status",
        "ReleaseGateStatusEnum": "knowledge.models.gate.GateStatus",
    },
}

# EVERGREEN_LOG_FORMAT=json: one JSON object per line with the request's ID (knowledge.telemetry.logs).
LOG_FORMAT = env.choice("EVERGREEN_LOG_FORMAT", "PLAIN", ("PLAIN", "JSON")).lower()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "knowledge.telemetry.logs.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {"()": "knowledge.telemetry.logs.JsonFormatter"},
        "message": {"format": "%(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request_id"]},
        "security": {"class": "logging.StreamHandler", "formatter": "message"},
    },
    "root": {"handlers": ["console"], "level": env.choice("EVERGREEN_LOG_LEVEL", "INFO", LOG_LEVELS)},
    "loggers": {
        # The in-process broker of embedded mode has no host name; kombu warns about it at every task.
        "kombu.connection": {"level": "ERROR"},
        # One JSON object per line (knowledge.security_events), for a log shipper to parse as is.
        "evergreen.security": {"handlers": ["security"], "level": "WARNING", "propagate": False},
        # EVERGREEN_ACCESS_LOG=1: one record per answer (gateway.telemetry), JSON with EVERGREEN_LOG_FORMAT=json.
        "evergreen.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# --- Production hardening (manage.py check --deploy passes with docker-compose.yml's environment).
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.flag("EVERGREEN_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
    SECURE_HSTS_SECONDS = env.whole("EVERGREEN_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.flag("EVERGREEN_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env.flag("EVERGREEN_HSTS_PRELOAD", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
