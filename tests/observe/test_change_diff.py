"""knowledge.retrieval.changes: per-entry differences between two release manifests (pure)."""

from __future__ import annotations

from knowledge.retrieval.changes import change_counts, changes_page, manifest_changes


def manifest(entries: dict[str, tuple[int, str]], retired: tuple[str, ...] = ()) -> dict[str, object]:
    return {
        "entries": [{"id": i, "version": v, "hash": h} for i, (v, h) in entries.items()],
        "retired": list(retired),
    }


def test_every_kind_of_change_is_named_with_versions_and_hashes() -> None:
    before = manifest({"EG-001": (1, "a"), "EG-002": (1, "b"), "EG-003": (2, "c"), "EG-004": (1, "d")}, ("EG-009",))
    after = manifest({"EG-001": (1, "a"), "EG-002": (2, "b2"), "EG-005": (1, "e"), "EG-009": (3, "z")}, ("EG-003",))
    changes = {c.id: c for c in manifest_changes(before, after)}

    assert set(changes) == {"EG-002", "EG-003", "EG-004", "EG-005", "EG-009"}
    assert changes["EG-002"].as_json() == {
        "id": "EG-002",
        "change": "changed",
        "version": 2,
        "contentHash": "b2",
        "previousVersion": 1,
        "previousContentHash": "b",
    }
    assert changes["EG-003"].change == "retired" and changes["EG-003"].version is None
    assert changes["EG-004"].change == "removed"
    assert changes["EG-005"].change == "added" and changes["EG-005"].previous_version is None
    assert changes["EG-009"].change == "restored"


def test_from_nothing_everything_served_is_added_in_id_number_order() -> None:
    after = manifest({"EG-1000": (1, "x"), "EG-020": (1, "y"), "EG-100": (1, "z")}, ("EG-007",))
    changes = manifest_changes(None, after)
    assert [(c.id, c.change) for c in changes] == [
        ("EG-007", "retired"),
        ("EG-020", "added"),
        ("EG-100", "added"),
        ("EG-1000", "added"),
    ]
    assert change_counts(changes) == {"added": 3, "changed": 0, "retired": 1, "restored": 0, "removed": 0}


def test_identical_releases_have_no_changes() -> None:
    same = manifest({"EG-001": (3, "h")}, ("EG-002",))
    assert manifest_changes(same, same) == []


def test_pages_continue_strictly_after_the_last_id_seen() -> None:
    changes = manifest_changes(None, manifest({f"EG-{n:03d}": (1, str(n)) for n in range(1, 8)}))
    first, more = changes_page(changes, after=None, limit=3)
    second, more_again = changes_page(changes, after=first[-1].id, limit=3)
    last, done = changes_page(changes, after=second[-1].id, limit=3)
    assert [c.id for c in first + second + last] == [f"EG-{n:03d}" for n in range(1, 8)]
    assert (more, more_again, done) == (True, True, False)
    assert changes_page(changes, after="EG-999", limit=3) == ([], False)
