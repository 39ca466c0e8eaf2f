"""A rendered release file: small ones as bytes, large ones written to a temporary file as they render.

A build at 100,000 entries renders about 270 MB of files (context.json and the index alone are over
100 MB each). Held as bytes, with the copies joining them makes, they were a third of a build's peak
memory; written piece by piece to an unnamed temporary file (deleted when the artifact goes), a file
costs the build the piece being written, and each later step (validation, storage) reads the file a
slice or a file at a time. The SHA-256 (the ETag) and the size are computed while writing.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import tempfile
import weakref
from collections.abc import Iterable, Iterator
from typing import IO

from knowledge.retrieval.digests import sha256_hex

SPOOL_ABOVE = 1024 * 1024  # files larger than this are written to disk (one storage chunk at most stays in memory)
SLICE = 1024 * 1024


def etag_of(content: bytes) -> str:
    """A strong ETag that is a hash of the bytes (seed §10)."""
    return '"' + sha256_hex(content)[:32] + '"'


def _etag(digest: hashlib._Hash) -> str:
    return '"' + digest.hexdigest()[:32] + '"'


class RenderedArtifact:
    """One file of a release: `content` is its bytes (read from disk when it was spooled)."""

    __slots__ = ("__weakref__", "_file", "_inline", "content_type", "etag", "name", "size")

    def __init__(self, name: str, content_type: str, content: bytes) -> None:
        self.name, self.content_type = name, content_type
        self._inline: bytes | None = content
        self._file: IO[bytes] | None = None
        self.size = len(content)
        self.etag = etag_of(content)

    @classmethod
    def written(cls, name: str, content_type: str, pieces: Iterable[bytes | memoryview]) -> RenderedArtifact:
        """The file made of `pieces` in order, kept in memory up to SPOOL_ABOVE bytes, else on disk."""
        digest, held, size = hashlib.sha256(), bytearray(), 0
        spool: IO[bytes] | None = None
        for piece in pieces:
            digest.update(piece)
            size += len(piece)
            if spool is None:
                held += piece
                if len(held) > SPOOL_ABOVE:
                    spool = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the artifact)
                    spool.write(held)
                    held = bytearray()
            else:
                spool.write(piece)
        artifact = cls.__new__(cls)
        artifact.name, artifact.content_type, artifact.size, artifact.etag = name, content_type, size, _etag(digest)
        artifact._inline, artifact._file = (None, spool) if spool is not None else (bytes(held), None)
        if spool is not None:
            spool.flush()
            weakref.finalize(artifact, spool.close)  # the file goes with the artifact
        return artifact

    @property
    def spooled(self) -> bool:
        return self._file is not None

    @property
    def content(self) -> bytes:
        """The whole file (a fresh read of a spooled one: callers hold it only as long as they need it)."""
        if self._inline is not None:
            return self._inline
        return self._read(0, self.size)

    def mapped(self) -> bytes | mmap.mmap:
        """The file mapped read-only (a spooled one; else its bytes): its pages are resident only once
        read, and can be let go (madvise) where a fresh read (`content`) would hold all of them."""
        if self._inline is not None:
            return self._inline
        assert self._file is not None
        return mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)

    def _read(self, start: int, count: int) -> bytes:
        assert self._file is not None
        pieces, fd = [], self._file.fileno()
        while count > 0:
            piece = os.pread(fd, count, start)
            if not piece:
                raise OSError(f"{self.name}: the spooled file ended early")
            pieces.append(piece)
            start, count = start + len(piece), count - len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def slices(self, size: int = SLICE) -> Iterator[bytes]:
        """The file `size` bytes at a time."""
        if self._inline is not None:
            view = memoryview(self._inline)
            for start in range(0, self.size, size):
                yield view[start : start + size].tobytes()
            return
        for start in range(0, self.size, size):
            yield self._read(start, min(size, self.size - start))

    def __repr__(self) -> str:
        return f"RenderedArtifact({self.name!r}, {self.content_type!r}, {self.size} bytes)"
