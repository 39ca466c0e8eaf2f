"""Release files written to disk as they render (issue 18, build memory) are the same files, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.retrieval.container import ContainerError, Run, pack_arrays, pack_pieces
from knowledge.retrieval.render import artifact
from knowledge.retrieval.render.artifact import RenderedArtifact, etag_of
from knowledge.retrieval.render.release import index_references, render_release
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


def test_byte_runs_packed_as_their_pieces_are_the_array_they_join() -> None:
    """A build cache's parts go to disk as the parts it holds (issue 18 §3): the file of the joined array."""
    arrays: dict[str, np.ndarray] = {"b": np.arange(5, dtype=np.int32), "z": np.zeros(0, dtype=np.int64)}
    run = [b"abc", b"", "数据".encode(), b"x" * 17]
    joined = {**arrays, "c": np.frombuffer(b"".join(run), dtype=np.uint8), "d": np.zeros(0, dtype=np.uint8)}
    pieces = list(pack_pieces({"k": 1}, arrays | {"c": Run.of_bytes(run), "d": Run.of_bytes([])}))
    assert b"".join(pieces) == pack_arrays({"k": 1}, joined)
    assert all(piece is not b"".join(run) for piece in pieces) and any(piece is run[3] for piece in pieces)


def test_a_typed_run_made_as_it_is_written_is_the_array_it_joins() -> None:
    """A build cache's term ids go to disk document by document (issue 18 §3): the file of the joined array."""
    parts = [np.arange(3, dtype=np.int32), np.zeros(0, dtype=np.int32), np.array([7, -1], dtype=np.int32)]
    run = Run("<i4", 5, (part.data for part in parts))
    assert b"".join(pack_pieces({}, {"ids": run})) == pack_arrays({}, {"ids": np.concatenate(parts)})


def test_a_run_that_gives_other_than_its_count_is_refused() -> None:
    """A run whose pieces disagree with the header it wrote would leave a file whose arrays are misplaced."""
    with pytest.raises(ContainerError, match="'c' gave 3 bytes where its header says 4"):
        list(pack_pieces({}, {"c": Run("|u1", 4, iter([b"abc"]))}))


def test_the_index_references_of_a_spooled_release_are_read_without_reading_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manifest's reference statistics come from the index's header, mapped: at 100,000 entries a
    fresh read of the whole index (and its rows taken apart) was the peak of that step."""
    snapshot = Snapshot(namespace=demo_namespace(), entries=demo_records())
    expected = index_references(render_release(snapshot, STAMP))
    assert expected  # the statistics are there to read
    monkeypatch.setattr(artifact, "SPOOL_ABOVE", 0)
    spooled = render_release(snapshot, STAMP)

    def unread(self: RenderedArtifact) -> bytes:
        raise AssertionError(f"{self.name} was read whole")

    monkeypatch.setattr(RenderedArtifact, "content", property(unread))
    assert index_references(spooled) == expected


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
