"""A production-like Evergreen on private services, for the fault tests to break: gunicorn, PostgreSQL, Redis.

DEBUG off, the production settings module (namespaces revalidated in the background), one sync
worker (so every request reaches the process whose memory a test warmed), the demo namespace and a
private namespace with an API key (tests.mcp_bridge.live_setup), and an admin session.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.faults.processes import PrivatePostgres, PrivateRedis, free_port, private_postgres, private_redis
from tests.mcp_bridge.live import run_setup
from tests.worker import stop, wait_for

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FaultStack:
    url: str
    postgres: PrivatePostgres
    redis: PrivateRedis
    env: dict[str, str]
    vault_key: str
    session: str
    log: Path

    def http(self) -> httpx.Client:
        """A client whose timeout is a failure guard: no answer in 30 s means the request hung."""
        return httpx.Client(base_url=self.url, timeout=30)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def _serving(url: str, process: subprocess.Popen[bytes]) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"gunicorn exited with {process.returncode}")
    try:
        return httpx.get(f"{url}/healthz", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def fault_stack(tmp: Path, **extra_env: str) -> Iterator[FaultStack]:
    with private_postgres() as postgres, private_redis() as redis_server:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base",
            "DATABASE_URL": postgres.url,
            "REDIS_URL": redis_server.url,
            "EVERGREEN_DEBUG": "0",
            "EVERGREEN_SECRET_KEY": secrets.token_urlsafe(50),
            "EVERGREEN_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "EVERGREEN_SSL_REDIRECT": "0",
            "EVERGREEN_RATE_LIMIT": "100000/hour",  # on (it uses Redis), far above what the tests send
            "EVERGREEN_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
            **extra_env,
        }
        setup = run_setup("setup", env)
        session = run_setup("session", env)["session"]
        log = tmp / "gunicorn.log"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "gunicorn", "evergreen_site.wsgi", "-w", "1", "-b", f"127.0.0.1:{port}"]
        with log.open("ab") as out:
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            wait_for(lambda: _serving(url, process), timeout=90, what=f"gunicorn at {url}")
            yield FaultStack(url, postgres, redis_server, env, setup["vault_key"], session, log)
        finally:
            stop(process, grace=30)
