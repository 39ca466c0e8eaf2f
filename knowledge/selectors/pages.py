"""Human pages of a release (index with Playground, entry and docs pages) and the build-time measurements.

Pages are rendered from the release's Snapshot only, so the index page measured at build time is
byte for byte the one served. Links are relative, so the same bytes work at / and under /t/<namespace>/.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.payload import is_stale
from knowledge.retrieval.render.jsonld import render_jsonld
from knowledge.retrieval.render.labels import ENDPOINTS, labels_for
from knowledge.retrieval.render.markdown import INDEX_LISTED
from knowledge.retrieval.render.metrics import measure_release
from knowledge.retrieval.render.release import (
    INDEX_MD,
    LLMS_FULL_TXT,
    LLMS_TXT,
    SEARCH_INDEX,
    RenderedArtifact,
)
from knowledge.retrieval.render.safe_html import markdown_to_safe_html
from knowledge.retrieval.snapshot import DocRecord, EntryRecord, ReleaseStamp, Snapshot

INDEX_HTML = "index.html"
BUDGETS = (800, 2000, 4000, 8000)


def _common(snapshot: Snapshot, stamp: ReleaseStamp, root: str) -> dict[str, Any]:
    ns = snapshot.namespace
    return {
        "ns": ns,
        "stamp": stamp,
        "label": labels_for(ns.language),
        "root": root,
        "lang": ns.language,
        "entry_count": len(snapshot.entries),
        "total_tokens": snapshot.total_tokens,
    }


def index_page_render(snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    """/index.html: what the namespace is, its entry index, the Playground and the JSON-LD graph."""
    ns = snapshot.namespace
    context = _common(snapshot, stamp, "")
    context.update(
        {
            "entries": [
                {"entry": e, "stale": is_stale(e.updated, revision=stamp.revision)}
                for e in snapshot.entries[:INDEX_LISTED]
            ],
            "more": max(0, len(snapshot.entries) - INDEX_LISTED),
            "categories": ns.categories,
            "docs": snapshot.docs,
            "faq": ns.faq,
            "tombstones": snapshot.tombstones,
            "endpoints": [(path, kind) for path, kind in ENDPOINTS],
            "budgets": BUDGETS,
            "default_budget": ns.default_budget,
            "jsonld": render_jsonld(snapshot, stamp),
            "self_md": "index.html.md",
        }
    )
    return render_to_string("evergreen/index.html", context)


def entry_page_render(entry: EntryRecord, snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    context = _common(snapshot, stamp, "../")
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
    context = _common(snapshot, stamp, "../")
    context.update({"doc": doc, "body_html": markdown_to_safe_html(doc.body), "self_md": f"{doc.slug}.md"})
    return render_to_string("evergreen/doc.html", context)


def release_metrics_measure(
    snapshot: Snapshot, stamp: ReleaseStamp, artifacts: list[RenderedArtifact]
) -> dict[str, Any]:
    """metrics.json of the release, measured at build time from the very bytes it serves."""
    by_name = {a.name: a for a in artifacts}
    return measure_release(
        snapshot,
        stamp,
        index=SearchIndex.from_bytes(by_name[SEARCH_INDEX].content),
        index_html=index_page_render(snapshot, stamp),
        index_md=by_name[INDEX_MD].content.decode(),
        llms_full_txt=by_name[LLMS_FULL_TXT].content.decode(),
        llms_txt=by_name[LLMS_TXT].content.decode(),
    )
