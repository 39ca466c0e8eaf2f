"""Evergreen's own settings as one typed, frozen record: ``settings.EVERGREEN.rate_limit`` and friends.

Read from the environment once, when the settings load; code reads the typed fields and never parses
or defaults them again. Tests override with ``settings.EVERGREEN = replace(settings.EVERGREEN, …)``.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from evergreen_site.settings.env import Env, IPNetwork, Rate

READ_RATE = Rate(120, 60)
FEEDBACK_RATE = Rate(20, 3600)
MANAGE_RATE = Rate(600, 60)
# Per host, shared by the worker processes (knowledge.selectors.release_files).
RELEASE_FILES = Path(tempfile.gettempdir()) / f"evergreen-release-files-{os.getuid()}"
# Per host, shared by the build worker's processes (knowledge.services.build_cache).
BUILD_CACHE = Path(tempfile.gettempdir()) / f"evergreen-build-cache-{os.getuid()}"
DATASETS_BESIDE_CLONE = Path(__file__).resolve().parents[3] / "shared" / "datasets"
BENCH_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/evergreen_bench"
BENCH_REDIS_URL = "redis://127.0.0.1:6379/12"


@dataclass(frozen=True, slots=True)
class EvergreenSettings:
    # The namespace the bare host serves when no host name matches.
    default_namespace: str = "evergreen"
    # Requests per client per namespace; Rate(0, …) turns limiting off (benchmarks, evaluations).
    rate_limit: Rate = READ_RATE
    # The reverse proxies whose X-Forwarded-For is believed (addresses or networks); none by default.
    trusted_proxies: tuple[IPNetwork, ...] = ()
    # Origins allowed to call /mcp from a browser; requests without Origin are always allowed.
    mcp_allowed_origins: tuple[str, ...] = ()
    # Largest JSON-RPC body /mcp and /a2a accept (413 beyond it).
    mcp_max_body_bytes: int = 64 * 1024
    # submit_feedback per caller per namespace, far below the read limit.
    feedback_rate_limit: Rate = FEEDBACK_RATE
    # Management API requests per personal token (or signed-in person), all namespaces together.
    manage_rate_limit: Rate = MANAGE_RATE
    # How long A2A tasks can be fetched with tasks/get (stated in the agent card).
    a2a_task_retention_seconds: int = 24 * 3600
    # Bytes of live A2A tasks one client may keep per namespace, and all clients together per namespace.
    a2a_task_quota_client_bytes: int = 8 * 1024 * 1024
    a2a_task_quota_namespace_bytes: int = 256 * 1024 * 1024
    # Key of the security log's client/key hashes (HMAC-SHA256); empty means one derived from SECRET_KEY.
    security_log_key: str = ""
    # Identical security events (kind, reason, client, namespace) within this many seconds are counted, not written.
    security_log_repeat_seconds: float = 60.0
    # Seconds a queued build waits before it starts, so publishes a moment apart share it. Short: a
    # burst longer than this still coalesces, into the queued build until it starts, then into one next
    # build while that one runs (knowledge.services.build_queue), so the wait only has to catch a
    # burst's first moments, and a lone publish is not delayed a second for company that never comes.
    build_coalesce_seconds: float = 0.1
    # The build outbox: how often beat (or the embedded mode's thread) hands over pending builds, and
    # how long a handed-over build may go without finishing before it is handed over again (keep it
    # above the longest build: a duplicate is harmless, but costs a build).
    build_reconcile_seconds: float = 15.0
    build_requeue_seconds: float = 60.0
    # Fault injection for the crash-recovery test: seconds the build sleeps before committing.
    build_pause_seconds: float = 0.0
    # The demo users' password; empty means load_demo generates one and prints it once.
    demo_password: str = ""
    # Where the evaluation collections live (cranfield/, cmrc2018/ …, each with entries.jsonl).
    datasets: Path = DATASETS_BESIDE_CLONE
    # The request log: on or off for the whole deployment (namespaces can also turn theirs off), the
    # share of requests recorded, how long rows are kept, and the caps that keep it from ever blocking.
    request_log: bool = True
    request_log_sample: float = 1.0
    request_log_retention_days: int = 30
    request_log_buffer_max: int = 100_000  # records waiting in one process
    request_log_queue_max: int = 500  # batches (of at most 1000 records) waiting in Redis
    # Releases that served within this many days can be read again (?release=, replay, /api/verify).
    release_retention_days: int = 90
    # The retention policy keeps the files of at least this many newest releases per namespace.
    release_keep: int = 10
    # Bearer token of /metrics (Prometheus); empty turns the endpoint off (404).
    metrics_token: str = ""
    # One JSON line per answered request on the evergreen.access logger.
    access_log: bool = False
    # Webhooks: may endpoints resolve to loopback or private addresses (tests, a private network)?
    webhook_allow_private: bool = False
    webhook_timeout_seconds: float = 10.0
    # Attempts per notice; the wait after the n-th failure is base x 2^(n-1), capped, with jitter.
    webhook_max_attempts: int = 8
    webhook_retry_base_seconds: float = 30.0
    webhook_retry_max_seconds: float = 3600.0
    # Consecutive failed attempts (across notices) after which an endpoint is disabled.
    webhook_disable_after: int = 15
    # When a dependency fails (README, "When a dependency fails"): each Redis call's connect and read
    # timeout, how long a process then stops trying that Redis, and how long it keeps serving the
    # namespaces and API keys it last read from PostgreSQL while PostgreSQL does not answer.
    redis_timeout_seconds: float = 0.25
    dependency_retry_seconds: float = 5.0
    stale_if_error_seconds: float = 3600.0
    # Client-side bounds on PostgreSQL work in web processes (knowledge.resilience.deadline): a read of a
    # namespace or an API key, and any one query (0: none). A hung server answers nothing, not even its
    # own statement_timeout, so without them a request would wait until gunicorn killed its worker.
    database_read_timeout_seconds: float = 2.0
    database_query_timeout_seconds: float = 20.0
    # Bytes of whole answers each process keeps in memory (gateway.cache); Redis bounds the shared copy.
    reply_cache_bytes: int = 32 * 1024 * 1024
    # Revalidate cached namespaces and keys in a background thread (off in the test settings only).
    revalidate_in_background: bool = True
    # Where worker processes keep the large parts of loaded releases (index, entries) as files they all
    # map, so the page cache holds one copy per host rather than one per worker.
    release_files_dir: Path = RELEASE_FILES
    # Bytes of release files a host keeps: past it, the least recently used go first (never the newest).
    release_files_max_bytes: int = 4 * 1024**3
    # Where a build worker keeps each namespace's build caches between restarts (knowledge.services.build_cache).
    build_cache_dir: Path = BUILD_CACHE

    @classmethod
    def from_env(cls, env: Env) -> EvergreenSettings:
        defaults = cls()
        return cls(
            default_namespace=env.text("EVERGREEN_DEFAULT_NAMESPACE", defaults.default_namespace),
            rate_limit=env.rate("EVERGREEN_RATE_LIMIT", "120/min"),
            trusted_proxies=env.networks("EVERGREEN_TRUSTED_PROXIES"),
            mcp_allowed_origins=tuple(env.origins("EVERGREEN_MCP_ALLOWED_ORIGINS")),
            mcp_max_body_bytes=env.whole("EVERGREEN_MCP_MAX_BODY_BYTES", defaults.mcp_max_body_bytes, minimum=1024),
            feedback_rate_limit=env.rate("EVERGREEN_FEEDBACK_RATE_LIMIT", "20/hour"),
            manage_rate_limit=env.rate("EVERGREEN_MANAGE_RATE_LIMIT", "600/min"),
            a2a_task_retention_seconds=env.whole(
                "EVERGREEN_A2A_TASK_RETENTION_SECONDS", defaults.a2a_task_retention_seconds, minimum=1
            ),
            a2a_task_quota_client_bytes=env.whole(
                "EVERGREEN_A2A_TASK_QUOTA_CLIENT_BYTES", defaults.a2a_task_quota_client_bytes, minimum=1
            ),
            a2a_task_quota_namespace_bytes=env.whole(
                "EVERGREEN_A2A_TASK_QUOTA_NAMESPACE_BYTES", defaults.a2a_task_quota_namespace_bytes, minimum=1
            ),
            security_log_key=env.text("EVERGREEN_SECURITY_LOG_KEY"),
            security_log_repeat_seconds=env.number(
                "EVERGREEN_SECURITY_LOG_REPEAT_SECONDS", defaults.security_log_repeat_seconds
            ),
            build_coalesce_seconds=env.number("EVERGREEN_BUILD_COALESCE_SECONDS", defaults.build_coalesce_seconds),
            build_reconcile_seconds=env.number(
                "EVERGREEN_BUILD_RECONCILE_SECONDS", defaults.build_reconcile_seconds, minimum=1
            ),
            build_requeue_seconds=env.number(
                "EVERGREEN_BUILD_REQUEUE_SECONDS", defaults.build_requeue_seconds, minimum=1
            ),
            build_pause_seconds=env.number("EVERGREEN_BUILD_PAUSE_SECONDS", defaults.build_pause_seconds),
            demo_password=env.text("EVERGREEN_DEMO_PASSWORD"),
            datasets=datasets_directory(env),
            request_log=env.flag("EVERGREEN_REQUEST_LOG", defaults.request_log),
            request_log_sample=env.number("EVERGREEN_REQUEST_LOG_SAMPLE", defaults.request_log_sample, maximum=1.0),
            request_log_retention_days=env.whole(
                "EVERGREEN_REQUEST_LOG_RETENTION_DAYS", defaults.request_log_retention_days, minimum=1
            ),
            request_log_buffer_max=env.whole(
                "EVERGREEN_REQUEST_LOG_BUFFER_MAX", defaults.request_log_buffer_max, minimum=1
            ),
            request_log_queue_max=env.whole(
                "EVERGREEN_REQUEST_LOG_QUEUE_MAX", defaults.request_log_queue_max, minimum=1
            ),
            release_retention_days=env.whole(
                "EVERGREEN_RELEASE_RETENTION_DAYS", defaults.release_retention_days, minimum=1
            ),
            release_keep=env.whole("EVERGREEN_RELEASE_KEEP", defaults.release_keep, minimum=1),
            metrics_token=env.text("EVERGREEN_METRICS_TOKEN"),
            access_log=env.flag("EVERGREEN_ACCESS_LOG", defaults.access_log),
            reply_cache_bytes=env.whole("EVERGREEN_REPLY_CACHE_BYTES", defaults.reply_cache_bytes, minimum=64 * 1024),
            webhook_allow_private=env.flag("EVERGREEN_WEBHOOK_ALLOW_PRIVATE", defaults.webhook_allow_private),
            webhook_timeout_seconds=env.number(
                "EVERGREEN_WEBHOOK_TIMEOUT_SECONDS", defaults.webhook_timeout_seconds, minimum=0.1
            ),
            webhook_max_attempts=env.whole("EVERGREEN_WEBHOOK_MAX_ATTEMPTS", defaults.webhook_max_attempts, minimum=1),
            webhook_retry_base_seconds=env.number(
                "EVERGREEN_WEBHOOK_RETRY_BASE_SECONDS", defaults.webhook_retry_base_seconds, minimum=0.1
            ),
            webhook_retry_max_seconds=env.number(
                "EVERGREEN_WEBHOOK_RETRY_MAX_SECONDS", defaults.webhook_retry_max_seconds, minimum=1
            ),
            webhook_disable_after=env.whole(
                "EVERGREEN_WEBHOOK_DISABLE_AFTER", defaults.webhook_disable_after, minimum=1
            ),
            redis_timeout_seconds=env.number(
                "EVERGREEN_REDIS_TIMEOUT_SECONDS", defaults.redis_timeout_seconds, minimum=0.01
            ),
            dependency_retry_seconds=env.number(
                "EVERGREEN_DEPENDENCY_RETRY_SECONDS", defaults.dependency_retry_seconds, minimum=0.1
            ),
            stale_if_error_seconds=env.number("EVERGREEN_STALE_IF_ERROR_SECONDS", defaults.stale_if_error_seconds),
            database_read_timeout_seconds=env.number(
                "EVERGREEN_DB_READ_TIMEOUT_SECONDS", defaults.database_read_timeout_seconds, minimum=0.1
            ),
            database_query_timeout_seconds=env.number(
                "EVERGREEN_DB_QUERY_TIMEOUT_SECONDS", defaults.database_query_timeout_seconds, minimum=0
            ),
            release_files_dir=env.directory("EVERGREEN_RELEASE_FILES_DIR", RELEASE_FILES),
            release_files_max_bytes=env.whole(
                "EVERGREEN_RELEASE_FILES_MAX_BYTES", defaults.release_files_max_bytes, minimum=1
            ),
            build_cache_dir=env.directory("EVERGREEN_BUILD_CACHE_DIR", BUILD_CACHE),
        )


def datasets_directory(env: Env) -> Path:
    """``EVERGREEN_DATASETS``, else ``../shared/datasets`` beside the clone (the bench reads it without Django)."""
    return env.directory("EVERGREEN_DATASETS", DATASETS_BESIDE_CLONE)


@dataclass(frozen=True, slots=True)
class BenchServices:
    """Where `make bench` runs its server parts: a PostgreSQL database it drops and recreates, and a Redis
    database it flushes only when that database is empty or was claimed by an earlier bench run."""

    postgres: str  # the server, without a database name
    database: str
    redis_url: str


def bench_services(env: Env) -> BenchServices:
    url = env.url("EVERGREEN_BENCH_DATABASE_URL", BENCH_DATABASE_URL, schemes=("postgres", "postgresql"))
    server, _, database = url.rpartition("/")
    if not database.isidentifier():
        raise ImproperlyConfigured(
            f"EVERGREEN_BENCH_DATABASE_URL={url!r} must end in a database name: postgres://user@host:5432/<name>"
        )
    redis_url = env.url("EVERGREEN_BENCH_REDIS_URL", BENCH_REDIS_URL, schemes=("redis", "rediss", "unix"))
    return BenchServices(postgres=server, database=database, redis_url=redis_url)
