"""A worker fixes glibc's mmap threshold when it starts; a build keeps the collector off its caches (issue 18 §3)."""

from __future__ import annotations

import gc
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from celery.signals import worker_init, worker_process_init
from django.core.management import call_command

from knowledge import tasks
from knowledge.management.commands import build_release
from knowledge.models import Namespace
from knowledge.services import heap, releases
from knowledge.services.releases import release_build
from tests.knowledge import test_releases


def test_the_threshold_is_set_under_glibc_and_nothing_is_done_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    assert heap.heap_mmap_threshold_set() is (heap.platform.libc_ver()[0] == "glibc")
    monkeypatch.setattr(heap.platform, "libc_ver", lambda: ("", ""))
    assert heap.heap_mmap_threshold_set() is False


def test_the_heap_is_trimmed_under_glibc_and_nothing_is_done_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a build frees inside glibc's heap stays resident until it is trimmed."""
    held = [bytes(2000 + n % 7) for n in range(40_000)]  # above pymalloc's 512 bytes: glibc's heap
    del held[::2]  # half of them freed between the others: free pages no heap top can give back
    assert heap.heap_trim() is (heap.platform.libc_ver()[0] == "glibc")
    monkeypatch.setattr(heap.platform, "libc_ver", lambda: ("", ""))
    assert heap.heap_trim() is False


@pytest.mark.parametrize("signal", [worker_init, worker_process_init])
def test_a_worker_and_its_pool_processes_set_it_when_they_start(signal: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def threshold_set() -> bool:
        calls.append("set")
        return True

    monkeypatch.setattr(tasks, "heap_mmap_threshold_set", threshold_set)
    signal.send(sender=None)
    assert calls == ["set"]


def test_build_release_sets_it_before_it_builds(ns_a: Namespace, monkeypatch: pytest.MonkeyPatch) -> None:
    """`manage.py build_release` builds in its own process, as a worker does (a full build at 100,000
    entries peaked at 1,002 MiB without it, 852 MiB with it)."""
    calls: list[str] = []

    def threshold_set() -> bool:
        calls.append("set")
        return True

    def build(**kwargs: Any) -> Any:
        calls.append("build")
        return release_build(**kwargs)

    monkeypatch.setattr(build_release, "heap_mmap_threshold_set", threshold_set)
    monkeypatch.setattr(build_release, "release_build", build)
    call_command("build_release", "--namespace", ns_a.slug, stdout=StringIO(), stderr=StringIO())
    assert calls == ["set", "build"]


@pytest.mark.django_db
def test_a_build_under_the_fixed_threshold_stores_the_same_bytes(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    tasks._heap_mmap_threshold_when_a_worker_starts()
    test_releases.test_same_inputs_render_byte_identical_artifacts(ns_a, editor, reviewer)


def _collected(held: object) -> bool:
    """Whether the collector's generations hold `held` (a frozen object is in none of them)."""
    return any(found is held for found in gc.get_objects())


def test_what_lives_before_a_build_is_left_out_of_the_collector_until_the_last_build_ends() -> None:
    """heap_frozen (issue 18 §3): nested or in two threads' builds, the outermost one unfreezes. (The
    freeze count is no measure: frozen objects freed meanwhile leave it.)"""
    before: list[object] = []
    assert gc.get_freeze_count() == 0 and _collected(before)
    with heap.heap_frozen():
        assert not _collected(before)
        with heap.heap_frozen():
            made: list[object] = []
            assert not _collected(before) and _collected(made)
        assert not _collected(before)
    assert gc.get_freeze_count() == 0 and _collected(before) and _collected(made)


def test_an_error_in_the_build_still_unfreezes() -> None:
    with pytest.raises(RuntimeError), heap.heap_frozen():
        raise RuntimeError("the build failed")
    assert gc.get_freeze_count() == 0


def _in_heap(address: int) -> bool:
    """Whether `address` lies in the process's [heap] (glibc's main arena), not in a mapping of its own."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.endswith("[heap]"):
            start, end = (int(bound, 16) for bound in line.split()[0].split("-"))
            if start <= address < end:
                return True
    return False


@pytest.mark.skipif(heap.platform.libc_ver()[0] != "glibc", reason="glibc's malloc only")
def test_inside_an_incremental_build_large_arrays_come_from_the_heap() -> None:
    """heap_unmapped: a large allocation reuses the heap's pages instead of a fresh mapping of its own
    (each first touched page by page); outside it, it is mapped again."""
    size = 48 * 1024 * 1024
    heap.heap_mmap_threshold_set()
    with heap.heap_unmapped():
        inside = np.empty(size, dtype=np.uint8)
        assert _in_heap(inside.ctypes.data)
        del inside
    outside = np.empty(size, dtype=np.uint8)
    assert not _in_heap(outside.ctypes.data)


@pytest.mark.django_db
def test_a_namespaces_first_build_maps_its_arrays_and_the_next_ones_take_them_from_the_heap(
    ns_a: Namespace, editor: Any, reviewer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full build keeps mapping its large buffers (its peak at 100,000 entries was 59 MiB higher from
    the heap), and so does a process's first build of a namespace (it reads its caches back); a build
    that follows a release with this process's caches, which patches, takes them from the heap."""
    entered: list[bool] = []
    real = releases.heap_unmapped

    def unmapped() -> Any:
        entered.append(True)
        return real()

    monkeypatch.setattr(releases, "heap_unmapped", unmapped)
    test_releases.publish_new(ns_a, editor, reviewer)
    assert entered == []
    releases._analysis_caches.pop(ns_a.pk, None)  # as a fresh worker: none held
    release_build(namespace_id=ns_a.pk)
    assert entered == []
    release_build(namespace_id=ns_a.pk)
    assert entered == [True]
