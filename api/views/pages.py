"""Human pages (seed §3 L2): the index with the Playground, one page per entry and per docs page, each with a
Markdown twin; `Accept: text/markdown` on an HTML URL answers the twin (Vary: Accept)."""

from __future__ import annotations

from django.http import HttpRequest

from gateway.declared import REPEATED, Operation, Parameter
from gateway.entries import entry_id_check, entry_lookup
from gateway.errors import NotFoundError
from gateway.gate import Gate
from gateway.http import HTML, MARKDOWN, Reply, wants_markdown
from gateway.views import read_view
from knowledge.retrieval.contract.lookups import EntryFound, EntryGone
from knowledge.retrieval.render.markdown import doc_markdown
from knowledge.retrieval.render.release import INDEX_MD
from knowledge.retrieval.snapshot import DocRecord
from knowledge.selectors.pages import INDEX_HTML, doc_page_render, entry_page_render, index_page_render

NO_SUCH_DOC = "There is no docs page {slug!r} in this namespace."
# The Playground's question in the page's address, so a result can be bookmarked and shared: the page's script
# asks /api/context with it, which judges the values; the page itself refuses only a repeat.
PLAYGROUND = Operation(
    (
        Parameter("topic", {"type": "string"}, "Fills the Playground and asks /api/context with it."),
        Parameter("budget", {"type": "string"}, "The Playground's budget (with topic)."),
        Parameter("category", {"type": "string"}, "The Playground's category (with topic)."),
    ),
    {"repeated_parameter": REPEATED},
)


def _page(gate: Gate, request: HttpRequest, html: str, markdown: str, md_path: str, status: int = 200) -> Reply:
    """The HTML page or, for Accept: text/markdown, its twin; both name each other and llms.txt in Link."""
    describedby = gate.path("llms.txt")
    if wants_markdown(request):
        return Reply(markdown.encode(), MARKDOWN, status=status, vary_accept=True, describedby=describedby)
    return Reply(
        html.encode(),
        HTML,
        status=status,
        vary_accept=True,
        alternate=gate.path(md_path),
        describedby=describedby,
        services=gate.prefix,
    )


@read_view
def index_get(request: HttpRequest, gate: Gate) -> Reply:
    PLAYGROUND.sent_once(request.GET)
    release = gate.pages
    # Rendered from the release alone, so it is the page the build measured for metrics.json.
    html = release.memoized(INDEX_HTML, lambda: index_page_render(release.snapshot, release.stamp))
    return _page(gate, request, html, release.artifacts[INDEX_MD].content.decode(), "index.html.md")


def _entry_status(found: object) -> int:
    if isinstance(found, EntryFound):
        return 200
    return 410 if isinstance(found, EntryGone) else 404


@read_view
def entry_page_get(request: HttpRequest, gate: Gate, entry_id: str) -> Reply:
    entry_id_check(entry_id)
    release = gate.pages
    found = entry_lookup(release, entry_id)
    md_path = f"entries/{entry_id}.md"
    if isinstance(found, EntryFound):
        html = entry_page_render(found.entry, release.snapshot, release.stamp)
    else:
        page = DocRecord(slug=entry_id, title=entry_id, body=found.markdown)
        html = doc_page_render(page, release.snapshot, release.stamp)
    return _page(gate, request, html, found.markdown, md_path, status=_entry_status(found))


@read_view
def entry_page_markdown_get(request: HttpRequest, gate: Gate, entry_id: str) -> Reply:
    entry_id_check(entry_id)
    found = entry_lookup(gate.pages, entry_id)
    return Reply(
        found.markdown.encode(),
        MARKDOWN,
        status=_entry_status(found),
        alternate=gate.path(f"entries/{entry_id}"),
        alternate_type="text/html",
        describedby=gate.path("llms.txt"),
    )


def _doc(gate: Gate, slug: str) -> DocRecord:
    for doc in gate.pages.snapshot.docs:
        if doc.slug == slug:
            return doc
    raise NotFoundError(NO_SUCH_DOC.format(slug=slug), param="slug")


@read_view
def doc_get(request: HttpRequest, gate: Gate, slug: str) -> Reply:
    doc = _doc(gate, slug)
    release = gate.pages
    html = doc_page_render(doc, release.snapshot, release.stamp)
    return _page(gate, request, html, doc_markdown(doc), f"docs/{slug}.md")


@read_view
def doc_markdown_get(request: HttpRequest, gate: Gate, slug: str) -> Reply:
    doc = _doc(gate, slug)
    return Reply(
        doc_markdown(doc).encode(),
        MARKDOWN,
        alternate=gate.path(f"docs/{slug}"),
        alternate_type="text/html",
        describedby=gate.path("llms.txt"),
    )
