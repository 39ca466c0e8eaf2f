"""Release files are made once per host and mapped by every process that needs them."""

from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from knowledge.selectors.release_files import PRUNE_AFTER_SECONDS, release_file_mapped


@pytest.fixture
def files(settings: Any, tmp_path: Path) -> Path:
    settings.EVERGREEN = replace(settings.EVERGREEN, release_files_dir=tmp_path / "files")
    return tmp_path / "files"


def test_a_file_is_made_once_and_mapped_by_every_later_caller(files: Path) -> None:
    made: list[Path] = []

    def produce(path: Path) -> None:
        made.append(path)
        path.write_bytes(b"index bytes")

    first = release_file_mapped(name="abc.index", produce=produce)
    second = release_file_mapped(name="abc.index", produce=produce)

    assert first[:] == second[:] == b"index bytes"
    assert len(made) == 1 and made[0] != files / "abc.index"  # written aside, then renamed into place
    assert sorted(p.name for p in files.iterdir() if not p.name.startswith(".")) == ["abc.index"]


def test_a_failed_make_leaves_no_file_behind(files: Path) -> None:
    def broken(path: Path) -> None:
        path.write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        release_file_mapped(name="abc.entries", produce=broken)
    assert [p.name for p in files.iterdir() if p.name != ".lock"] == []


def _make_in_another_process(directory: str, started: Any, release: Any) -> None:
    import django
    from django.conf import settings

    django.setup()
    settings.EVERGREEN = replace(settings.EVERGREEN, release_files_dir=Path(directory))

    def produce(path: Path) -> None:
        started.set()
        assert release.wait(30)
        path.write_bytes(b"made by the other process")

    release_file_mapped(name="shared.index", produce=produce)


def test_a_file_another_process_makes_is_mapped_here_not_made_again(files: Path) -> None:
    context = multiprocessing.get_context("spawn")
    started, release = context.Event(), context.Event()
    other = context.Process(target=_make_in_another_process, args=(str(files), started, release))
    other.start()
    assert started.wait(60)
    release.set()

    def never(path: Path) -> None:
        raise AssertionError("made twice")

    assert release_file_mapped(name="shared.index", produce=never)[:] == b"made by the other process"
    other.join(60)
    assert other.exitcode == 0


def test_an_old_scratch_directory_is_removed_with_the_old_files_and_breaks_nothing(files: Path) -> None:
    files.mkdir(parents=True)
    scratch = files / "tmpk3j2x9"  # what a worker killed while making an entry table left, before partials
    scratch.mkdir()
    (scratch / "context.json").write_bytes(b"{}")
    os.utime(scratch, (time.time() - PRUNE_AFTER_SECONDS - 60,) * 2)

    def produce(path: Path) -> None:
        path.write_bytes(b"index bytes")

    release_file_mapped(name="abc.index", produce=produce)

    assert sorted(os.listdir(files)) == [".lock", "abc.index"]


def _filled(path: Path, *, size: int) -> None:
    path.write_bytes(b"x" * size)


def test_past_its_byte_budget_the_least_recently_used_files_go_never_the_one_just_made(
    files: Path, settings: Any
) -> None:
    settings.EVERGREEN = replace(settings.EVERGREEN, release_files_max_bytes=250)
    files.mkdir(parents=True)
    for minutes, name in [(10, "used.index"), (20, "older.index"), (30, "oldest.entries")]:
        (files / name).write_bytes(b"x" * 100)
        os.utime(files / name, (time.time() - 60 * minutes,) * 2)

    release_file_mapped(name="new.index", produce=partial(_filled, size=100))
    assert sorted(p.name for p in files.iterdir() if p.name != ".lock") == ["new.index", "used.index"]

    release_file_mapped(name="huge.index", produce=partial(_filled, size=1000))
    assert sorted(p.name for p in files.iterdir() if p.name != ".lock") == ["huge.index"]


def test_room_for_a_new_file_is_made_before_it_is_written(files: Path, settings: Any) -> None:
    """Past the budget, the least recently used files go before the new one is written, as many as the
    largest file of its kind takes: the directory stays within its budget while the file is written, and
    the pages of the files dropped are free for the new one's (fresh ones cost several times as much)."""
    settings.EVERGREEN = replace(settings.EVERGREEN, release_files_max_bytes=350)
    files.mkdir(parents=True)
    for minutes, name, size in [(10, "last.index", 100), (20, "older.index", 100), (30, "oldest.entries", 100)]:
        (files / name).write_bytes(b"x" * size)
        os.utime(files / name, (time.time() - 60 * minutes,) * 2)
    seen: list[list[str]] = []

    def produce(path: Path) -> None:
        seen.append(sorted(p.name for p in files.iterdir() if p.name != ".lock" and p != path))
        _filled(path, size=100)

    release_file_mapped(name="new.index", produce=produce)
    assert seen == [["last.index", "older.index"]]  # 300 held and 100 for the largest .index: the oldest went
    release_file_mapped(name="next.entries", produce=produce)
    assert seen[1] == ["last.index", "new.index", "older.index"]  # no .entries left to size it: nothing went first
    assert sorted(p.name for p in files.iterdir() if p.name != ".lock") == ["last.index", "new.index", "next.entries"]
