"""What a killed writer left is removed; what a live writer, another host's or nobody's partial holds stays."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from knowledge import partial_files
from knowledge.partial_files import FOREIGN_AFTER_SECONDS, partial_path, partials_sweep

DAY = 24 * 3600


def a_gone_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()  # exited and reaped: no process has its pid (until the system reuses it)
    return process.pid


def made(directory: Path, name: str, *, age: float = 0, folder: bool = False) -> str:
    path = directory / name
    if folder:
        path.mkdir()
        (path / "context.json").write_bytes(b"{}")
    else:
        path.write_bytes(b"half")
    if age:
        os.utime(path, (time.time() - age, time.time() - age))
    return name


def test_a_gone_writers_files_go_and_a_live_writers_other_hosts_and_other_files_stay(tmp_path: Path) -> None:
    host = partial_files._host()
    gone, alive = a_gone_pid(), os.getpid()
    removed = {
        made(tmp_path, f".partial.{host}.{gone}.0a1b.abc.index"),
        made(tmp_path, f".partial.{host}.{gone}.0a1b.abc.index.served"),  # a scratch file beside it
        made(tmp_path, f".partial.{host}.{gone}.0a1b.abc.entries.x1y2", folder=True),
        # a process with the pid that started after the file was last written (a restarted container's)
        made(tmp_path, f".partial.{host}.{alive}.0a1b.old.index", age=7 * DAY),
        made(tmp_path, f".partial.elsewhere.{alive}.0a1b.abc.index", age=FOREIGN_AFTER_SECONDS + 60),
    }
    kept = {
        made(tmp_path, partial_path(tmp_path / "mine.index").name),  # this process is writing it
        made(tmp_path, f".partial.elsewhere.{gone}.0a1b.abc.index"),  # another host's pids mean nothing here
        made(tmp_path, "abc.index", age=7 * DAY),
        made(tmp_path, ".lock", age=7 * DAY),
        made(tmp_path, f".abc.index.{gone}", age=7 * DAY),
    }

    assert partials_sweep(tmp_path) == len(removed)

    assert set(os.listdir(tmp_path)) == kept
    assert partials_sweep(tmp_path / "missing") == 0
