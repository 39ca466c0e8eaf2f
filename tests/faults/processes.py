"""Private PostgreSQL and Redis servers for the fault tests, which stop, kill and pause them.

Each server runs from a temporary directory on a free port, owned by the test that started it, so a
test can SIGSTOP or stop it without touching the services the rest of the suite (and other checkouts)
share. PostgreSQL comes from Debian's binaries (/usr/lib/postgresql/<version>/bin); as root they run
as the `postgres` user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import psycopg
import redis

from tests.services import missing
from tests.worker import free_port, wait_for


def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


@dataclass
class PrivateRedis:
    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def answers(self) -> bool:
        try:
            return bool(redis.Redis.from_url(self.url, socket_timeout=1, socket_connect_timeout=1).ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        """(Re)start on the same port, empty (no persistence)."""
        command = [
            *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""),
            *("--appendonly", "no", "--dir", str(self.directory)),
        ]
        with (self.directory / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(self.answers, timeout=60, what=f"redis-server on port {self.port}")

    def _running(self) -> subprocess.Popen[bytes]:
        assert self.process is not None and self.process.poll() is None, "redis-server is not running"
        return self.process

    def kill(self) -> None:
        process = self._running()
        process.kill()
        process.wait()

    def pause(self) -> None:
        """SIGSTOP: the port still accepts connections (the kernel does), nothing ever answers."""
        self._running().send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._running().send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            self.process.wait(timeout=60)


@contextmanager
def private_redis() -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        missing("needs redis-server (apt-get install redis-server)")
    directory = Path(tempfile.mkdtemp(prefix="evergreen-redis-"))
    server = PrivateRedis(free_port(), directory)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class PrivatePostgres:
    port: int
    data: Path
    bin: Path

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/evergreen"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        done = subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout}\n{done.stderr}"

    def answers(self) -> bool:
        try:
            with psycopg.connect(self.url.replace("/evergreen", "/postgres"), connect_timeout=2) as connection:
                connection.execute("SELECT 1")
        except psycopg.Error:
            return False
        return True

    def start(self) -> None:
        log = self.data.parent / "postgres.log"
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.data.parent}"
        self._run(
            *(str(self.bin / "pg_ctl"), "start", "-w", "-t", "120"),
            *("-D", str(self.data), "-l", str(log), "-o", options),
        )
        wait_for(self.answers, timeout=60, what=f"PostgreSQL on port {self.port}")

    def stop(self) -> None:
        """A fast shutdown: every connection is closed, new ones are refused."""
        self._run(str(self.bin / "pg_ctl"), "stop", "-w", "-t", "120", "-m", "fast", "-D", str(self.data))

    def _processes(self) -> list[int]:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True, check=False)
        return [postmaster, *(int(pid) for pid in children.stdout.split())]

    def pause(self) -> None:
        """SIGSTOP the server and every backend: connections stay open and nothing answers (a hung host)."""
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self._processes():
            os.kill(pid, signal.SIGCONT)


@contextmanager
def private_postgres() -> Iterator[PrivatePostgres]:
    binaries = _postgres_bin()
    if binaries is None:
        missing("needs PostgreSQL's server binaries (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="evergreen-postgres-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
    server = PrivatePostgres(free_port(), root / "data", binaries)
    try:
        server._run(str(binaries / "initdb"), "-D", str(server.data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        server.start()
        with psycopg.connect(server.url.replace("/evergreen", "/postgres"), autocommit=True) as connection:
            connection.execute("CREATE DATABASE evergreen")
        yield server
    finally:
        with suppress(AssertionError):
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
