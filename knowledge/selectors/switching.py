"""Releases held by one process, and switches that never stall a request (issue 18 §4).

Loading a release (reading its artifacts, rebuilding its snapshot and index) takes seconds at
100,000 entries. It used to happen inline, on the first request after a switch, under one lock for
every namespace: that request and every other one reaching that worker waited (5–8 s). Now:

- a namespace this process already serves keeps serving its previous release while a background
  thread loads the new one; requests switch to it once it is complete (one load per release at a
  time, however many requests ask);
- a namespace's first load in this process (nothing to serve meanwhile) happens in the request,
  and only requests for that release wait for it: other namespaces are never held; meanwhile a
  helper thread tells the worker's arbiter it is alive (`waiting`, knowledge.heartbeat), so a load
  longer than gunicorn's timeout does not get the worker killed;
- a failed background load is forgotten, so a later request starts another; until then the
  previous release keeps serving.

Pure threading: the loader and the hooks are passed in, so tests drive it with loaders that wait on events.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

logger = logging.getLogger(__name__)


class Keyed(Protocol):
    @property
    def release_id(self) -> int: ...

    @property
    def key(self) -> str: ...

    @property
    def namespace_id(self) -> int | None: ...


R = TypeVar("R", bound=Keyed)
Load = Callable[[int, str, "int | None"], R]


WAIT_BEAT_SECONDS = 1.0  # how often a request waiting for a first load says its worker is alive


class _Pending:
    """One load under way: set when it is over, loaded or failed."""

    def __init__(self) -> None:
        self.done = threading.Event()


class ReleaseCache(Generic[R]):
    """The releases of one process by release id (an LRU of `size`), and which one each namespace serves."""

    def __init__(
        self,
        load: Load[R],
        *,
        size: int,
        after_background: Callable[[], None] = lambda: None,
        waiting: Callable[[], None] = lambda: None,
    ) -> None:
        self._load = load
        self._size = size
        self._after_background = after_background
        self._waiting = waiting
        self._lock = threading.Lock()  # guards the dictionaries below; never held while loading
        self._items: OrderedDict[int, R] = OrderedDict()
        self._serving: dict[int, R] = {}  # namespace id -> the release its requests get
        self._wanted: dict[int, str] = {}  # namespace id -> the key its requests asked for last
        self._pending: dict[str, _Pending] = {}

    def get(self, release_id: int, key: str, namespace_id: int | None) -> R:
        """Release `release_id` as `key` names it if it is in memory; else the namespace's previous release
        while the new one loads in the background; else (a first load) load it here."""
        with self._lock:
            found = self._items.get(release_id)
            if found is not None and found.key == key:
                self._items.move_to_end(release_id)
                if namespace_id is not None:
                    self._serving[namespace_id] = found
                    self._wanted[namespace_id] = key
                return found
            previous = None if namespace_id is None else self._serving.get(namespace_id)
            if namespace_id is not None:
                self._wanted[namespace_id] = key
            pending = self._pending.get(key)
            mine = pending is None
            if pending is None:
                pending = self._pending[key] = _Pending()
        if previous is not None:
            if mine:
                threading.Thread(
                    target=self._background,
                    args=(release_id, key, namespace_id, pending),
                    name=f"release-load-{release_id}",
                    daemon=True,
                ).start()
            return previous
        if not mine:
            pending.done.wait()
            return self.get(release_id, key, namespace_id)
        return self._first_load(release_id, key, namespace_id, pending)

    def _first_load(self, release_id: int, key: str, namespace_id: int | None, pending: _Pending) -> R:
        """Load in the request's own thread (its database connection, its transaction in tests), while a
        helper thread tells the worker's arbiter it is alive until the load is done."""
        beating = threading.Thread(target=self._beat_until, args=(pending.done,), daemon=True)
        beating.start()
        try:
            loaded = self._load(release_id, key, namespace_id)
        except BaseException:
            self._settle(key, pending, None)
            raise
        self._settle(key, pending, loaded)
        return loaded

    def _beat_until(self, done: threading.Event) -> None:
        while not done.wait(WAIT_BEAT_SECONDS):
            self._waiting()

    def wait(self, key: str) -> None:
        """Until no load of `key` is under way (tests and the bench: a switch is complete)."""
        with self._lock:
            pending = self._pending.get(key)
        if pending is not None:
            pending.done.wait()

    def _background(self, release_id: int, key: str, namespace_id: int | None, pending: _Pending) -> None:
        try:
            loaded = self._load(release_id, key, namespace_id)
        except Exception:
            logger.exception("Loading release %s in the background failed; the previous one keeps serving", key)
            self._settle(key, pending, None)
        else:
            self._settle(key, pending, loaded)
        finally:
            self._after_background()

    def _settle(self, key: str, pending: _Pending, loaded: R | None) -> None:
        with self._lock:
            if loaded is not None:
                self._install(loaded)
            del self._pending[key]
        pending.done.set()

    def _install(self, loaded: R) -> None:
        """Hold `loaded` and serve it to its namespace, forgetting that namespace's other releases (requests
        still using one keep their reference until they finish); unless the namespace has moved on meanwhile."""
        namespace_id = loaded.namespace_id
        if namespace_id is not None:
            if self._wanted.get(namespace_id, loaded.key) != loaded.key:
                return
            self._serving[namespace_id] = loaded
            for other in [rid for rid, r in self._items.items() if r.namespace_id == namespace_id]:
                del self._items[other]
        self._items[loaded.release_id] = loaded
        self._items.move_to_end(loaded.release_id)
        while len(self._items) > self._size:
            _, dropped = self._items.popitem(last=False)
            if dropped.namespace_id is not None and self._serving.get(dropped.namespace_id) is dropped:
                del self._serving[dropped.namespace_id]

    def serves(self, namespace_id: int) -> bool:
        """Whether this process serves the namespace (a release of it is in memory)."""
        with self._lock:
            return namespace_id in self._serving

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._serving.clear()
            self._wanted.clear()

    def __len__(self) -> int:
        return len(self._items)

    def held(self) -> dict[int, R]:
        """The releases in memory by id (a copy)."""
        with self._lock:
            return dict(self._items)
