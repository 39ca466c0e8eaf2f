"""Human pages of a release (index with Playground, entry and docs pages) and the build-time measurements.

Pages are rendered from the release's Snapshot only, so the index page measured at build time is
byte for byte the one served. Links are relative, so the same bytes work at / and under /t/<namespace>/.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django.template.loader import render_to_string

from knowledge.retrieval.browse import BrowsePage
from knowledge.retrieval.contract.shapes import is_stale
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render.jsonld import render_jsonld
from knowledge.retrieval.render.labels import ENDPOINTS, labels_for
from knowledge.retrieval.render.metrics import measure_release
from knowledge.retrieval.render.release import (
    INDEX_MD,
    LLMS_FULL_TXT,
    LLMS_TXT,
    RenderedArtifact,
)
from knowledge.retrieval.render.safe_html import markdown_to_safe_html
from knowledge.retrieval.snapshot import DocRecord, EntryRecord, ReleaseStamp, Snapshot

INDEX_HTML = "index.html"
BUDGETS = (800, 2000, 4000, 8000)
# The index lists the first page of entries and the latest retirements, so it stays small at any size;
# the rest is a search or a page away (entries/).
INDEX_ROWS = 50
RETIRED_LISTED = 20


def page_context(snapshot: Snapshot, stamp: ReleaseStamp, root: str, section: str = "") -> dict[str, Any]:
    ns = snapshot.namespace
    return {
        "ns": ns,
        "stamp": stamp,
        "label": labels_for(ns.language),
        "root": root,
        "lang": ns.language,
        "section": section,
        "has_docs": bool(snapshot.docs),
        "categories": ns.categories,
        "entry_count": len(snapshot.entries),
        "total_tokens": snapshot.total_tokens,
    }


def _rows(entries: Sequence[EntryRecord], stamp: ReleaseStamp) -> list[dict[str, Any]]:
    return [{"entry": e, "stale": is_stale(e.updated, revision=stamp.revision)} for e in entries]


def index_page_render(snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    """/index.html: what the namespace is, its entry index, the Playground and the JSON-LD graph."""
    ns = snapshot.namespace
    context = page_context(snapshot, stamp, "")
    label = context["label"]
    retired = sorted(snapshot.tombstones, key=lambda t: t.retired_at, reverse=True)
    context.update(
        {
            "rows": _rows(snapshot.entries[:INDEX_ROWS], stamp),
            "more": len(snapshot.entries) > INDEX_ROWS,
            "browse_all": label["browse_all"].format(count=len(snapshot.entries)),
            "entries_url": "entries/",
            "entry_base": "entries/",
            "docs": snapshot.docs,
            "faq": ns.faq,
            "tombstones": retired[:RETIRED_LISTED],
            "retired_more": label["retired_more"].format(count=len(retired) - RETIRED_LISTED)
            if len(retired) > RETIRED_LISTED
            else "",
            "endpoints": [(path, kind) for path, kind in ENDPOINTS],
            "budgets": BUDGETS,
            "default_budget": ns.default_budget,
            "jsonld": render_jsonld(snapshot, stamp),
            "self_md": "index.html.md",
        }
    )
    return render_to_string("evergreen/index.html", context)


def entry_page_render(entry: EntryRecord, snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    context = page_context(snapshot, stamp, "../")
    context.update(
        {
            "entry": entry,
            "body_html": markdown_to_safe_html(entry.body),
            "stale": is_stale(entry.updated, revision=stamp.revision),
            "self_md": f"{entry.id}.md",
        }
    )
    return render_to_string("evergreen/entry.html", context)


def doc_page_render(doc: DocRecord, snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    context = page_context(snapshot, stamp, "../")
    context.update({"doc": doc, "body_html": markdown_to_safe_html(doc.body), "self_md": f"{doc.slug}.md"})
    return render_to_string("evergreen/doc.html", context)


def _page_url(listing: BrowsePage, page: int) -> str:
    query = {"q": listing.query, "category": listing.category or "", "page": page if page > 1 else ""}
    return "?" + urlencode({k: v for k, v in query.items() if v}) if any(query.values()) else "./"


def entries_page_render(listing: BrowsePage, snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    """/entries/: one page of the entry list, a category's or a search's, with the pager."""
    context = page_context(snapshot, stamp, "../", "entries")
    label = context["label"]
    context.update(
        {
            "listing": listing,
            "rows": _rows(listing.entries, stamp),
            "query": listing.query,
            "category": listing.category,
            "entries_url": "./",
            "entry_base": "",
            "self_md": "../llms.txt",
            "alternate": _page_url(listing, listing.page),  # this URL: Accept: text/markdown answers its twin
            "results_for": label["results_for"].format(query=listing.query),
            "showing": label["showing"].format(
                first=listing.first_number, last=listing.last_number, total=listing.total
            ),
            "capped": label["capped"].format(count=listing.total),
            "page_of": label["page_of"].format(page=listing.page, pages=listing.pages),
            "previous_url": _page_url(listing, listing.page - 1) if listing.page > 1 else "",
            "next_url": _page_url(listing, listing.page + 1) if listing.page < listing.pages else "",
        }
    )
    return render_to_string("evergreen/entries.html", context)


def release_metrics_measure(
    snapshot: Snapshot, stamp: ReleaseStamp, artifacts: list[RenderedArtifact], *, index: SearchIndex
) -> dict[str, Any]:
    """metrics.json of the release, measured at build time from the very bytes it serves (`index`: its
    public index, as loaded)."""
    by_name = {a.name: a for a in artifacts}
    return measure_release(
        snapshot,
        stamp,
        index=index,
        index_html=index_page_render(snapshot, stamp),
        index_md=by_name[INDEX_MD].content.decode(),
        llms_full_txt=by_name[LLMS_FULL_TXT].content.decode(),
        llms_txt=by_name[LLMS_TXT].content.decode(),
    )
