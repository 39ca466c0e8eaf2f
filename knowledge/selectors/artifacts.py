"""Reading release files from storage: a file is its chunks in order (knowledge.services.release_storage).

Whole files are read in one query, a chunk at a time into their file's buffer (one file at a time in
memory); byte ranges read only the chunks they cover: a slice of a larger chunk, or a run of small
chunks (8 KiB on average, knowledge.retrieval.chunks) of at most a slice's bytes, per query.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import BinaryField
from django.db.models.functions import Substr

from knowledge.models import Artifact, ArtifactBlob

PRUNED = "The files of release {release_id} were pruned."


@dataclass(frozen=True, slots=True)
class _Part:
    offset: int
    blob_id: int
    size: int


def _parts(release_id: int, names: Iterable[str]) -> dict[str, tuple[int, list[_Part]]]:
    """Each named file's size and parts, in order (one query); a pruned file raises DoesNotExist."""
    files: dict[str, tuple[int, list[_Part]]] = {}
    rows = Artifact.objects.filter(release_id=release_id, name__in=list(names)).order_by("name", "parts__position")
    for name, size, offset, blob_id, chunk_size in rows.values_list(
        "name", "size", "parts__offset", "parts__blob_id", "parts__blob__size"
    ):
        parts = files.setdefault(name, (size, []))[1]
        if blob_id is not None:
            parts.append(_Part(offset, blob_id, chunk_size))
    for size, parts in files.values():
        if size and not parts:
            raise Artifact.DoesNotExist(PRUNED.format(release_id=release_id))
    return files


def artifact_contents(*, release_id: int, names: Iterable[str]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each named file of the release that exists, by name, in one query: the chunks
    arrive one at a time, in order, into their file's buffer, so one file at a time is in memory."""
    rows = Artifact.objects.filter(release_id=release_id, name__in=list(names)).order_by("name", "parts__position")
    current: tuple[str, bytearray] | None = None
    for name, size, offset, chunk in rows.values_list("name", "size", "parts__offset", "parts__blob__content").iterator(
        chunk_size=1
    ):
        if current is None or current[0] != name:
            if current is not None:
                yield current[0], bytes(current[1])
            if chunk is None and size:
                raise Artifact.DoesNotExist(PRUNED.format(release_id=release_id))
            current = (name, bytearray(size))
        if chunk is not None:
            current[1][offset : offset + len(chunk)] = chunk
    if current is not None:
        yield current[0], bytes(current[1])


def artifact_content(*, release_id: int, name: str) -> bytes:
    """The whole file; Artifact.DoesNotExist when the release has no such file or it was pruned."""
    for _, content in artifact_contents(release_id=release_id, names=[name]):
        return content
    raise Artifact.DoesNotExist(f"Release {release_id} has no file {name}.")


def artifact_stream(*, release_id: int, name: str, start: int, end: int, slice_bytes: int) -> Iterator[bytes]:
    """Bytes `start`..`end` (inclusive) in slices of at most `slice_bytes`, one query each. Which chunks
    it reads is settled here, before the answer starts (a pruned or missing file fails now)."""
    found = _parts(release_id, [name])
    if name not in found:
        raise Artifact.DoesNotExist(f"Release {release_id} has no file {name}.")
    return _slices(found[name][1], start, end, slice_bytes)


def _slices(parts: list[_Part], start: int, end: int, slice_bytes: int) -> Iterator[bytes]:
    run: list[_Part] = []
    held = 0  # the run's bytes
    for part in parts:
        if part.offset > end or part.offset + part.size <= start:
            continue
        if run and (part.size > slice_bytes or held + part.size > slice_bytes):
            yield _run_read(run, start, end)
            run, held = [], 0
        if part.size <= slice_bytes:
            run.append(part)
            held += part.size
            continue
        position, last = max(start, part.offset), min(end, part.offset + part.size - 1)
        while position <= last:
            length = min(slice_bytes, last - position + 1)
            inside = Substr("content", position - part.offset + 1, length, output_field=BinaryField())  # from 1
            yield bytes(ArtifactBlob.objects.filter(pk=part.blob_id).values_list(inside, flat=True).get())
            position += length
    if run:
        yield _run_read(run, start, end)


def _run_read(run: list[_Part], start: int, end: int) -> bytes:
    """The bytes `start`..`end` (inclusive) hold of consecutive chunks, read whole in one query."""
    contents = dict(ArtifactBlob.objects.filter(pk__in={p.blob_id for p in run}).values_list("pk", "content"))
    data = b"".join(bytes(contents[p.blob_id]) for p in run)
    first = run[0].offset
    return data[max(start, first) - first : min(end, run[-1].offset + run[-1].size - 1) - first + 1]
