"""Release files written to disk as they render (issue 18, build memory) are the same files, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.retrieval.container import pack_arrays, pack_pieces
from knowledge.retrieval.render import artifact
from knowledge.retrieval.render.artifact import RenderedArtifact, etag_of
from knowledge.retrieval.render.release import render_release
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from tests.retrieval.helpers import demo_namespace, demo_records

STAMP = ReleaseStamp(sequence=2, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")


def test_a_file_written_in_pieces_reads_back_whole_with_the_etag_and_size_of_its_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(artifact, "SPOOL_ABOVE", 10)
    pieces = [b"abc", memoryview(b"defghijklmnop"), b"", "数据".encode()]
    whole = b"".join(pieces)
    written = RenderedArtifact.written("f.txt", "text/plain", pieces)
    assert written.spooled
    assert (written.content, written.size, written.etag) == (whole, len(whole), etag_of(whole))
    assert b"".join(written.slices(4)) == whole and all(len(s) == 4 for s in list(written.slices(4))[:-1])
    assert written.mapped()[:] == whole  # mapped read-only (validation and metrics load the index so)

    small = RenderedArtifact.written("g.txt", "text/plain", [b"abc"])
    assert not small.spooled and small.content == b"abc" and small.etag == RenderedArtifact("g", "t", b"abc").etag
    assert small.mapped() == b"abc"


def test_an_index_packed_a_piece_at_a_time_is_the_packed_index() -> None:
    arrays: dict[str, np.ndarray] = {
        "b": np.arange(5, dtype=np.int32),
        "a": np.array([[1.5, 2.0]], dtype=np.float64),
        "e": np.zeros(0),
    }
    assert b"".join(pack_pieces({"k": "数"}, arrays)) == pack_arrays({"k": "数"}, arrays)


def test_a_release_rendered_with_every_file_spooled_equals_one_held_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = Snapshot(namespace=demo_namespace(), entries=demo_records())
    in_memory = render_release(snapshot, STAMP)
    assert not any(a.spooled for a in in_memory)
    monkeypatch.setattr(artifact, "SPOOL_ABOVE", 0)
    spooled = render_release(snapshot, STAMP)
    assert all(a.spooled for a in spooled if a.size)
    assert [(a.name, a.content_type, a.etag, a.content) for a in spooled] == [
        (a.name, a.content_type, a.etag, a.content) for a in in_memory
    ]
