"""withdrawn_items and layers_withdrawn (issue 16 §1, seed §6), without Django: which IDs a removed base withdraws."""

from __future__ import annotations

from knowledge.retrieval.layers import Withdrawn, layers_withdrawn, withdrawn_items
from tests.retrieval.test_layers import STONE, snapshot
from tests.retrieval.test_paths import record

PRODUCT = snapshot("product", record("PR-001", "Regions", body="Two regions."), stones=(STONE,))
MANIFEST = [
    {"id": "PR-001", "version": 1, "hash": "a", "layer": "product"},
    {"id": "CO-101", "version": 1, "hash": "b", "layer": "company"},
    {"id": "CO-102", "version": 2, "hash": "c", "layer": "company", "sensitivity": "internal"},
    {"id": "CO-009", "version": 1, "hash": "d", "layer": "company"},  # retired since: its tombstone answers
    {"id": "OL-001", "version": 1, "hash": "e"},  # a manifest from before layers were recorded
]


def test_a_removed_layer_withdraws_the_ids_served_from_nowhere_now() -> None:
    found = withdrawn_items(MANIFEST, PRODUCT, layers={"product"})

    assert [item["id"] for item in found] == ["CO-101", "CO-102"]


def test_a_layer_still_listed_withdraws_nothing() -> None:
    # A base rolled back to a release without CO-101: the ID is unknown in the base too (404).
    assert withdrawn_items(MANIFEST, PRODUCT, layers={"product", "company"}) == []


def test_withdrawn_ids_become_tombstones_keeping_their_sensitivity_and_naming_the_layer() -> None:
    withdrawn = [
        Withdrawn("CO-102", "company", "Legacy", "internal", "2026-09-01T10:00:00Z"),
        Withdrawn("CO-101", "company", "Hours", "public", "2026-09-01T10:00:00Z"),
    ]

    stones = layers_withdrawn(PRODUCT, withdrawn, layers={"product"}).tombstones

    assert [(t.id, t.sensitivity, t.replaced_by) for t in stones] == [
        ("CO-009", "public", None),
        ("CO-101", "public", None),
        ("CO-102", "internal", None),
    ]
    assert stones[1].reason == "No longer served in Product: company was removed from its base namespaces"
    assert stones[1].retired_at == "2026-09-01T10:00:00Z" and stones[1].title == "Hours"


def test_a_withdrawn_id_served_again_or_whose_layer_is_back_is_no_tombstone() -> None:
    withdrawn = [Withdrawn("PR-001", "company", "Regions", "public", "2026-09-01T10:00:00Z")]

    assert layers_withdrawn(PRODUCT, withdrawn, layers={"product"}) is PRODUCT
    back = [Withdrawn("CO-101", "company", "Hours", "public", "2026-09-01T10:00:00Z")]
    assert layers_withdrawn(PRODUCT, back, layers={"product", "company"}) is PRODUCT
