"""All artifacts of a release, rendered from one snapshot: byte-identical for identical inputs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.ranking import SearchOptions
from knowledge.retrieval.render.context_json import render_context_json
from knowledge.retrieval.render.llms import render_llms_full_txt, render_llms_txt
from knowledge.retrieval.render.markdown import render_index_md
from knowledge.retrieval.render.policy import render_ai_policy_json, render_ai_txt, render_robots_txt
from knowledge.retrieval.render.site import render_site_json
from knowledge.retrieval.render.sitemap import render_sitemap_xml
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot

JSON = "application/json; charset=utf-8"
MARKDOWN = "text/markdown; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
XML = "application/xml; charset=utf-8"
BINARY = "application/octet-stream"

CONTEXT_JSON = "context.json"
LLMS_TXT = "llms.txt"
LLMS_FULL_TXT = "llms-full.txt"
SEARCH_INDEX = "search.index"
SITE_JSON = "site.json"  # internal: what context.json leaves out of the snapshot (not served)
INDEX_MD = "index.html.md"
ROBOTS_TXT = "robots.txt"
AI_TXT = "ai.txt"
AI_POLICY_JSON = "ai-policy.json"
SITEMAP_XML = "sitemap.xml"


def etag_of(content: bytes) -> str:
    """A strong ETag that is a hash of the bytes (seed §10)."""
    return '"' + hashlib.sha256(content).hexdigest()[:32] + '"'


@dataclass(frozen=True, slots=True)
class RenderedArtifact:
    name: str
    content_type: str
    content: bytes

    @property
    def etag(self) -> str:
        return etag_of(self.content)


def search_options(snapshot: Snapshot) -> SearchOptions:
    ranking = snapshot.ranking
    options = SearchOptions(ranker=ranking.ranker, match_threshold=ranking.match_threshold)
    if ranking.link_expansion is not None:
        options = SearchOptions(
            ranker=ranking.ranker, match_threshold=ranking.match_threshold, expand=ranking.link_expansion
        )
    return options


def render_release(snapshot: Snapshot, stamp: ReleaseStamp) -> list[RenderedArtifact]:
    documents = [entry.as_document() for entry in snapshot.entries]
    index = SearchIndex.compile(documents, options=search_options(snapshot))
    return [
        RenderedArtifact(CONTEXT_JSON, JSON, render_context_json(snapshot, stamp)),
        RenderedArtifact(LLMS_TXT, MARKDOWN, render_llms_txt(snapshot, stamp)),
        RenderedArtifact(LLMS_FULL_TXT, MARKDOWN, render_llms_full_txt(snapshot, stamp)),
        RenderedArtifact(SEARCH_INDEX, BINARY, index.to_bytes()),
        RenderedArtifact(SITE_JSON, JSON, render_site_json(snapshot, stamp)),
        RenderedArtifact(INDEX_MD, MARKDOWN, render_index_md(snapshot, stamp)),
        RenderedArtifact(ROBOTS_TXT, TEXT, render_robots_txt(snapshot, stamp)),
        RenderedArtifact(AI_TXT, TEXT, render_ai_txt(snapshot, stamp)),
        RenderedArtifact(AI_POLICY_JSON, JSON, render_ai_policy_json(snapshot, stamp)),
        RenderedArtifact(SITEMAP_XML, XML, render_sitemap_xml(snapshot, stamp)),
    ]
