"""All artifacts of a release, rendered from one snapshot: byte-identical for identical inputs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.ranking import SearchOptions
from knowledge.retrieval.render.context_json import render_context_json
from knowledge.retrieval.render.llms import render_llms_full_txt, render_llms_txt
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot

JSON = "application/json; charset=utf-8"
MARKDOWN = "text/markdown; charset=utf-8"
BINARY = "application/octet-stream"

CONTEXT_JSON = "context.json"
LLMS_TXT = "llms.txt"
LLMS_FULL_TXT = "llms-full.txt"
SEARCH_INDEX = "search.index"


@dataclass(frozen=True, slots=True)
class RenderedArtifact:
    name: str
    content_type: str
    content: bytes

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.content).hexdigest()[:32] + '"'


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
    ]
