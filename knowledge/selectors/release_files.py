"""The large parts of loaded releases as files every worker process of a host maps (issue 18 §3).

A file is named by the digest of what it was made from, so it never changes once written: the first
process that needs it makes it (under an exclusive lock, so four workers starting together make it
once) and renames it into place; every process then maps it read-only. The pages are the kernel's
page cache, shared by all the processes mapping them, instead of a private copy in each.

Files untouched for PRUNE_AFTER_SECONDS are removed when a new one is written: a process that still
maps one keeps reading it (an unlinked file lives until its last mapping goes), and one that needs
it again makes it again.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

PRUNE_AFTER_SECONDS = 24 * 3600
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def release_file_mapped(*, name: str, produce: Callable[[Path], None]) -> mmap.mmap:
    """The file `name` (a digest and a suffix) mapped read-only; if missing, `produce(path)` writes it."""
    if not _NAME.match(name):
        raise ValueError(f"unsafe release file name {name!r}")
    directory: Path = settings.EVERGREEN.release_files_dir
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / name
    if not path.exists():
        with open(directory / ".lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.exists():
                partial = path.with_name(f".{path.name}.{os.getpid()}")
                try:
                    produce(partial)
                    os.replace(partial, path)
                finally:
                    partial.unlink(missing_ok=True)
                _prune(directory, keep=path)
    os.utime(path)  # in use: not pruned
    with open(path, "rb") as file:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def _prune(directory: Path, *, keep: Path) -> None:
    cutoff = time.time() - PRUNE_AFTER_SECONDS
    for path in directory.iterdir():
        if path != keep and not path.name.startswith(".") and path.stat().st_mtime < cutoff:
            path.unlink(missing_ok=True)
