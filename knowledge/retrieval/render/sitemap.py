"""sitemap.xml: the namespace's pages, Markdown mirrors and machine-readable files.

The sitemaps protocol (sitemaps.org) allows at most 50,000 URLs in one file; a namespace lists two
per entry, so above about 25,000 entries `sitemap.xml` becomes a sitemap index that points to
`sitemaps/1.xml`, `sitemaps/2.xml` … of at most SITEMAP_MAX_URLS URLs each (all in the same order
as the single file would list them). Smaller namespaces keep the single file, byte for byte.
"""

from __future__ import annotations

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
    page = f"{base}entries/{entry.id}"  # ns.url(f"entries/{entry.id}"), without its strips per entry
    return _line("url", page, entry.updated), _line("url", page + ".md", entry.updated)


def _lines(snapshot: Snapshot, stamp: ReleaseStamp) -> list[str]:
    """The urlset's lines in order: the static files, two per entry, the docs."""
    ns = snapshot.namespace
    base = ns.url("")
    lines = [_line("url", ns.url(path), stamp.revision) for path in STATIC_PATHS]
    for entry in snapshot.entries:
        lines += _entry_lines(base, entry)
    for doc in snapshot.docs:
        lines.append(_line("url", ns.url(f"docs/{doc.slug}"), stamp.revision))
        lines.append(_line("url", ns.url(f"docs/{doc.slug}.md"), stamp.revision))
    return lines


def _document(root: str, lines: list[str]) -> bytes:
    return "\n".join([HEAD, f'<{root} xmlns="{XMLNS}">', *lines, f"</{root}>", ""]).encode()


def render_sitemaps(snapshot: Snapshot, stamp: ReleaseStamp) -> list[tuple[str, bytes]]:
    """(name, bytes) of sitemap.xml, and of its parts when it is an index."""
    lines = _lines(snapshot, stamp)
    if len(lines) <= SITEMAP_MAX_URLS:
        return [(SITEMAP_XML, _document("urlset", lines))]
    chunks = [lines[start : start + SITEMAP_MAX_URLS] for start in range(0, len(lines), SITEMAP_MAX_URLS)]
    files = [(sitemap_part(number), _document("urlset", chunk)) for number, chunk in enumerate(chunks, start=1)]
    index = [_line("sitemap", snapshot.namespace.url(name), stamp.revision) for name, _ in files]
    return [(SITEMAP_XML, _document("sitemapindex", index)), *files]
