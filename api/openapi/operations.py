"""Documentation views: DRF views wrapping the real handlers so drf-spectacular can describe them.

They live in their own URLconf (OPENAPI_URLCONF) used only to generate the schema; agents are served by
the plain Django views in api.views, which skip DRF's per-request machinery on the hot path.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from api.openapi import shapes
from api.views import changes, context, entries, files, verify

TAG = "agents"
ID_PARAM = OpenApiParameter("entry_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="e.g. EG-202")
HEADERS = (
    "Every response carries Content-Type with charset=utf-8, an ETag (a hash of the body), Cache-Control "
    "(public, max-age=900; private for private namespaces), X-Content-Type-Options: nosniff and the RateLimit "
    "fields; If-None-Match answers 304; HEAD answers the GET headers. Every path also exists under "
    "/t/{namespace}/. Private namespaces need Authorization: Bearer <key> and otherwise answer 404."
)
ERRORS = {
    400: OpenApiResponse(shapes.ERROR, description="Bad parameter."),
    404: OpenApiResponse(shapes.ERROR, description="No such namespace (or private without a valid key)."),
    429: OpenApiResponse(shapes.ERROR, description="Over the rate limit; see Retry-After."),
}


class _Documented(APIView):
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []


class ContextGetApi(_Documented):
    @extend_schema(
        operation_id="context_get",
        summary="A token-budgeted, cited fact pack (seed §4)",
        description=HEADERS,
        tags=[TAG],
        parameters=[
            OpenApiParameter("topic", OpenApiTypes.STR, description="Key words, Chinese or English; empty browses."),
            OpenApiParameter(
                "budget", OpenApiTypes.INT, description="Token limit, default 2000, clamped to [200, 8000]."
            ),
            OpenApiParameter("category", OpenApiTypes.STR, description="One of the namespace's categories."),
            OpenApiParameter(
                "explain", OpenApiTypes.BOOL, description="Add an `explain` object: analysis, scores, matched rule."
            ),
            OpenApiParameter("why", OpenApiTypes.STR, description="With explain: up to 20 entry IDs to explain."),
            OpenApiParameter(
                "release", OpenApiTypes.STR, description="A releaseId or knowledgeVersion served within retention."
            ),
        ],
        responses={200: OpenApiResponse(shapes.CONTEXT, description="The pack."), **ERRORS},
        examples=[OpenApiExample("seed example", value={"topic": "token 预算", "budget": 2000}, request_only=True)],
    )
    def get(self, request: Request, namespace: str | None = None) -> HttpResponse:
        return context.context_get(request._request, namespace=namespace)


class EntryGetApi(_Documented):
    @extend_schema(
        operation_id="entry_get",
        summary="One entry by ID (seed §6)",
        description=HEADERS,
        tags=[TAG],
        parameters=[ID_PARAM],
        responses={
            200: OpenApiResponse(shapes.ENTRY, description="The published entry."),
            404: OpenApiResponse(shapes.MISSING, description="Unknown here, with the three nearest IDs."),
            410: OpenApiResponse(shapes.TOMBSTONE, description="Retired."),
            429: ERRORS[429],
        },
    )
    def get(self, request: Request, entry_id: str, namespace: str | None = None) -> HttpResponse:
        return entries.entry_get(request._request, namespace=namespace, entry_id=entry_id)


class EntryMarkdownGetApi(_Documented):
    @extend_schema(
        operation_id="entry_markdown_get",
        summary="One entry as Markdown",
        description=HEADERS,
        tags=[TAG],
        parameters=[ID_PARAM],
        responses={
            (200, "text/markdown"): OpenApiTypes.STR,
            (404, "text/markdown"): OpenApiTypes.STR,
            (410, "text/markdown"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request, entry_id: str, namespace: str | None = None) -> HttpResponse:
        return entries.entry_markdown_get(request._request, namespace=namespace, entry_id=entry_id)


class PromptPackGetApi(_Documented):
    @extend_schema(
        operation_id="prompt_pack_get",
        summary="Paste-in instructions for an assistant (seed §5 ①)",
        description=HEADERS,
        tags=[TAG],
        parameters=[
            OpenApiParameter(
                "scenario", OpenApiTypes.STR, required=True, enum=["chat", "coding", "research", "support"]
            )
        ],
        responses={(200, "text/plain"): OpenApiTypes.STR, 400: ERRORS[400]},
    )
    def get(self, request: Request, namespace: str | None = None) -> HttpResponse:
        return files.prompt_pack_get(request._request, namespace=namespace)


class MetricsGetApi(_Documented):
    @extend_schema(
        operation_id="metrics_get",
        summary="Measured token costs, budget scan and the latest evaluation",
        description=HEADERS,
        tags=[TAG],
        responses={200: OpenApiResponse(shapes.METRICS)},
    )
    def get(self, request: Request, namespace: str | None = None) -> HttpResponse:
        return files.metrics_get(request._request, namespace=namespace)


class ChangesGetApi(_Documented):
    @extend_schema(
        operation_id="changes_get",
        summary="What changed per entry since a release (the change feed)",
        description=HEADERS,
        tags=[TAG],
        parameters=[
            OpenApiParameter(
                "since",
                OpenApiTypes.STR,
                required=True,
                description="A releaseId, a knowledgeVersion (1.4.0), an ISO 8601 time, or 0 for everything.",
            ),
            OpenApiParameter("after", OpenApiTypes.STR, description="Continue after this entry ID (see `next`)."),
            OpenApiParameter("limit", OpenApiTypes.INT, description="Changes per page, 1-1000, default 200."),
        ],
        responses={200: OpenApiResponse(shapes.CHANGES, description="One page of changes."), **ERRORS},
    )
    def get(self, request: Request, namespace: str | None = None) -> HttpResponse:
        return changes.changes_get(request._request, namespace=namespace)


class VerifyPostApi(_Documented):
    @extend_schema(
        operation_id="verify_post",
        summary="Check an answer's [ID] citations against the release or pack it was written from",
        description=(
            "Reports each citation that was not in that release or pack, is retired since, or is cited for "
            "figures its entries do not contain verbatim; the check is recorded for the namespace. "
            "Every path also exists under /t/{namespace}/."
        ),
        tags=[TAG],
        request={"application/json": shapes.VERIFY_REQUEST},
        responses={200: OpenApiResponse(shapes.VERIFY, description="The report."), **ERRORS},
    )
    def post(self, request: Request, namespace: str | None = None) -> HttpResponse:
        return verify.verify_post(request._request, namespace=namespace)


urlpatterns = [
    path("api/context", ContextGetApi.as_view()),
    path("api/entries/<str:entry_id>", EntryGetApi.as_view()),
    path("api/entries/<str:entry_id>.md", EntryMarkdownGetApi.as_view()),
    path("api/prompt-pack", PromptPackGetApi.as_view()),
    path("api/metrics", MetricsGetApi.as_view()),
    path("api/changes", ChangesGetApi.as_view()),
    path("api/verify", VerifyPostApi.as_view()),
]
