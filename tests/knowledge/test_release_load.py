"""Loading a release from its mapped entry table parses no entry, and loads what the entries themselves give."""

from __future__ import annotations

from dataclasses import replace

from knowledge.retrieval.entry_table import EntryColumns, EntryTable, pack_entries
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp, Snapshot
from knowledge.retrieval.tiers import packable
from knowledge.selectors.serving import LoadedRelease, release_in_memory
from tests.retrieval.helpers import demo_namespace, demo_records

STAMP = ReleaseStamp(sequence=4, knowledge_version="1.0.3", revision="2026-09-02", generated_at="2026-09-02T10:00:00Z")
PATHS = ("src/api/users.py", "docs/guide.md", "db/001.sql", "README.md")


def varied() -> tuple[EntryRecord, ...]:
    """The demo entries with what loading reads varied: globs, layers, confidences, expired and later dates."""
    records = list(demo_records())
    records[0] = replace(records[0], paths=("src/**/*.py",), confidence=0.8)
    records[1] = replace(records[1], valid_until="2026-01-01", layer="base")  # expired on STAMP.revision
    records[2] = replace(records[2], paths=("*.sql", "docs/**"), layer="base", confidence=0.9)
    records[3] = replace(records[3], valid_until="2099-01-01", paths=("docs/**",), confidence=0.95)
    records[4] = replace(records[4], layer="other", paths=("**/*.md",))
    records[5] = replace(records[5], valid_until="2026-09-01", paths=("src/**",))  # expired too
    return tuple(records)


class CountingTable(EntryTable):
    """An entry table that counts the entries it parses."""

    parsed = 0

    def _record(self, position: int) -> EntryRecord:
        CountingTable.parsed += 1
        return super()._record(position)


def load(entries: tuple[EntryRecord, ...] | EntryTable) -> LoadedRelease:
    records = varied()
    index = SearchIndex.compile([e.as_document() for e in packable(records, revision=STAMP.revision)])
    return release_in_memory(
        snapshot=Snapshot(namespace=demo_namespace(language="en"), entries=entries), stamp=STAMP, index=index
    )


def test_the_table_carries_the_columns_of_its_entries() -> None:
    records = varied()
    assert EntryTable(pack_entries(records)).columns == EntryColumns.of(records)


def test_a_release_loads_from_its_table_without_parsing_an_entry_and_as_from_its_entries() -> None:
    records = varied()
    CountingTable.parsed = 0
    from_table = load(CountingTable(pack_entries(records)))
    assert CountingTable.parsed == 0

    from_records = load(records)
    assert from_table.by_id == from_records.by_id
    assert from_table.numbered == from_records.numbered
    assert from_table.nearest("EG-050") == from_records.nearest("EG-050")
    assert len(from_table.view.entries) == len(records) - 2  # the expired two are left out of packs
    assert list(from_table.view.entries) == list(from_records.view.entries)
    assert from_table.view.entries[1:3] == tuple(from_records.view.entries[1:3])
    for path in PATHS:
        found = from_table.view.path_scope().applicable([path])
        assert found == from_records.view.path_scope().applicable([path]), path
    table_scope, records_scope = from_table.view.path_scope(), from_records.view.path_scope()
    assert table_scope.scoped.tolist() == records_scope.scoped.tolist()
    assert any(table_scope.applicable([path]) for path in PATHS)
