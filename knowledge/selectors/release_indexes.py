"""A release's compiled indexes, mapped from the files every process of a host shares (issue 18 §3-4).

The next build of the namespace patches them (knowledge.retrieval.patching) instead of compiling its
indexes in full. They are read from the stored release, not from anything a process kept, so the first
build after a worker starts is incremental too; a file is named as the web workers name theirs
(release_files.index_file_name), so a host holds one copy of a release's public index, which the
build that made it has usually written already (knowledge.services.release_materialise).
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path

from knowledge.models import Artifact, Release
from knowledge.retrieval.container import ContainerError
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render.release import INDEX_NAMES
from knowledge.selectors.artifacts import artifact_stream
from knowledge.selectors.release_files import index_file_name, release_file_mapped

logger = logging.getLogger(__name__)

SLICE_BYTES = 1024 * 1024


def _copy(release_id: int, name: str, size: int, path: Path) -> None:
    with open(path, "wb") as out:
        for part in artifact_stream(release_id=release_id, name=name, start=0, end=size - 1, slice_bytes=SLICE_BYTES):
            out.write(part)
    SearchIndex.serve_file(path)  # the copy the host's web workers map (with the impacts)


def release_indexes_mapped(*, release: Release) -> dict[str, SearchIndex]:
    """The release's indexes by file name; none when its files were pruned or cannot be mapped here (the
    next build is then a full one)."""
    if release.files_pruned_at is not None:
        return {}
    found: dict[str, SearchIndex] = {}
    stored = Artifact.objects.filter(release=release, name__in=sorted(INDEX_NAMES))
    for name, etag, size in stored.values_list("name", "etag", "size"):
        try:
            found[name] = SearchIndex.from_bytes(
                release_file_mapped(name=index_file_name(etag), produce=partial(_copy, release.pk, name, size))
            )
        except (ContainerError, Artifact.DoesNotExist, OSError) as error:  # a build never fails for want of a patch
            logger.warning("Release %s: index %s cannot be patched (%s); compiling in full", release.pk, name, error)
    return found
