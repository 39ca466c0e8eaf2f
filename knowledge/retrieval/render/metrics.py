"""metrics.json, measured when the release is built: token cost of each representation and a budget scan."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import orjson

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import BUDGET_DEFAULT
from knowledge.retrieval.payload import ContextQuery, ReleaseView, context_build
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from knowledge.retrieval.tiers import packable
from knowledge.retrieval.tokens import estimate_tokens

BUDGET_SCAN = (800, 2000, 4000, 8000)  # seed §4 "预算档位"
ESTIMATOR = "round(CJK characters x 1.0 + other characters x 0.28), seed §4"


class _TextOnly(HTMLParser):
    """The text a reader without JavaScript gets: no tags, scripts, styles or JSON-LD."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "style", "template"}:
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style", "template"} and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_text(html: str) -> str:
    parser = _TextOnly()
    parser.feed(html)
    return re.sub(r"\s+", " ", " ".join(parser.parts)).strip()


def _shape(name: str, path: str, text: str) -> dict[str, Any]:
    return {"source": name, "path": path, "tokens": estimate_tokens(text), "bytes": len(text.encode())}


def measure_release(
    snapshot: Snapshot,
    stamp: ReleaseStamp,
    *,
    index: SearchIndex,
    index_html: str,
    index_md: str,
    llms_full_txt: str,
    llms_txt: str,
) -> dict[str, Any]:
    """contextShape (seed §2 table, measured) and budgetScan (seed §4 tiers, empty topic)."""
    entries = packable(snapshot.entries, revision=stamp.revision)
    view = ReleaseView(release_id=stamp.sequence, namespace=snapshot.namespace, stamp=stamp, entries=entries)

    def pack(budget: int) -> dict[str, Any]:
        return context_build(index=index, view=view, query=ContextQuery(topic="", budget=budget, category=None))

    api = orjson.dumps(pack(BUDGET_DEFAULT)).decode()
    shape = [
        _shape("html", "/index.html", index_html),
        _shape("htmlText", "/index.html (text without markup, scripts and styles)", html_text(index_html)),
        _shape("markdownMirror", "/index.html.md", index_md),
        _shape("llmsFullTxt", "/llms-full.txt", llms_full_txt),
        _shape("llmsTxt", "/llms.txt", llms_txt),
        _shape("apiContext", f"/api/context?budget={BUDGET_DEFAULT}", api),
    ]
    scan = []
    for budget in BUDGET_SCAN:
        body = pack(budget)
        scan.append(
            {
                "budget": budget,
                "entryCount": body["entryCount"],
                "usedTokens": body["usedTokens"],
                "truncated": body["truncated"],
            }
        )
    return {
        "namespace": snapshot.namespace.slug,
        "knowledgeVersion": stamp.knowledge_version,
        "revision": stamp.revision,
        "releaseId": stamp.sequence,
        "measuredAt": stamp.generated_at,
        "tokenEstimate": ESTIMATOR,
        "entryCount": len(snapshot.entries),
        "totalTokens": snapshot.total_tokens,
        "contextShape": shape,
        "budgetScan": scan,
        # The `matched` threshold this release serves with and how it was obtained (issue 11).
        "matching": {"threshold": index.match_threshold, **index.matching},
    }
