"""A release's entries packed into one buffer read back an entry at a time, equal to what was packed."""

from __future__ import annotations

import mmap
from dataclasses import replace
from pathlib import Path

import pytest

from knowledge.retrieval import entry_table
from knowledge.retrieval.container import ContainerError, pack_arrays
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.entry_table import EntryTable, TableReuse, entries_file_write, pack_entries
from knowledge.retrieval.snapshot import EntryRecord
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


def _written(path: Path, entries: list[EntryRecord], reuse: TableReuse) -> bytes:
    entries_file_write(path, entries, [RETIRED], reuse=reuse)
    reuse.kept(path, entries)
    return path.read_bytes()


def test_a_table_copies_only_the_records_of_the_same_entry_objects_from_the_last_one(tmp_path: Path) -> None:
    before = list(demo_records())
    reuse = TableReuse()
    assert _written(tmp_path / "1", before, reuse) == pack_entries(before, [RETIRED])
    assert reuse.reused == 0

    after = list(before)
    after[2] = replace(after[2], body=after[2].body + " Changed.")  # same ID, new content
    after[5] = replace(after[5], category="moved")  # same ID and text, another category
    del after[8]  # retired: every later record sits elsewhere in the new table
    after.append(replace(before[0], id="EG-999", title="New"))
    assert _written(tmp_path / "2", after, reuse) == pack_entries(after, [RETIRED])
    assert reuse.reused == len(after) - 3

    assert _written(tmp_path / "empty", [], reuse) == pack_entries([], [RETIRED])
    reuse.kept(tmp_path / "2", after)
    equal = [replace(entry) for entry in after]  # equal entries, other objects: serialised, not copied
    assert _written(tmp_path / "3", equal, reuse) == pack_entries(equal, [RETIRED])
    assert reuse.reused == 0


def test_entries_that_changed_places_are_copied_from_where_they_were(tmp_path: Path) -> None:
    """The same count of entries, two swapped and one edited: the swapped ones' records are found in the
    kept table by identity and copied, over three tables in a row."""
    entries = list(demo_records())
    reuse = TableReuse()
    _written(tmp_path / "1", entries, reuse)
    for number in (2, 3):
        entries[1], entries[6] = entries[6], entries[1]
        entries[number] = replace(entries[number], body=f"{entries[number].body} Changed {number}.")
        assert _written(tmp_path / str(number), entries, reuse) == pack_entries(entries, [RETIRED])
        assert reuse.reused == len(entries) - 1


def test_a_table_copied_from_the_last_one_a_slice_at_a_time_is_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs copied from the kept table's mapping are written a slice at a time, its pages let go after each."""
    monkeypatch.setattr(entry_table, "COPY_BYTES", 100)
    monkeypatch.setattr(entry_table, "JOIN_BYTES", 300)
    before = list(demo_records())
    reuse = TableReuse()
    _written(tmp_path / "1", before, reuse)
    after = list(before)
    after[3] = replace(after[3], body=after[3].body + " Changed.")
    assert _written(tmp_path / "2", after, reuse) == pack_entries(after, [RETIRED])
    assert reuse.reused == len(after) - 1


@pytest.mark.parametrize("damage", [b"", b"not a table", None])
def test_a_table_whose_last_one_is_gone_or_damaged_serialises_its_records(tmp_path: Path, damage: bytes | None) -> None:
    entries = list(demo_records())
    reuse = TableReuse()
    _written(tmp_path / "1", entries, reuse)
    if damage is None:
        (tmp_path / "1").unlink()
    else:
        (tmp_path / "1").write_bytes(damage)
    assert _written(tmp_path / "2", entries, reuse) == pack_entries(entries, [RETIRED])
    assert reuse.reused == 0


@pytest.mark.parametrize("keep", [0, 700])
def test_records_past_what_a_table_keeps_are_serialised_again_to_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch, keep: int
) -> None:
    """The records are written after the header that holds their offsets: those past KEEP_BYTES are
    serialised a second time, and the table is the same bytes."""
    records = list(demo_records())
    whole = pack_entries(records, [RETIRED])
    monkeypatch.setattr(entry_table, "KEEP_BYTES", keep)
    assert pack_entries(records, [RETIRED]) == whole


def test_a_record_that_serialises_otherwise_the_second_time_fails_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's offsets are written before the records: a record of another length on the second
    pass would make every later offset lie, so the table is refused instead."""
    monkeypatch.setattr(entry_table, "KEEP_BYTES", 0)
    calls = iter(range(1_000))
    fields_of = entry_table._fields_of
    monkeypatch.setattr(entry_table, "_fields_of", lambda entry: (*fields_of(entry)[:-1], next(calls)))
    with pytest.raises(ValueError, match="bytes, not the"):
        pack_entries(list(demo_records())[:12])
