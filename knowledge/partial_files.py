"""Files written under a temporary name and renamed into place, and what a killed writer leaves of them.

A writer killed (SIGKILL, the OOM killer, a container stopped) between making its temporary file and
renaming it leaves that file for good: a 100,000-entry build cache or release index is hundreds of MB.
So a temporary file (or directory) is named for its owner, `.partial.<host>.<pid>.<random>.<name>`,
and partials_sweep removes those whose owner is gone, never one a live writer holds:

- of this host: when no process has that pid, it is a zombie, or it started after the file was last
  written (the pid was reused, as a restarted container's workers reuse theirs);
- of another host sharing the directory (a volume mounted in the web and worker containers, whose pids
  mean nothing here): when it was last written over FOREIGN_AFTER_SECONDS ago.

Anything made from a partial's name by appending to it (a scratch file beside it) is its owner's too.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import socket
import stat
import time
from functools import cache
from pathlib import Path

logger = logging.getLogger(__name__)

PREFIX = ".partial"
FOREIGN_AFTER_SECONDS = 24 * 3600  # as release files unused that long (knowledge.selectors.release_files)
CLOCK_SLACK_SECONDS = 2.0  # /proc/stat's boot time is whole seconds: a start time may read up to 1 s late
_OWNER = re.compile(rf"^{re.escape(PREFIX)}\.(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "-"


def partial_path(path: Path) -> Path:
    """Where this process writes `path` before renaming it into place."""
    return path.with_name(f"{PREFIX}.{_host()}.{os.getpid()}.{secrets.token_hex(4)}.{path.name}")


def is_partial(name: str) -> bool:
    return _OWNER.match(name) is not None


@cache
def _boot_time() -> float | None:
    try:
        with open("/proc/stat", "rb") as file:
            for line in file:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def _process(pid: int) -> tuple[str, float | None] | None:
    """(state, start time) of the process `pid`, or None when there is none; no /proc: ("?", None)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # another user's: it exists
    boot = _boot_time()
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
    except FileNotFoundError:
        return None
    except OSError:
        return "?", None
    started = None if boot is None else boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    return fields[0].decode(), started


def _writer_alive(pid: int, written_at: float) -> bool:
    process = _process(pid)
    if process is None or process[0] in ("Z", "X"):
        return False
    started = process[1]
    return started is None or started <= written_at + CLOCK_SLACK_SECONDS


def partials_sweep(directory: Path, *, now: float | None = None) -> int:
    """Remove the partial files and directories in `directory` whose writer is gone; returns how many."""
    now = time.time() if now is None else now
    host = _host()
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0
    removed = 0
    for name in names:
        owner = _OWNER.match(name)
        if owner is None:
            continue
        path = directory / name
        try:
            found = path.lstat()
        except FileNotFoundError:
            continue  # renamed into place or removed meanwhile
        if owner["host"] == host:
            stale = not _writer_alive(int(owner["pid"]), found.st_mtime)
        else:
            stale = found.st_mtime < now - FOREIGN_AFTER_SECONDS
        if stale:
            path_remove(path)
            removed += 1
            logger.info("Removed %s: its writer was killed before renaming it", path)
    return removed


def path_remove(path: Path) -> None:
    """Remove a file or a directory with what it holds (gone already: nothing to do)."""
    try:
        if stat.S_ISDIR(path.lstat().st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except FileNotFoundError:
        pass
