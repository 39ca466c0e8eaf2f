"""A release's entries packed into one buffer read back an entry at a time, equal to what was packed."""

from __future__ import annotations

import mmap
from dataclasses import replace
from pathlib import Path

import pytest

from knowledge.retrieval.container import ContainerError, pack_arrays
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.entry_table import EntryTable, pack_entries
from tests.retrieval.helpers import demo_records

RETIRED = Tombstone(id="EG-003", title="Old", retired_at="2026-08-01", reason="Merged.", replaced_by="EG-101")


def test_a_table_reads_back_every_entry_and_tombstone_as_packed() -> None:
    records = list(demo_records())
    records[0] = replace(records[0], body="", tags=("a", "b"), links=("EG-101",), paths=("src/**/*.py",))
    table = EntryTable(pack_entries(records, [RETIRED]))

    assert len(table) == len(records)
    assert list(table) == records
    assert [table[p] for p in range(len(records))] == records
    assert table[-1] == records[-1] and table[1:3] == tuple(records[1:3])
    assert table.tombstones == (RETIRED,)
    with pytest.raises(IndexError):
        table[len(records)]


def test_the_same_entries_pack_to_the_same_bytes() -> None:
    assert pack_entries(demo_records()) == pack_entries(list(demo_records()))


def test_a_table_reads_from_a_mapped_file(tmp_path: Path) -> None:
    path = tmp_path / "entries"
    path.write_bytes(pack_entries(demo_records()))
    with open(path, "rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    assert list(EntryTable(mapped)) == list(demo_records())


def test_other_containers_are_refused() -> None:
    with pytest.raises(ContainerError):
        EntryTable(pack_arrays({"kind": "index"}, {}))
