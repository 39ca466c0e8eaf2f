"""A release switch never stalls a request (knowledge.selectors.switching), driven by loaders that wait on events."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from knowledge.selectors.switching import ReleaseCache

WAIT = 30.0  # only a broken implementation ever waits this long


@dataclass(frozen=True)
class Release:
    release_id: int
    key: str
    namespace_id: int | None


class Loader:
    """Loads a release once its gate opens; records which releases it started loading, and in which thread."""

    def __init__(self) -> None:
        self.gates: dict[str, threading.Event] = {}
        self.started: dict[str, threading.Event] = {}
        self.calls: list[str] = []
        self.failing: set[str] = set()
        self._lock = threading.Lock()

    def gate(self, key: str) -> threading.Event:
        with self._lock:
            return self.gates.setdefault(key, threading.Event())

    def began(self, key: str) -> threading.Event:
        with self._lock:
            return self.started.setdefault(key, threading.Event())

    def __call__(self, release_id: int, key: str, namespace_id: int | None) -> Release:
        with self._lock:
            self.calls.append(key)
        self.began(key).set()
        assert self.gate(key).wait(WAIT), f"the gate of {key} never opened"
        if key in self.failing:
            raise ConnectionError(f"cannot read {key}")
        return Release(release_id, key, namespace_id)


def opened(loader: Loader, *keys: str) -> Loader:
    for key in keys:
        loader.gate(key).set()
    return loader


def test_a_switch_serves_the_previous_release_until_the_new_one_is_loaded() -> None:
    loader = opened(Loader(), "1.a")
    cache = ReleaseCache(loader, size=8)
    assert cache.get(1, "1.a", 10).key == "1.a"

    # The namespace switches to release 2: its load blocks, yet every request is answered at once.
    answers = [cache.get(2, "2.b", 10).key for _ in range(5)]
    assert loader.began("2.b").wait(WAIT)
    assert answers == ["1.a"] * 5
    assert loader.calls == ["1.a", "2.b"]  # one background load, however many requests asked

    loader.gate("2.b").set()
    cache.wait("2.b")
    assert cache.get(2, "2.b", 10).key == "2.b"
    assert set(cache.held()) == {2}  # the namespace's previous release is forgotten


def test_a_first_load_holds_only_requests_for_that_release() -> None:
    loader = opened(Loader(), "1.a")
    cache = ReleaseCache(loader, size=8)
    cache.get(1, "1.a", 10)

    first: list[str] = []
    waiting = threading.Thread(target=lambda: first.append(cache.get(3, "3.c", 30).key))
    waiting.start()
    assert loader.began("3.c").wait(WAIT)

    # Namespace 30's first load is under way in that request; namespace 10 answers meanwhile.
    assert cache.get(1, "1.a", 10).key == "1.a"
    assert first == []
    loader.gate("3.c").set()
    waiting.join(WAIT)
    assert first == ["3.c"]


def test_requests_that_arrive_during_a_first_load_wait_for_that_load_only() -> None:
    loader = Loader()
    cache = ReleaseCache(loader, size=8)
    answers: list[str] = []
    threads = [threading.Thread(target=lambda: answers.append(cache.get(1, "1.a", 10).key)) for _ in range(3)]
    for thread in threads:
        thread.start()
    assert loader.began("1.a").wait(WAIT)
    loader.gate("1.a").set()
    for thread in threads:
        thread.join(WAIT)
    assert answers == ["1.a"] * 3
    assert loader.calls == ["1.a"]


def test_a_failed_background_load_keeps_the_previous_release_and_is_tried_again() -> None:
    loader = opened(Loader(), "1.a", "2.b")
    loader.failing.add("2.b")
    cache = ReleaseCache(loader, size=8)
    cache.get(1, "1.a", 10)

    assert cache.get(2, "2.b", 10).key == "1.a"
    cache.wait("2.b")
    assert loader.calls == ["1.a", "2.b"]

    loader.failing.clear()
    assert cache.get(2, "2.b", 10).key == "1.a"  # starts a second load
    cache.wait("2.b")
    assert cache.get(2, "2.b", 10).key == "2.b"
    assert loader.calls == ["1.a", "2.b", "2.b"]


def test_a_failed_first_load_raises_to_its_request() -> None:
    loader = opened(Loader(), "1.a")
    loader.failing.add("1.a")
    cache = ReleaseCache(loader, size=8)
    with pytest.raises(ConnectionError):
        cache.get(1, "1.a", 10)
    loader.failing.clear()
    assert cache.get(1, "1.a", 10).key == "1.a"


def test_a_release_overtaken_by_another_switch_is_not_served() -> None:
    loader = opened(Loader(), "1.a", "3.c")
    cache = ReleaseCache(loader, size=8)
    cache.get(1, "1.a", 10)

    assert cache.get(2, "2.b", 10).key == "1.a"  # release 2 starts loading…
    assert cache.get(3, "3.c", 10).key == "1.a"  # …and the namespace moves on to release 3
    cache.wait("3.c")
    assert cache.get(3, "3.c", 10).key == "3.c"
    loader.gate("2.b").set()
    cache.wait("2.b")
    assert cache.get(3, "3.c", 10).key == "3.c"  # release 2, finished later, does not take its place
    assert set(cache.held()) == {3}


def test_the_background_hook_runs_after_each_background_load() -> None:
    loader = opened(Loader(), "1.a", "2.b")
    ran = threading.Event()
    cache = ReleaseCache(loader, size=8, after_background=ran.set)
    cache.get(1, "1.a", 10)
    assert not ran.is_set()  # an inline load runs in the request's thread: nothing to close
    cache.get(2, "2.b", 10)
    assert ran.wait(WAIT)


def test_a_request_waiting_for_a_first_load_keeps_telling_the_worker_it_is_alive() -> None:
    loader = Loader()
    beats = threading.Event()
    cache = ReleaseCache(loader, size=8, waiting=beats.set)
    answers: list[str] = []
    request = threading.Thread(target=lambda: answers.append(cache.get(1, "1.a", 10).key))
    request.start()
    assert loader.began("1.a").wait(WAIT)
    assert beats.wait(WAIT)  # while the load is still held at its gate
    assert answers == []
    loader.gate("1.a").set()
    request.join(WAIT)
    assert answers == ["1.a"]
