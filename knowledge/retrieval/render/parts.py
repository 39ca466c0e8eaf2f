"""Per-entry rendered parts kept between builds, so a one-entry publish renders one entry again.

A part is keyed by everything its bytes depend on (the entry record and what of the namespace it
reads), so a hit is always the bytes a full rendering would give. Each build keeps only the parts it
used; memory is about the size of the parts (context.json's entries).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager


class PartsCache:
    """Rendered bytes by key, for one namespace; `rendered`/`reused` count the last build's parts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: dict[Hashable, bytes] = {}
        self._used: dict[Hashable, bytes] | None = None
        self.rendered = 0
        self.reused = 0

    def __len__(self) -> int:
        return len(self._parts)

    def items(self) -> list[tuple[Hashable, bytes]]:
        """The kept parts (for keeping them on disk)."""
        with self._lock:
            return list(self._parts.items())

    def restore(self, items: Iterable[tuple[Hashable, bytes]]) -> None:
        """Keep these parts, as if an earlier build had rendered them (a worker's cache kept on disk)."""
        with self._lock:
            self._parts = dict(items)

    def get(self, key: Hashable, render: Callable[[], bytes]) -> bytes:
        """The part's bytes: kept from an earlier build, or rendered now (and kept)."""
        found = self._parts.get(key)
        if found is None:
            found = render()
            self.rendered += 1
        else:
            self.reused += 1
        if self._used is not None:
            self._used[key] = found
        else:
            self._parts[key] = found
        return found

    @contextmanager
    def building(self) -> Iterator[PartsCache]:
        """One build at a time; afterwards only the parts this build used are kept."""
        with self._lock:
            self._used, self.rendered, self.reused = {}, 0, 0
            try:
                yield self
                self._parts = self._used
            finally:
                self._used = None
