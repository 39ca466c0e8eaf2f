"""The large parts of loaded releases as files every worker process of a host maps (issue 18 §3).

A file is named by the digest of what it was made from, so it never changes once written. The build
writes its release's files (knowledge.services.release_materialise) before activating it, so the web
workers of its host only map them; on another host, or when the file is gone, the first process that
needs it makes it from storage. Either way it is made under an exclusive lock (four workers starting
together make it once), written aside and renamed into place: a crash half-way leaves no file under
the name. Every process maps it read-only. The pages are the kernel's page cache, shared by all the
processes mapping them, instead of a private copy in each.

Files untouched for PRUNE_AFTER_SECONDS are removed when a new one is written, and so are the least
recently used past EVERGREEN_RELEASE_FILES_MAX_BYTES (never the one just written). Room for the new file
(as much as the largest of its kind) is made before it is written: the directory keeps to its budget
while the file is written, and the page-cache pages of the files removed are free for the new one's
writes, where fresh pages cost several times as much (on a VM whose free pages go back to its host, a
222 MB index copy took 0.55 s of CPU, 0.30 s with the room made first: docs/performance-log.md, sixth
round). A process that still maps one keeps reading it (an unlinked file lives until its last mapping
goes), and one that needs it again makes it again. A 100,000-entry namespace that publishes every few
minutes writes about 200 MB of them each time, so the day's age alone let the directory fill its disk.
What a writer killed half-way left aside is removed then too, and when a worker starts
(knowledge.partial_files: never what a live writer holds).
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from knowledge.partial_files import is_partial, partial_path, partials_sweep, path_remove
from knowledge.retrieval.entry_table import TABLE_LAYOUT
from knowledge.retrieval.index_format import SERVED_LAYOUT

PRUNE_AFTER_SECONDS = 24 * 3600
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def index_file_name(index_etag: str) -> str:
    """The file of a release's compiled index (search-index.bin), by its ETag and what a host's copy holds
    (index_format.SERVED_LAYOUT): one made by another version of the code is not reused."""
    return f"{_digest(index_etag, SERVED_LAYOUT)}.index"


def entries_file_name(*, site_etag: str, context_etag: str) -> str:
    """The file of a release's entry table, made from its site.json and context.json. The table's layout
    is part of the name: a host's file made by another version of the code is not reused."""
    return f"{_digest(site_etag, context_etag, TABLE_LAYOUT)}.entries"


def _digest(*etags: str) -> str:
    return hashlib.sha256("\n".join(etags).encode()).hexdigest()


def release_file_made(*, name: str, produce: Callable[[Path], None]) -> Path:
    """The path of the file `name` (a digest and a suffix); if missing, `produce(path)` writes it first."""
    if not _NAME.match(name):
        raise ValueError(f"unsafe release file name {name!r}")
    directory: Path = settings.EVERGREEN.release_files_dir
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / name
    if not path.exists():
        with open(directory / ".lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.exists():
                budget = settings.EVERGREEN.release_files_max_bytes
                _prune(directory, keep=None, budget=budget - _room(directory, suffix=path.suffix))
                partial = partial_path(path)
                try:
                    produce(partial)
                    os.replace(partial, path)
                finally:
                    partial.unlink(missing_ok=True)
                _prune(directory, keep=path, budget=budget)
    os.utime(path)  # in use: not pruned
    return path


def release_file_mapped(*, name: str, produce: Callable[[Path], None]) -> mmap.mmap:
    """The file `name` mapped read-only (made first by `produce` if missing, see release_file_made)."""
    with open(release_file_made(name=name, produce=produce), "rb") as file:
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def release_files_sweep() -> None:
    """Remove what writers killed half-way left in the directory (when a worker starts)."""
    partials_sweep(settings.EVERGREEN.release_files_dir)


def _room(directory: Path, *, suffix: str) -> int:
    """The size of the largest file of the kind `suffix` names: about what the next one of them takes."""
    sizes = [path.stat().st_size for path in directory.glob(f"*{suffix}") if not is_partial(path.name)]
    return max(sizes, default=0)


def _prune(directory: Path, *, keep: Path | None, budget: int) -> None:
    partials_sweep(directory)
    cutoff = time.time() - PRUNE_AFTER_SECONDS
    kept: list[tuple[float, int, Path]] = []  # the files left, with when each was last used and its size
    for path in directory.iterdir():  # the files (and scratch of older versions), never the lock
        if path.name == ".lock" or is_partial(path.name):
            continue
        status = path.stat()
        if path != keep and status.st_mtime < cutoff:
            path_remove(path)
        elif path != keep:
            kept.append((status.st_mtime, status.st_size, path))
    held = (keep.stat().st_size if keep is not None else 0) + sum(size for _, size, _ in kept)
    for _, size, path in sorted(kept):  # the least recently used first
        if held <= budget:
            break
        path_remove(path)
        held -= size
