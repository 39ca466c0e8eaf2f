"""A real Evergreen server process for the live SDK tests: a fresh database, gunicorn with two workers, a free port.

Not pytest-django's ``live_server`` (a thread inside the test process): gunicorn is what production
runs, two worker processes prove that nothing (A2A tasks, rate windows) lives in one process's memory,
and the server shares no connection, cache or transaction with the tests. The database is created
for the session — PostgreSQL when ``DATABASE_URL`` names one (``evergreen_live_<random>``, dropped
afterwards), else a SQLite file — and prepared by ``live_setup`` in its own process.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 60.0
START_ATTEMPTS = 3


@dataclass(frozen=True)
class LiveServer:
    """The running server: its base URL, the private namespace's key, and a way to look inside its database."""

    url: str
    vault_key: str  # public clearance
    env: dict[str, str]
    log: Path
    restricted_key: str = ""  # the vault's key cleared for restricted entries

    def inspect(self) -> dict[str, Any]:
        """Feedback rows and published-content markers, read by a process of the server's own environment."""
        return run_setup("inspect", self.env)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_setup(command: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.mcp_bridge.live_setup", command, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"live_setup {command} failed:\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@contextmanager
def fresh_database(tmp: Path) -> Iterator[str]:
    """A new, empty database URL for the server; removed afterwards."""
    configured = os.environ.get("DATABASE_URL", "")
    if not configured.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp / 'live.sqlite3'}"
        return
    import psycopg

    parts = urlsplit(configured)
    name = f"evergreen_live_{secrets.token_hex(4)}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _ready(url: str, process: subprocess.Popen[bytes]) -> bool:
    """True once the server answers; raises if the process died (a taken port, a broken import)."""
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            if httpx.get(f"{url}/t/evergreen/llms.txt", timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the live server at {url} did not answer within {READY_TIMEOUT} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def live_server(
    tmp: Path, *, extra_env: dict[str, str] | None = None, gunicorn_args: tuple[str, ...] = ()
) -> Iterator[LiveServer]:
    """Prepare a fresh database, start gunicorn on a free port, wait until it answers, and stop it afterwards."""
    with fresh_database(tmp) as database_url:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.test",
            "DATABASE_URL": database_url,
            "EVERGREEN_DEBUG": "1",
            "EVERGREEN_RATE_LIMIT": "2000/min",  # the sessions below stay far from it; 429 has its own tests
            "PYTHONPATH": str(ROOT),
            **(extra_env or {}),
        }
        setup = run_setup("setup", env)
        log = tmp / "gunicorn.log"
        for _ in range(START_ATTEMPTS):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            command = [sys.executable, "-m", "gunicorn", "evergreen_site.wsgi", "-w", "2", "-b", f"127.0.0.1:{port}"]
            command += gunicorn_args
            with log.open("ab") as out:
                process = subprocess.Popen(
                    command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            try:
                if _ready(url, process):
                    yield LiveServer(
                        url=url, vault_key=setup["vault_key"], env=env, log=log, restricted_key=setup["restricted_key"]
                    )
                    return
            finally:
                _stop(process)
        raise AssertionError(
            f"gunicorn did not start in {START_ATTEMPTS} attempts; see {log}:\n{log.read_text()[-3000:]}"
        )
