"""``python -m tests.knowledge.saving_process <what> <directory>``: a process that saves a build cache or
makes a release file in `directory`, says ``writing`` on stdout half-way through the file and waits for a
line on stdin before it finishes (a test kills it there, or lets it finish)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import django


def _pause() -> None:
    sys.stdout.write("writing\n")
    sys.stdout.flush()
    sys.stdin.readline()


def _build_cache(directory: Path) -> None:
    from django.conf import settings

    from knowledge.retrieval.render.analysis_cache import AnalysisCache
    from knowledge.retrieval.render.parts import PartsCache
    from knowledge.services import build_cache

    settings.EVERGREEN = replace(settings.EVERGREEN, build_cache_dir=directory)
    pack_pieces = build_cache.pack_pieces

    def paused(meta: Any, arrays: Any) -> Iterator[bytes | memoryview]:
        pieces = iter(pack_pieces(meta, arrays))
        yield next(pieces)
        _pause()
        yield from pieces

    build_cache.pack_pieces = paused
    build_cache.build_cache_save(namespace_id=1, records={}, analysis=AnalysisCache(), parts=PartsCache())


def _release_file(directory: Path) -> None:
    from django.conf import settings

    from knowledge.selectors.release_files import release_file_made

    settings.EVERGREEN = replace(settings.EVERGREEN, release_files_dir=directory)

    def produce(path: Path) -> None:
        with open(path, "wb") as out:
            out.write(b"index ")
            out.flush()
            _pause()
            out.write(b"bytes")

    release_file_made(name="abc.index", produce=produce)


if __name__ == "__main__":
    django.setup()
    what, directory = sys.argv[1], Path(sys.argv[2])
    {"build-cache": _build_cache, "release-file": _release_file}[what](directory)
