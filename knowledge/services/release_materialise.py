"""The build writes its release's index and entry table where its host's web workers map them.

Without this, the first web worker to switch to a new release read the index and context.json from
storage and ran a process to make the entry table (1–3 s at 10,000 entries, most of a switch at
100,000). The build holds both already: the index's bytes, and the public entries context.json was
rendered from (the table is the same bytes either way: tests/knowledge/test_release_materialise.py).
It writes them before activating the release, so when workers see the switch the files are there.
The table copies the records of unchanged entries from the last table the process wrote (TableReuse).
The index file is written first, from the compiled index while the render still holds it
(release_index_served): made from the stored bytes instead, it took format 4's rows apart into fresh
posting columns to transpose the forward index from, the peak of a full build at 100,000 entries
(1,022 MiB); the compiled index holds those columns already.
The build's checks then read the copy the workers will map (release_index_mapped).

Best effort: a host without the directory, a full disk or a worker on another host loses nothing but
time, as the worker that needs a missing file makes it from storage (knowledge.selectors.release_files).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from knowledge.retrieval.entry_table import TableReuse, entries_file_write
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render.release import CONTEXT_JSON, SEARCH_INDEX, SITE_JSON, RenderedArtifact
from knowledge.retrieval.snapshot import Snapshot
from knowledge.selectors.release_files import (
    entries_file_name,
    index_file_name,
    release_file_made,
    release_file_mapped,
)

logger = logging.getLogger(__name__)


def release_files_write(
    *, public: Snapshot, artifacts: Sequence[RenderedArtifact], reuse: TableReuse | None = None
) -> None:
    """Write the files of the release rendered as `artifacts` from `public` (the public view); `reuse`:
    the namespace's last table written here, which the new one copies unchanged records from."""
    by_name = {artifact.name: artifact for artifact in artifacts}
    index = by_name[SEARCH_INDEX]
    entries = entries_file_name(site_etag=by_name[SITE_JSON].etag, context_etag=by_name[CONTEXT_JSON].etag)
    try:
        release_file_made(name=index_file_name(by_name[SEARCH_INDEX].etag), produce=partial(_write, index))
        table = release_file_made(
            name=entries,
            produce=partial(entries_file_write, entries=public.entries, tombstones=public.tombstones, reuse=reuse),
        )
        if reuse is not None:
            reuse.kept(table, public.entries)
    except OSError as error:
        if reuse is not None:
            reuse.forget()
        logger.warning("The release's files were not written for this host's web workers (%s); they make them", error)


def release_index_served(artifact: RenderedArtifact, index: SearchIndex) -> None:
    """Write the copy of the rendered index `artifact` this host's workers map, from `index`, the compiled
    index it was rendered from (the same bytes as from its stored ones: SearchIndex.served_pieces)."""
    try:
        release_file_made(name=index_file_name(artifact.etag), produce=partial(_served_write, index))
    except OSError as error:
        logger.warning("The release's index was not written for this host's web workers (%s)", error)


def release_index_mapped(index: RenderedArtifact) -> SearchIndex:
    """The rendered index `index` loaded from the file this host's workers will map, written now if it
    is missing: its posting columns and impacts are the file's pages, where loading the stored bytes
    for each of the build's checks copied them out of the rows and derived the impacts again (about
    0.05 s of CPU and a private 130 MB for each check at 100,000 entries: validate and metrics fell from
    0.19-0.27 and 0.13 s to 0.14 and 0.08). From the stored bytes when the file cannot be written."""
    try:
        mapping = release_file_mapped(name=index_file_name(index.etag), produce=partial(_write, index))
    except OSError as error:
        logger.warning("The release's index is checked from its stored bytes (%s)", error)
        return SearchIndex.from_bytes(index.mapped())
    return SearchIndex.from_bytes(mapping)


def _served_write(index: SearchIndex, path: Path) -> None:
    with open(path, "wb") as out:
        for piece in index.served_pieces():
            out.write(piece)


def _write(index: RenderedArtifact, path: Path) -> None:
    """The index as the workers map it: with the impacts its stored format derives (SearchIndex.served_write),
    written once from the build's spooled copy, whose pages are let go as it is read."""
    SearchIndex.served_write(index.mapped(), path)
