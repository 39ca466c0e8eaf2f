"""The release's files (seed §10): llms.txt, llms-full.txt, context.json, policies, sitemap, metrics, schema."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import orjson
from django.http import HttpRequest, HttpResponse

from gateway.declared import REPEATED, Operation, Parameter
from gateway.errors import NotFoundError, RangeNotSatisfiableError
from gateway.gate import Gate
from gateway.http import JSON, TEXT, Reply, not_modified
from gateway.ranges import ByteRange, RangeNotSatisfiable, byte_range
from gateway.views import not_replayed, read_view
from knowledge.retrieval.contract.shapes import knowledge_schema
from knowledge.retrieval.render.llms import category_file
from knowledge.retrieval.render.sitemap import sitemap_part
from knowledge.retrieval.render.themes import theme_file
from knowledge.selectors.quality import metrics_document

SCENARIO_MISSING = "scenario must be one of: {known}."
SCENARIO = Parameter(
    "scenario",
    {"type": "string"},
    "chat, coding, research or support (seed §5 ①).",
    {"unknown_scenario": SCENARIO_MISSING, "repeated_parameter": REPEATED},
    required=True,
    enum="scenarios",
)
PROMPT_PACK = Operation((SCENARIO,))
PROMPT_PACK_TITLE = "prompt-pack"
NO_SUCH_FILE = "This release has no {name}."


def artifact_view(name: str, *, describedby: bool = True) -> Callable[..., HttpResponse]:
    """A view serving one artifact of the active release byte for byte, with its stored ETag."""

    @read_view
    def view(request: HttpRequest, gate: Gate) -> Reply:
        artifact = gate.release.artifacts.get(name)
        if artifact is None:
            raise NotFoundError(NO_SUCH_FILE.format(name=name))
        link = gate.path("llms.txt") if describedby else None
        ranges = {"Accept-Ranges": "bytes"}
        if request.method == "HEAD" or not_modified(request, artifact.etag):
            # Answered from the ETag alone: a large file is never read from the database for a 304 or HEAD.
            length = {"Content-Length": str(artifact.size), **ranges}
            return Reply(b"", artifact.content_type, etag=artifact.etag, describedby=link, headers=length)
        try:
            wanted = byte_range(
                request.META.get("HTTP_RANGE"),
                artifact.size,
                if_range=request.META.get("HTTP_IF_RANGE"),
                etag=artifact.etag,
            )
        except RangeNotSatisfiable:
            raise RangeNotSatisfiableError(size=artifact.size) from None
        if wanted is None and artifact.held is not None:
            return Reply(artifact.held, artifact.content_type, etag=artifact.etag, describedby=link, headers=ranges)
        part = wanted or ByteRange(0, artifact.size - 1)
        if wanted is not None:
            ranges["Content-Range"] = wanted.content_range(artifact.size)
        return Reply(
            b"",
            artifact.content_type,
            status=206 if wanted is not None else 200,
            etag=artifact.etag,
            describedby=link,
            headers=ranges,
            stream=artifact.stream(part.start, part.end),
            length=part.length,
        )

    view.__name__ = f"artifact_{name.replace('.', '_').replace('-', '_')}"
    return view


def category_artifact_view(kind: str) -> Callable[..., HttpResponse]:
    """/llms/<category>.txt and /llms-full/<category>.txt: one category's variant of the file."""

    def view(request: HttpRequest, category: str, namespace: str | None = None) -> HttpResponse:
        # A view per request (a closure, microseconds): caching one per name would grow with every slug asked.
        return artifact_view(category_file(kind, category))(request, namespace=namespace)

    view.__name__ = f"category_{kind.replace('-', '_')}"
    view.csrf_exempt = True  # type: ignore[attr-defined]
    return view


def theme_artifact_view(
    request: HttpRequest, theme: str, namespace: str | None = None, layer: str | None = None
) -> HttpResponse:
    """/themes/<slug>.md (issue 16 §3): one theme's entries in full, as llms.txt's Themes section links;
    /themes/<layer>/<slug>.md a base's theme as this namespace serves it (issue 16 §1)."""
    return artifact_view(theme_file(f"{layer}/{theme}" if layer else theme))(request, namespace=namespace)


theme_artifact_view.csrf_exempt = True  # type: ignore[attr-defined]


def sitemap_part_view(request: HttpRequest, number: int, namespace: str | None = None) -> HttpResponse:
    """/sitemaps/<n>.xml: the n-th file of a sitemap index (a namespace with more than 50,000 URLs)."""
    return artifact_view(sitemap_part(number))(request, namespace=namespace)


sitemap_part_view.csrf_exempt = True  # type: ignore[attr-defined]


@cache
def _schema_bytes() -> bytes:
    """The draft-07 schema of /context.json (seed §10), derived from the agent contract's shapes."""
    return orjson.dumps(knowledge_schema())


@read_view
def knowledge_schema_get(request: HttpRequest, gate: Gate) -> Reply:
    return Reply(_schema_bytes(), JSON)


@read_view
def prompt_pack_get(request: HttpRequest, gate: Gate) -> Reply:
    """Seed §5 ①: the scenario's prompt pack as text/plain, ${base_url} filled with the namespace's URL."""
    packs = dict(gate.release.snapshot.prompt_packs)
    scenarios = request.GET.getlist(SCENARIO.name)
    if len(scenarios) > 1:
        raise SCENARIO.refusal("repeated_parameter", param=SCENARIO.name)
    scenario = scenarios[0] if scenarios else ""
    if scenario not in packs:
        known = ", ".join(sorted(packs)) or "-"
        raise SCENARIO.refusal("unknown_scenario", known=known)
    base_url = gate.release.snapshot.namespace.base_url.rstrip("/")
    text = packs[scenario].replace("${base_url}", base_url)
    return Reply(text.encode(), TEXT, describedby=gate.path("llms.txt"))


@read_view
@not_replayed  # the latest evaluation run changes without a new release
def metrics_get(request: HttpRequest, gate: Gate) -> Reply:
    """/metrics.json and /api/metrics: measured at build time, plus the evaluation of the release it serves."""
    document = metrics_document(release=gate.release, namespace_id=gate.namespace.id)
    return Reply(orjson.dumps(document), JSON, describedby=gate.path("llms.txt"))
