"""llms.txt and llms-full.txt of a large namespace stay bounded: each category keeps its share, a note says
what is left out and where, and per-category variants hold each category alone (issue 10)."""

from __future__ import annotations

from dataclasses import replace

from llms_txt import parse_llms_file

from knowledge.retrieval.render.llms import render_category_variants, render_llms_full_txt, render_llms_txt
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from tests.retrieval.helpers import demo_namespace, demo_records

STAMP = ReleaseStamp(sequence=1, knowledge_version="1.0.0", revision="2026-09-02", generated_at="2026-09-02T00:00:00Z")


def large_snapshot(copies: int) -> Snapshot:
    """The 15 demo entries repeated under fresh IDs: 3 facts, 2 protocols, 3 rules, ... per copy."""
    records = []
    for copy in range(copies):
        for n, record in enumerate(demo_records()):
            records.append(replace(record, id=f"EG-{copy * 100 + n + 1000}"))
    return Snapshot(namespace=demo_namespace(), entries=tuple(records))


def listed(text: str) -> list[str]:
    return [link["title"].split()[0] for links in parse_llms_file(text).sections.values() for link in links]


def test_a_small_namespace_is_listed_whole_without_a_note() -> None:
    snapshot = Snapshot(namespace=demo_namespace(), entries=demo_records())
    text = render_llms_txt(snapshot, STAMP).decode()

    assert "This file holds" not in text
    assert {e.id for e in demo_records()} <= set(listed(text))


def test_past_the_cap_each_category_keeps_its_share_and_the_note_says_where_the_rest_is() -> None:
    snapshot = large_snapshot(20)  # 300 entries
    text = render_llms_txt(snapshot, STAMP, cap=30).decode()
    ids = [i for i in listed(text) if i.startswith("EG-")]
    by_category = {c.slug: [e for e in snapshot.entries if e.category == c.slug] for c in snapshot.namespace.categories}

    assert len(ids) <= 30
    for entries in by_category.values():
        kept = [e.id for e in entries if e.id in ids]
        assert kept == [e.id for e in entries[: len(kept)]] and kept, "every category keeps its first entries"
    assert f"This file holds {len(ids)} of 300 entries" in text
    assert "https://evergreen.example.com/llms/<category>.txt" in text
    parse_llms_file(text)  # still valid llms.txt


def test_llms_full_is_capped_the_same_way() -> None:
    text = render_llms_full_txt(large_snapshot(20), STAMP, cap=10).decode()

    assert "This file holds" in text
    assert text.count("**[EG-") <= 10


def test_each_category_variant_holds_that_category_alone() -> None:
    snapshot = large_snapshot(2)
    variants = {
        slug: (short.decode(), full.decode()) for slug, short, full in render_category_variants(snapshot, STAMP)
    }

    assert set(variants) == {e.category for e in snapshot.entries}
    rules = {e.id for e in snapshot.entries if e.category == "rule"}
    short, full = variants["rule"]
    assert {i for i in listed(short) if i.startswith("EG-")} == rules
    assert all(f"[{i}]" in full for i in rules)
    assert not any(f"[{e.id}]" in full for e in snapshot.entries if e.category != "rule")
