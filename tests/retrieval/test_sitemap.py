"""sitemap.xml keeps to the sitemaps protocol: above SITEMAP_MAX_URLS URLs it is an index of files that size."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any
from xml.etree import ElementTree
from xml.sax.saxutils import escape

import pytest

from knowledge.retrieval.render import sitemap
from knowledge.retrieval.render.sitemap import SITEMAP_XML, render_sitemaps, sitemap_part
from knowledge.retrieval.snapshot import DocRecord, ReleaseStamp, Snapshot
from tests.retrieval.helpers import demo_namespace, demo_records

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


def locs(xml: bytes, item: str = "url") -> list[str]:
    root = ElementTree.fromstring(xml)
    return [element.findtext(f"{NS}loc") or "" for element in root.iter(f"{NS}{item}")]


@pytest.fixture
def demo() -> tuple[Snapshot, ReleaseStamp]:
    stamp = ReleaseStamp(
        sequence=1, knowledge_version="1.0.0", revision="2026-09-02", generated_at="2026-09-02T00:00:00Z"
    )
    return Snapshot(namespace=demo_namespace(), entries=demo_records()), stamp


def test_a_small_namespace_keeps_one_sitemap_file(demo: Any) -> None:
    files = render_sitemaps(*demo)

    assert [name for name, _ in files] == [SITEMAP_XML]
    assert ElementTree.fromstring(files[0][1]).tag == f"{NS}urlset"


def test_above_the_limit_sitemap_xml_is_an_index_of_files_within_it(demo: Any, monkeypatch: Any) -> None:
    whole = locs(render_sitemaps(*demo)[0][1])
    monkeypatch.setattr(sitemap, "SITEMAP_MAX_URLS", 7)

    files = dict(render_sitemaps(*demo))
    index = files.pop(SITEMAP_XML)
    parts = [files[sitemap_part(n)] for n in range(1, len(files) + 1)]

    assert ElementTree.fromstring(index).tag == f"{NS}sitemapindex"
    assert [re.sub(r"^.*/sitemaps/", "sitemaps/", loc) for loc in locs(index, "sitemap")] == list(files)
    assert all(0 < len(locs(part)) <= 7 for part in parts)
    assert [loc for part in parts for loc in locs(part)] == whole  # every URL once, in the same order


@pytest.mark.parametrize("limit", [7, 8, 9, 10, 11, 1000])
def test_each_part_holds_the_single_files_lines_at_its_place(demo: Any, monkeypatch: Any, limit: int) -> None:
    snapshot, stamp = demo
    docs = (DocRecord("guide", "Guide", "Read me."), DocRecord("faq", "FAQ", "Ask."))
    snapshot = Snapshot(namespace=snapshot.namespace, entries=snapshot.entries, docs=docs)
    lines = render_sitemaps(snapshot, stamp)[0][1].decode().splitlines()[2:-1]
    monkeypatch.setattr(sitemap, "SITEMAP_MAX_URLS", limit)

    files = dict(render_sitemaps(snapshot, stamp))

    if len(files) == 1:
        assert files[SITEMAP_XML].decode().splitlines()[2:-1] == lines
        return
    parts = [files[sitemap_part(n)].decode().splitlines()[2:-1] for n in range(1, len(files))]
    assert parts == [lines[start : start + limit] for start in range(0, len(lines), limit)]


def test_a_part_keeps_its_key_when_an_entry_of_another_part_changes(demo: Any, monkeypatch: Any) -> None:
    snapshot, stamp = demo
    monkeypatch.setattr(sitemap, "SITEMAP_MAX_URLS", 8)
    before = {f.name: f.key for f in sitemap.sitemap_files(snapshot, stamp)}
    entries = list(snapshot.entries)
    entries[-1] = replace(entries[-1], updated="2030-01-01")

    after = {f.name: f.key for f in sitemap.sitemap_files(replace(snapshot, entries=tuple(entries)), stamp)}

    changed = [name for name in after if after[name] != before[name]]
    assert after[SITEMAP_XML] is None  # the index is rendered every time
    assert changed == [sitemap_part(len(after) - 1)]


@pytest.mark.parametrize("entry_id", ["EG-101", "A&B<C>", "x&amp;y"])
def test_an_entry_line_is_the_escaped_url_of_its_page(demo: Any, entry_id: str) -> None:
    snapshot, _ = demo
    entry = replace(snapshot.entries[0], id=entry_id)
    base = "https://example.com/a&b/"

    lines = sitemap._entry_lines(escape(base), entry)

    page = f"{base}entries/{entry_id}"
    assert lines == (sitemap._line("url", page, entry.updated), sitemap._line("url", page + ".md", entry.updated))
