"""The inputs hash (issue 18 §3): with the entries' digests kept between builds it is the hash computed
afresh, and any change to an entry, to the entries' order or to the rest of the snapshot changes it."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from knowledge.retrieval.snapshot import EntryDigests, EntryRecord, KeptByRecord, Snapshot
from tests.retrieval.helpers import demo_namespace, demo_records


def test_kept_digests_give_the_fresh_hash_and_every_change_changes_it() -> None:
    records = demo_records()
    snapshot = Snapshot(namespace=demo_namespace(), entries=records)
    kept = EntryDigests()
    first = snapshot.inputs_hash(kept)
    assert first == snapshot.inputs_hash() == snapshot.inputs_hash(kept)

    edited = replace(snapshot, entries=(replace(records[0], title=records[0].title + "!"), *records[1:]))
    reordered = replace(snapshot, entries=(*records[1:], records[0]))
    renamed = replace(snapshot, namespace=replace(snapshot.namespace, title="Another title"))
    hashes = {first} | {s.inputs_hash(kept) for s in (edited, reordered, renamed)}
    assert len(hashes) == 4
    assert edited.inputs_hash(kept) == edited.inputs_hash()  # the edited record is a new object: hashed again


def test_the_token_total_is_kept_once_summed_and_is_no_part_of_the_snapshots_content() -> None:
    records = demo_records()
    snapshot = Snapshot(namespace=demo_namespace(), entries=records)
    before = snapshot.inputs_hash()
    assert snapshot.total_tokens == sum(record.tokens for record in records) == snapshot.total_tokens
    assert snapshot.levels == {record.sensitivity for record in records}
    assert snapshot.inputs_hash() == before  # summed or not, the same hash, the same snapshot
    assert snapshot == Snapshot(namespace=demo_namespace(), entries=records)
    assert "total" not in repr(snapshot) and "levels" not in repr(snapshot)

    fewer = replace(snapshot, entries=records[1:])  # a new snapshot sums its own entries
    assert fewer.total_tokens == snapshot.total_tokens - records[0].tokens
    heavier = replace(snapshot, entries=(replace(records[0], tokens=records[0].tokens + 7), *records[1:]))
    assert heavier.total_tokens == snapshot.total_tokens + 7

    walks = []

    class Walked(tuple):
        def __iter__(self):
            walks.append(1)
            return super().__iter__()

    walked = replace(snapshot, entries=Walked(records))
    assert [walked.total_tokens for _ in range(3)] == [snapshot.total_tokens] * 3
    assert len(walks) == 1


@given(st.integers(0, 2**32), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans()), max_size=4))
def test_kept_values_are_the_made_ones_and_only_new_records_are_made(
    seed: int, rounds: list[tuple[int, int, bool]]
) -> None:
    """Call after call, whatever changed since the last (records edited in place, swapped, one dropped),
    each record gets the value made for it, and only records the last call did not hold are made again;
    a record listed twice (no snapshot lists one twice) still gets its own value."""
    rng = random.Random(seed)
    records = list(demo_records())
    made: list[EntryRecord] = []

    def make(record: EntryRecord) -> str:
        made.append(record)
        return record.title

    kept = KeptByRecord(make)
    assert kept.of(records) == [r.title for r in records] and made == records
    for number, (edits, swaps, dropped) in enumerate(rounds):
        changed = list(records)
        for position in rng.sample(range(len(changed)), min(edits, len(changed))):
            changed[position] = replace(changed[position], title=f"{changed[position].title} ({number})")
        for _ in range(swaps if len(changed) > 1 else 0):
            a, b = rng.sample(range(len(changed)), 2)
            changed[a], changed[b] = changed[b], changed[a]
        if dropped and len(changed) > 2:
            changed.pop(rng.randrange(len(changed)))
        made.clear()
        assert kept.of(changed) == [r.title for r in changed]
        assert {id(r) for r in made} == {id(r) for r in changed if not any(r is old for old in records)}
        records = changed
    made.clear()
    assert kept.of(tuple(records)) == [r.title for r in records] and made == []
    doubled = [*records[1:], records[1]]
    assert kept.of(doubled) == [r.title for r in doubled]
    assert kept.of([*doubled[:-1], records[0]]) == [*(r.title for r in doubled[:-1]), records[0].title]
