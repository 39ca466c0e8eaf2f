"""layers_compose (issue 16 §1), without Django: order, IDs, overrides, tombstones, categories."""

from __future__ import annotations

from dataclasses import replace

from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.layers import Base, layers_compose
from knowledge.retrieval.snapshot import CategoryInfo, Snapshot, ThemeRecord
from tests.retrieval.helpers import demo_namespace
from tests.retrieval.test_paths import record


def snapshot(
    slug: str, *entries: object, stones: tuple[Tombstone, ...] = (), categories: tuple[str, ...] = ()
) -> Snapshot:
    namespace = replace(
        demo_namespace(language="en"),
        slug=slug,
        name=slug.title(),
        categories=tuple(CategoryInfo(c, c.title(), "") for c in categories),
    )
    return Snapshot(namespace=namespace, entries=tuple(entries), tombstones=stones)  # type: ignore[arg-type]


STONE = Tombstone(id="CO-009", title="Old", retired_at="2026-01-01T00:00:00Z", reason="Gone.", replaced_by=None)
COMPANY = snapshot(
    "company",
    record("CO-101", "Support hours", body="Weekdays."),
    record("CO-201", "Migrations", body="Reversible.", paths=("*.sql",)),
    stones=(STONE,),
    categories=("rule", "policy"),
)
GROUP = snapshot("group", record("GR-001", "Group fact", body="Shared by the group."), categories=("fact",))


def test_own_entries_come_first_then_each_base_in_priority_order_with_its_layer() -> None:
    own = snapshot("product", record("PR-001", "Regions", body="Two regions."), categories=("fact",))

    composed = layers_compose(own, [Base("company", COMPANY), Base("group", GROUP)])

    assert [(e.id, e.layer) for e in composed.entries] == [
        ("PR-001", "product"),
        ("CO-101", "company"),
        ("CO-201", "company"),
        ("GR-001", "group"),
    ]
    assert [c.slug for c in composed.namespace.categories] == ["fact", "rule", "policy"]
    assert composed.tombstones == (STONE,)  # a base's retirement travels with it


def test_an_override_replaces_the_base_entry_with_a_tombstone_that_names_it() -> None:
    override = replace(record("PR-101", "Support all day", body="Always."), overrides="CO-101")
    composed = layers_compose(snapshot("product", override), [Base("company", COMPANY)])

    assert [e.id for e in composed.entries] == ["PR-101", "CO-201"]
    stone = next(t for t in composed.tombstones if t.id == "CO-101")
    assert stone.replaced_by == "PR-101" and "Overridden in Product by PR-101" in stone.reason


def test_a_layer_reached_twice_serves_each_id_once_and_keeps_its_first_layer() -> None:
    company_on_group = layers_compose(COMPANY, [Base("group", GROUP)])

    composed = layers_compose(snapshot("product"), [Base("company", company_on_group), Base("group", GROUP)])

    assert [(e.id, e.layer) for e in composed.entries] == [
        ("CO-101", "company"),
        ("CO-201", "company"),
        ("GR-001", "group"),
    ]


def test_without_bases_the_snapshot_is_unchanged_and_has_no_layers() -> None:
    own = snapshot("solo", record("SO-001", "Alone", body="Only here."))

    assert layers_compose(own, []) is own and own.entries[0].layer is None


def test_a_base_theme_is_carried_under_its_layer_with_the_entries_served() -> None:
    themes = (
        ThemeRecord("support", "Support", "How support works.", ("CO-101", "CO-201", "CO-404")),
        ThemeRecord("hours", "Hours", "", ("CO-101",)),
    )
    override = replace(record("PR-101", "Support all day", body="Always."), overrides="CO-101")
    own = replace(snapshot("product", override), themes=(ThemeRecord("support", "Our support", "", ("PR-101",)),))

    composed = layers_compose(own, [Base("company", replace(COMPANY, themes=themes))])
    again = layers_compose(snapshot("third"), [Base("product", composed)])

    assert [(t.slug, t.layer, t.entries) for t in composed.themes] == [
        ("support", "", ("PR-101",)),
        ("company/support", "company", ("CO-201",)),  # the override replaced CO-101; CO-404 is not served
    ]  # "hours" held only the overridden entry: not carried
    assert [(t.slug, t.layer) for t in again.themes] == [("product/support", "product"), ("company/support", "company")]
