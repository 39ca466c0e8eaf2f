"""A process killed (SIGKILL) while writing a build cache or a release file leaves its temporary file;
the next worker to start, or the next save in that directory, removes it, and never a live writer's."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from celery.signals import worker_process_init
from django.conf import settings

from knowledge import tasks
from knowledge.retrieval.render.analysis_cache import AnalysisCache
from knowledge.retrieval.render.parts import PartsCache
from knowledge.selectors.release_files import release_file_made
from knowledge.services import build_cache
from tests.worker import ROOT

assert tasks  # what a worker imports: its handlers of worker_process_init


@pytest.fixture(autouse=True)
def directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        settings,
        "EVERGREEN",
        replace(settings.EVERGREEN, build_cache_dir=tmp_path / "build-cache", release_files_dir=tmp_path / "files"),
    )


@contextmanager
def writing(what: str, directory: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process half-way through writing a file in `directory`: it said so on its stdout."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base", "EVERGREEN_DEBUG": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.knowledge.saving_process", what, str(directory)],
        cwd=ROOT,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        said = process.stdout.readline()  # blocks until the file is half written (or the process ended)
        assert said == b"writing\n", process.stderr.read().decode()[-3000:]
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for pipe in (process.stdin, process.stdout, process.stderr):
            pipe.close()


def killed_while_writing(what: str, directory: Path) -> list[str]:
    with writing(what, directory) as process:
        before = sorted(os.listdir(directory))
        process.kill()  # SIGKILL: no handler, no finally of the writer runs
    assert sorted(os.listdir(directory)) == before
    return before


def other_file(path: Path) -> None:
    path.write_bytes(b"other")


def save_empty_caches(namespace_id: int) -> None:
    build_cache.build_cache_save(namespace_id=namespace_id, records={}, analysis=AnalysisCache(), parts=PartsCache())


@pytest.mark.parametrize("then", ["a worker process starts", "the next save"])
def test_a_build_cache_writer_killed_mid_save_leaves_a_file_that_is_removed_later(then: str) -> None:
    directory = settings.EVERGREEN.build_cache_dir
    left = killed_while_writing("build-cache", directory)
    assert len(left) == 1 and left[0] != build_cache.cache_path(1).name  # the temporary file, left behind

    if then == "a worker process starts":
        worker_process_init.send(sender=None)
        assert os.listdir(directory) == []
    else:
        save_empty_caches(2)
        assert os.listdir(directory) == [build_cache.cache_path(2).name]


def test_a_release_file_writer_killed_mid_write_leaves_a_file_the_next_one_made_removes() -> None:
    directory = settings.EVERGREEN.release_files_dir
    left = [name for name in killed_while_writing("release-file", directory) if name != ".lock"]
    assert len(left) == 1 and "abc.index" in left[0]

    release_file_made(name="def.index", produce=other_file)

    assert sorted(os.listdir(directory)) == [".lock", "def.index"]


@pytest.mark.parametrize("what", ["build-cache", "release-file"])
def test_a_live_writers_file_is_kept_and_renamed_into_place(what: str) -> None:
    directory = settings.EVERGREEN.build_cache_dir if what == "build-cache" else settings.EVERGREEN.release_files_dir
    with writing(what, directory) as process:
        partial = [name for name in os.listdir(directory) if name != ".lock"]
        worker_process_init.send(sender=None)
        if what == "build-cache":  # (a release file is made under the directory's lock the writer holds)
            save_empty_caches(2)
        assert set(partial) <= set(os.listdir(directory))  # the writer is alive: its file stays

        stdin: Any = process.stdin
        stdin.write(b"go on\n")
        stdin.flush()
        assert process.wait(60) == 0

    kept = sorted(name for name in os.listdir(directory) if name != ".lock")
    if what == "build-cache":
        assert kept == [build_cache.cache_path(1).name, build_cache.cache_path(2).name]
    else:
        assert kept == ["abc.index"] and (directory / "abc.index").read_bytes() == b"index bytes"
