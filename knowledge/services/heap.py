"""A build's heap: glibc's malloc told to map large allocations on their own, the collector kept off the caches.

By default glibc raises its mmap threshold (from 128 KiB up to 32 MiB) each time a mapped block is
freed, after which a release build's large buffers (rendered files, numpy arrays, byte strings of a few
hundred KiB to megabytes) come from its heaps, where what is freed stays resident and fragments them
between the build's steps and builds. Held at 128 KiB they are unmapped as they are freed: at 100,000
entries a build's peak is 41–63 MiB lower (at 1 MiB 18–49, at 4 MiB 0–24), for more
system time in mmap and page faults (README, Performance; issue 18 §3). Setting the threshold also
stops it moving, as `MALLOC_MMAP_THRESHOLD_` does. Elsewhere (musl, macOS) nothing is done.

Inside an incremental build (`heap_unmapped`) nothing is mapped on its own: a one-entry build at
100,000 entries makes and frees dozens of arrays of 30-60 MiB, and each fresh mapping is faulted in
page by page, which on a virtual machine that hands freed pages back to its host cost 2-8 us a page
(55 ms to first touch 32 MiB, 1.4 ms to write it again): about a sixth of the build's CPU. From the
heap, each array takes the pages the one before it freed; when the build ends the heap is trimmed, so
what it freed goes back as before.

A worker keeps millions of objects between builds (a namespace's entry records, rendered parts and
their keys), and each full pass of Python's cyclic collector walks all of them: at 100,000 entries a
one-entry build triggered about six, some 2 s of its 5 s of CPU. `heap_frozen` leaves what is alive
when a build starts out of the collector's passes until it ends (gc.freeze), so they walk only what the
build makes.
"""

from __future__ import annotations

import ctypes
import gc
import platform
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from functools import partial

M_MMAP_THRESHOLD, M_MMAP_MAX = -3, -4  # glibc's <malloc.h>
MMAP_THRESHOLD = 128 * 1024
MMAP_MAX = 65536  # glibc's default: how many allocations may be mapped on their own at once


def _glibc() -> ctypes.CDLL | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def heap_mmap_threshold_set(*, threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes for this process (and the ones it forks);
    False where there is no glibc."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, threshold))


def heap_trim() -> bool:
    """Give the free pages inside glibc's heaps back to the system (malloc_trim): what a build freed
    stays resident otherwise, under whatever comes next. False where there is no glibc."""
    libc = _glibc()
    return libc is not None and bool(libc.malloc_trim(0))


class _Outermost:
    """Process-wide settings for the length of builds that may nest or run in threads at once: `enter`
    when the first block starts, `leave` when the last one ends."""

    def __init__(self, enter: Callable[[], object], leave: Callable[[], object]) -> None:
        self._enter, self._leave = enter, leave
        self._lock = threading.Lock()
        self._depth = 0

    @contextmanager
    def block(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._enter()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._leave()


def _mapped_again(libc: ctypes.CDLL) -> None:
    libc.mallopt(M_MMAP_MAX, MMAP_MAX)
    libc.malloc_trim(0)


_LIBC = _glibc()
_unmapped = (
    _Outermost(partial(_LIBC.mallopt, M_MMAP_MAX, 0), partial(_mapped_again, _LIBC)) if _LIBC is not None else None
)
_frozen = _Outermost(gc.freeze, gc.unfreeze)


def heap_unmapped() -> AbstractContextManager[None]:
    """While the block runs, glibc maps no allocation on its own (M_MMAP_MAX 0): the large ones come from
    the heap, reusing what the block freed; then they are mapped again and the heap is trimmed. Where
    there is no glibc, nothing is done."""
    return _unmapped.block() if _unmapped is not None else nullcontext()


def heap_frozen() -> AbstractContextManager[None]:
    """While the block runs, the objects alive when it started are left out of the cyclic collector's
    passes; afterwards they are collectable again (gc.unfreeze). Cyclic garbage among them made meanwhile
    waits for a pass after the block; the objects the block makes are collected as usual."""
    return _frozen.block()
