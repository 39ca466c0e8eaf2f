"""knowledge.retrieval.manifests: a manifest stored as its delta against the previous release's (pure)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from knowledge.retrieval.manifests import DELTA_MIN, manifest_applied, manifest_delta, manifest_whole_at


def manifest(entries: list[tuple[str, int]], retired: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "entries": [
            {"id": entry_id, "version": version, "hash": f"h{entry_id}{version}"} for entry_id, version in entries
        ],
        "retired": list(retired),
        "index": {"search.index": {"documents": len(entries)}},
    }


def test_a_delta_holds_only_what_changed_and_gives_the_manifest_back() -> None:
    before = manifest([(f"EG-{n:03d}", 1) for n in range(1, 101)])
    entries = [(f"EG-{n:03d}", 2 if n == 7 else 1) for n in range(1, 101) if n != 50]
    after = manifest([("AA-001", 1), *entries[:10], ("EG-010a", 1), ("EG-010b", 1), *entries[10:]], ("EG-050",))

    delta = manifest_delta(before, after)

    assert delta is not None
    assert [item["id"] for item in delta["changed"]] == ["EG-007"]
    assert delta["added"] == [
        [None, after["entries"][0]],
        ["EG-010", after["entries"][11]],
        ["EG-010a", after["entries"][12]],
    ]
    assert delta["dropped"] == ["EG-050"] and delta["retired"] == ["EG-050"]
    assert manifest_applied(before, delta) == after
    assert manifest_whole_at(delta) is None and manifest_whole_at(after) is None


def test_a_delta_that_would_not_be_small_or_exact_is_refused() -> None:
    before = manifest([(f"EG-{n:03d}", 1) for n in range(1, 101)])
    assert manifest_delta(before, manifest([(f"EG-{n:03d}", 2) for n in range(1, 101)])) is None  # 100 > 16
    moved = [(f"EG-{n:03d}", 1) for n in range(1, 101)]
    moved[3], moved[60] = moved[60], moved[3]
    assert manifest_delta(before, manifest(moved)) is None  # entries that changed places: only whole keeps order
    assert manifest_delta(before, manifest([(f"EG-{n:03d}", 1) for n in range(1, 101 - DELTA_MIN)])) is not None


@given(st.integers(0, 2**32), st.integers(0, 60), st.integers(0, 12))
def test_applying_a_delta_always_gives_the_manifest_back(seed: int, size: int, edits: int) -> None:
    rng = random.Random(seed)
    ids = sorted(rng.sample(range(1000), size))
    before = manifest([(f"EG-{n}", 1) for n in ids])
    after_ids = [n for n in ids if rng.random() > 0.1] + rng.sample(range(1000, 1100), edits)
    after_ids.sort()
    after = manifest([(f"EG-{n}", rng.choice((1, 1, 2))) for n in after_ids])
    delta = manifest_delta(before, after)
    if delta is not None:
        assert manifest_applied(before, delta) == after


@given(st.integers(0, 2**32), st.integers(2, 60), st.integers(0, 12), st.integers(0, 3))
def test_a_delta_is_refused_exactly_when_entries_moved(seed: int, size: int, edits: int, moves: int) -> None:
    """Small deltas whose kept entries keep their order are given, and give the manifest back; entries
    that changed places (not added, not dropped) always mean the whole manifest."""
    rng = random.Random(seed)
    ids = sorted(rng.sample(range(1000), size))
    before = manifest([(f"EG-{n}", 1) for n in ids])
    kept = [n for n in ids if rng.random() > 0.05]
    for _ in range(moves):
        a, b = rng.randrange(len(kept) or 1), rng.randrange(len(kept) or 1)
        kept[a : a + 1], kept[b : b + 1] = kept[b : b + 1], kept[a : a + 1]
    after_ids = list(kept)
    for n in rng.sample(range(1000, 1100), edits):
        after_ids.insert(rng.randrange(len(after_ids) + 1), n)
    after = manifest([(f"EG-{n}", 1) for n in after_ids])
    moved = kept != [n for n in ids if n in set(kept)]

    delta = manifest_delta(before, after)

    if moved:
        assert delta is None
    elif len(ids) - len(kept) + edits <= DELTA_MIN:
        assert delta is not None and manifest_applied(before, delta) == after


@given(st.integers(0, 2**32), st.integers(0, 60), st.integers(0, 4), st.integers(0, 2), st.booleans())
def test_items_shared_with_the_previous_manifest_give_the_delta_compared_item_by_item(
    seed: int, size: int, edits: int, moves: int, duplicate: bool
) -> None:
    """A build's manifest holds the last one's very items for unchanged entries (releases._BuildCaches);
    passing over them by identity gives the delta that comparing copies of them gives, whatever changed."""
    rng = random.Random(seed)
    ids = [f"EG-{n}" for n in sorted(rng.sample(range(1000), size))]
    if duplicate and ids:
        ids.insert(rng.randrange(len(ids) + 1), rng.choice(ids))
    before = manifest([(entry_id, 1) for entry_id in ids])
    items = list(before["entries"])
    for _ in range(edits):  # an edit in place: a new item at the same place
        if items:
            place = rng.randrange(len(items))
            items[place] = {**items[place], "version": items[place]["version"] + 1}
    for _ in range(moves):
        if items:
            a, b = rng.randrange(len(items)), rng.randrange(len(items))
            items[a], items[b] = items[b], items[a]
    if rng.random() < 0.3 and items:
        items.pop(rng.randrange(len(items)))
    after = {**before, "entries": items}
    copied = {**before, "entries": [dict(item) for item in before["entries"]]}

    delta = manifest_delta(before, after)

    assert delta == manifest_delta(copied, after)
    if delta is not None and not duplicate:
        assert manifest_applied(before, delta) == after
