"""Evergreen's own settings as one typed, frozen record: ``settings.EVERGREEN.rate_limit`` and friends.

Read from the environment once, when the settings load; code reads the typed fields and never parses
or defaults them again. Tests override with ``settings.EVERGREEN = replace(settings.EVERGREEN, …)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evergreen_site.settings.env import Env, Rate

READ_RATE = Rate(120, 60)
FEEDBACK_RATE = Rate(20, 3600)
DATASETS_BESIDE_CLONE = Path(__file__).resolve().parents[3] / "shared" / "datasets"


@dataclass(frozen=True, slots=True)
class EvergreenSettings:
    # The namespace the bare host serves when no host name matches.
    default_namespace: str = "evergreen"
    # Requests per client per namespace; Rate(0, …) turns limiting off (benchmarks, evaluations).
    rate_limit: Rate = READ_RATE
    # How many reverse proxies in front of Evergreen append to X-Forwarded-For.
    trusted_proxies: int = 0
    # Origins allowed to call /mcp from a browser; requests without Origin are always allowed.
    mcp_allowed_origins: tuple[str, ...] = ()
    # Largest JSON-RPC body /mcp and /a2a accept (413 beyond it).
    mcp_max_body_bytes: int = 64 * 1024
    # submit_feedback per caller per namespace, far below the read limit.
    feedback_rate_limit: Rate = FEEDBACK_RATE
    # How long A2A tasks can be fetched with tasks/get (stated in the agent card).
    a2a_task_retention_seconds: int = 24 * 3600
    # Bytes of live A2A tasks one client may keep per namespace, and all clients together per namespace.
    a2a_task_quota_client_bytes: int = 8 * 1024 * 1024
    a2a_task_quota_namespace_bytes: int = 256 * 1024 * 1024
    # Key of the security log's client/key hashes (HMAC-SHA256); empty means one derived from SECRET_KEY.
    security_log_key: str = ""
    # Identical security events (kind, reason, client, namespace) within this many seconds are counted, not written.
    security_log_repeat_seconds: float = 60.0
    # Seconds a burst of publishes waits before one release build picks them all up.
    build_coalesce_seconds: float = 1.0
    # Fault injection for the crash-recovery test: seconds the build sleeps before committing.
    build_pause_seconds: float = 0.0
    # The demo users' password; empty means load_demo generates one and prints it once.
    demo_password: str = ""
    # Where the evaluation collections live (cranfield/, cmrc2018/ …, each with entries.jsonl).
    datasets: Path = DATASETS_BESIDE_CLONE

    @classmethod
    def from_env(cls, env: Env) -> EvergreenSettings:
        defaults = cls()
        return cls(
            default_namespace=env.text("EVERGREEN_DEFAULT_NAMESPACE", defaults.default_namespace),
            rate_limit=env.rate("EVERGREEN_RATE_LIMIT", "120/min"),
            trusted_proxies=env.whole("EVERGREEN_TRUSTED_PROXIES", defaults.trusted_proxies),
            mcp_allowed_origins=tuple(env.origins("EVERGREEN_MCP_ALLOWED_ORIGINS")),
            mcp_max_body_bytes=env.whole("EVERGREEN_MCP_MAX_BODY_BYTES", defaults.mcp_max_body_bytes, minimum=1024),
            feedback_rate_limit=env.rate("EVERGREEN_FEEDBACK_RATE_LIMIT", "20/hour"),
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
            build_pause_seconds=env.number("EVERGREEN_BUILD_PAUSE_SECONDS", defaults.build_pause_seconds),
            demo_password=env.text("EVERGREEN_DEMO_PASSWORD"),
            datasets=datasets_directory(env),
        )


def datasets_directory(env: Env) -> Path:
    """``EVERGREEN_DATASETS``, else ``../shared/datasets`` beside the clone (the bench reads it without Django)."""
    return env.directory("EVERGREEN_DATASETS", DATASETS_BESIDE_CLONE)
