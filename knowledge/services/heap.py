"""glibc's malloc told to map every allocation of 128 KiB or more on its own (a Celery worker's start).

By default glibc raises its mmap threshold (from 128 KiB up to 32 MiB) each time a mapped block is
freed, after which a release build's large buffers (rendered files, numpy arrays, byte strings of a few
hundred KiB to megabytes) come from its heaps, where what is freed stays resident and fragments them
between the build's steps and builds. Held at 128 KiB they are unmapped as they are freed: at 100,000
entries a build's peak is 41–63 MiB lower (at 1 MiB 18–49, at 4 MiB 0–24), for more
system time in mmap and page faults (README, Performance; issue 18 §3). Setting the threshold also
stops it moving, as `MALLOC_MMAP_THRESHOLD_` does. Elsewhere (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import platform

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 128 * 1024


def heap_mmap_threshold_set(*, threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at `threshold` bytes for this process (and the ones it forks);
    False where there is no glibc."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, threshold))
