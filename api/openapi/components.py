"""Reusable parts of the OpenAPI document: the §10 headers, the error answers with their codes, shared parameters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from api.openapi import shapes
from gateway.params import QUERY_TEXT
from gateway.pinning import RELEASE as RELEASE_PARAMETER

JSON = "application/json"
MARKDOWN = "text/markdown"
HTML = "text/html"
TEXT = "text/plain"

# Seed §10 on every answer; the names are the ones gateway.http.finish and gateway.pinning send.
HEADERS: dict[str, Any] = {
    "ETag": {"description": "A hash of the body; send it back in If-None-Match for a 304.", "schema": shapes.STRING},
    "Cache-Control": {
        "description": "public, max-age=900 (private for private namespaces; no-store on 429).",
        "schema": shapes.STRING,
    },
    "X-Content-Type-Options": {"description": "Always nosniff.", "schema": {"const": "nosniff"}},
    "Evergreen-Release": {"description": "The releaseId the answer comes from.", "schema": shapes.STRING},
    "Evergreen-Knowledge-Version": {"description": "That release's knowledgeVersion.", "schema": shapes.STRING},
    "RateLimit": {
        "description": 'draft-ietf-httpapi-ratelimit-headers: "default";r=<left>;t=<seconds>.',
        "schema": shapes.STRING,
    },
    "RateLimit-Policy": {"description": '"default";q=<limit>;w=<window seconds>.', "schema": shapes.STRING},
    "Retry-After": {"description": "Seconds until the window admits a request again.", "schema": shapes.STRING},
    "Link": {
        "description": 'rel="alternate" (the Markdown or HTML twin) and rel="describedby" (llms.txt).',
        "schema": shapes.STRING,
    },
    "Allow": {"description": "The methods the route answers.", "schema": shapes.STRING},
    "Accept-Ranges": {"description": "bytes: release files answer Range requests.", "schema": {"const": "bytes"}},
    "Content-Range": {
        "description": "bytes <first>-<last>/<size> on a 206; bytes */<size> on a 416.",
        "schema": shapes.STRING,
    },
}
SECTION_10 = ("ETag", "Cache-Control", "X-Content-Type-Options")


def header_refs(names: Iterable[str], *, required: Iterable[str] = SECTION_10) -> dict[str, Any]:
    must = set(required)
    return {
        name: ({"$ref": f"#/components/headers/{name}"} if name not in must else {**HEADERS[name], "required": True})
        for name in names
    }


READ_HEADERS = (*SECTION_10, "Evergreen-Release", "Evergreen-Knowledge-Version", "RateLimit", "RateLimit-Policy")


def error_schema(codes: Iterable[str]) -> dict[str, Any]:
    """The error body with its `code` restricted to what the operation really answers."""
    error = shapes.ERROR["properties"]["error"]
    code = {**shapes.STRING, "enum": sorted(set(codes))}
    return shapes.obj({"error": {**error, "properties": {**error["properties"], "code": code}}})


def error_response(description: str, codes: Iterable[str], *, headers: Iterable[str] = SECTION_10) -> dict[str, Any]:
    return {
        "description": description,
        "headers": header_refs(headers),
        "content": {JSON: {"schema": error_schema(codes)}},
    }


# Refusals every namespace route may answer before its own parameters are read (their declarations).
COMMON_BAD = (*QUERY_TEXT.codes(), *RELEASE_PARAMETER.refusals)
RESPONSES: dict[str, Any] = {
    "NotFound": error_response(
        "No such namespace here, a private one without a valid key, or a namespace with no release yet "
        "(all answer alike).",
        ["not_found"],
    ),
    "MethodNotAllowed": error_response(
        "Only the documented methods (GET and HEAD for reads).", ["method_not_allowed"], headers=(*SECTION_10, "Allow")
    ),
    "ReleaseExpired": error_response(
        "?release= names a release that stopped serving before the retention window.", ["release_expired"]
    ),
    "RateLimited": error_response(
        "Over the namespace's rate limit (120 per minute per client by default).",
        ["rate_limited"],
        headers=(*SECTION_10, "Retry-After", "RateLimit", "RateLimit-Policy"),
    ),
}


def standard_refusals(*, release: bool = True) -> dict[str, Any]:
    refusals = {
        "404": {"$ref": "#/components/responses/NotFound"},
        "405": {"$ref": "#/components/responses/MethodNotAllowed"},
        "429": {"$ref": "#/components/responses/RateLimited"},
    }
    if release:
        refusals["410"] = {"$ref": "#/components/responses/ReleaseExpired"}
    return refusals


def bad_request(codes: Iterable[str], *, release: bool = True) -> dict[str, Any]:
    """`release`: the route reads ?release= (every read route; POST /api/verify reads its body's)."""
    common = COMMON_BAD if release else QUERY_TEXT.codes()
    return error_response("A bad parameter; `error.param` names it.", [*common, *codes])


PARAMETERS: dict[str, Any] = {"release": RELEASE_PARAMETER.openapi()}
RELEASE = {"$ref": "#/components/parameters/release"}


def query(name: str, schema: dict[str, Any], description: str, *, required: bool = False) -> dict[str, Any]:
    parameter: dict[str, Any] = {"name": name, "in": "query", "description": description, "schema": schema}
    if required:
        parameter["required"] = True
    else:
        parameter["allowEmptyValue"] = True
    return parameter


def path_param(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": schema}


def body(media: str, schema: dict[str, Any] | None = None, description: str = "") -> dict[str, Any]:
    return {"description": description, "content": {media: {"schema": schema or shapes.STRING}}}


def ok(description: str, content: dict[str, Any], *, headers: Iterable[str] = READ_HEADERS) -> dict[str, Any]:
    return {"description": description, "headers": header_refs(headers), "content": content}


def components() -> dict[str, Any]:
    return {"headers": HEADERS, "responses": RESPONSES, "parameters": PARAMETERS}
