"""sitemap.xml: the namespace's pages, Markdown mirrors and machine-readable files.

The sitemaps protocol (sitemaps.org) allows at most 50,000 URLs in one file; a namespace lists two
per entry, so above about 25,000 entries `sitemap.xml` becomes a sitemap index that points to
`sitemaps/1.xml`, `sitemaps/2.xml` … of at most SITEMAP_MAX_URLS URLs each (all in the same order
as the single file would list them). Smaller namespaces keep the single file, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from xml.sax.saxutils import escape

from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp, Snapshot

STATIC_PATHS = ("", "index.html.md", "llms.txt", "llms-full.txt", "context.json", "metrics.json", "ai-policy.json")
SITEMAP_XML = "sitemap.xml"
SITEMAP_MAX_URLS = 50_000
XMLNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HEAD = '<?xml version="1.0" encoding="UTF-8"?>'


def sitemap_part(number: int) -> str:
    """The name (and path) of the n-th file of a sitemap index, counted from 1."""
    return f"sitemaps/{number}.xml"


def _line(item: str, loc: str, lastmod: str) -> str:
    return f"  <{item}><loc>{escape(loc)}</loc><lastmod>{lastmod}</lastmod></{item}>"


def _entry_lines(base: str, entry: EntryRecord) -> tuple[str, str]:
    """_line("url", …) of the entry's page and its Markdown mirror. `base`: ns.url(""), escaped (escape
    replaces character by character, so escaping the parts is escaping the whole)."""
    page = f"  <url><loc>{base}entries/{escape(entry.id)}"  # ns.url(f"entries/{entry.id}") without its strips
    tail = f"</loc><lastmod>{entry.updated}</lastmod></url>"
    return page + tail, page + ".md" + tail


def _part_lines(snapshot: Snapshot, stamp: ReleaseStamp, start: int, stop: int) -> list[str]:
    """Lines `start` to `stop` of the urlset, in order: the static files, two per entry, the docs."""
    ns, entries, docs = snapshot.namespace, snapshot.entries, snapshot.docs
    static = len(STATIC_PATHS)
    lines = [_line("url", ns.url(path), stamp.revision) for path in STATIC_PATHS[start:stop]]
    low, high = max(start, static) - static, min(stop, static + 2 * len(entries)) - static
    if high > low:
        base, first = escape(ns.url("")), low // 2
        pairs = [line for entry in entries[first : (high + 1) // 2] for line in _entry_lines(base, entry)]
        lines += pairs[low - 2 * first : high - 2 * first]
    after = static + 2 * len(entries)
    low, high = max(start, after) - after, min(stop, after + 2 * len(docs)) - after
    for number in range(low, high):
        doc = docs[number // 2]
        lines.append(_line("url", ns.url(f"docs/{doc.slug}" + ("" if number % 2 == 0 else ".md")), stamp.revision))
    return lines


def _document(root: str, lines: list[str]) -> bytes:
    return "\n".join([HEAD, f'<{root} xmlns="{XMLNS}">', *lines, f"</{root}>", ""]).encode()


@dataclass(frozen=True)
class SitemapFile:
    """One file of the sitemap. `key`: all its bytes depend on, compared with == (None: not kept), so
    a build may reuse the file an earlier build rendered under an equal key (a one-entry publish at
    100,000 entries renders one part of 50,000 URLs, not four)."""

    name: str
    key: tuple[object, ...] | None
    render: Callable[[], bytes]


def _urlset(snapshot: Snapshot, stamp: ReleaseStamp, start: int, stop: int) -> bytes:
    return _document("urlset", _part_lines(snapshot, stamp, start, stop))


def _part_key(snapshot: Snapshot, stamp: ReleaseStamp, start: int, stop: int) -> tuple[object, ...]:
    """What lines `start` to `stop` depend on: the entries they list (records compare by identity
    first, so an unchanged part costs a pass over references), where they sit and the rest."""
    static, entries = len(STATIC_PATHS), snapshot.entries
    first, last = max(0, (start - static) // 2), max(0, (stop - static + 1) // 2)
    held = tuple(entries[first:last])
    return (start, stop, len(entries), snapshot.namespace, stamp.revision, snapshot.docs, held)


def sitemap_files(snapshot: Snapshot, stamp: ReleaseStamp) -> list[SitemapFile]:
    """sitemap.xml, and its parts when it is an index, each to render when its key is new."""
    total = len(STATIC_PATHS) + 2 * len(snapshot.entries) + 2 * len(snapshot.docs)
    spans = [(start, min(start + SITEMAP_MAX_URLS, total)) for start in range(0, total, SITEMAP_MAX_URLS)] or [(0, 0)]
    files = [
        SitemapFile(
            SITEMAP_XML if len(spans) == 1 else sitemap_part(number),
            _part_key(snapshot, stamp, start, stop),
            partial(_urlset, snapshot, stamp, start, stop),
        )
        for number, (start, stop) in enumerate(spans, start=1)
    ]
    if len(files) == 1:
        return files
    index = [_line("sitemap", snapshot.namespace.url(f.name), stamp.revision) for f in files]
    return [SitemapFile(SITEMAP_XML, None, partial(_document, "sitemapindex", index)), *files]


def render_sitemaps(snapshot: Snapshot, stamp: ReleaseStamp) -> list[tuple[str, bytes]]:
    """(name, bytes) of sitemap.xml, and of its parts when it is an index."""
    return [(f.name, f.render()) for f in sitemap_files(snapshot, stamp)]
