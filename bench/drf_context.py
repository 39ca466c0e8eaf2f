"""Bench only: /api/context as a Django REST framework APIView with a serializer, to measure what DRF costs.

Issue 15 §5 asks whether the public read endpoints should be DRF views. This is that variant, built as
one would build it without giving up the project's rules: an APIView (no authentication, permission or
throttle classes: the gate admits the request, as for the plain view) whose query parameters go through
a DRF Serializer; the serializer's field hooks call the declared parsers of gateway.params, so the rules
and their codes are the same, and the answer is the plain view's (same gate, bytes and headers, marked
replayable for gateway.replay). bench.drf serves it with DJANGO_SETTINGS_MODULE=bench.drf_context_settings
and measures it side by side with the plain view. Production serves api.views.context (the README says why).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import path
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from evergreen_site import urls as production
from gateway.context import context_answer, context_observed
from gateway.gate import Gate
from gateway.http import JSON, Reply
from gateway.params import (
    BUDGET,
    BUDGET_MODE,
    CATEGORY,
    CONTEXT,
    PATHS,
    TOPIC,
    budget_mode_parse,
    budget_parse,
    category_parse,
    paths_parse,
    topic_parse,
)
from gateway.views import read_view
from knowledge.retrieval.payload import ContextQuery

SINGLE = (TOPIC.name, BUDGET.name, CATEGORY.name, BUDGET_MODE.name)


class ContextParameters(serializers.Serializer[dict[str, Any]]):
    """The /api/context query as DRF validates a query: typed fields, then a hook per field for its rule."""

    topic = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    budget = serializers.CharField(required=False, allow_blank=True, default="")
    category = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, default="")
    budgetMode = serializers.CharField(required=False, allow_blank=True, default="")  # noqa: N815 (the query name)
    paths = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False, default=list)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, QueryDict):
            for name in SINGLE:
                if len(data.getlist(name)) > 1:
                    raise CONTEXT.refusal("repeated_parameter", param=name)
            data = {**{name: data[name] for name in SINGLE if name in data}, PATHS.name: data.getlist(PATHS.name)}
        return super().to_internal_value(data)

    def validate_topic(self, value: str) -> str:
        return topic_parse(value)

    def validate_budget(self, value: str) -> int:
        return budget_parse(value, default=self.context["default_budget"])

    def validate_category(self, value: str) -> str | None:
        return category_parse(value, categories=self.context["categories"])

    def validate_budgetMode(self, value: str) -> str:  # noqa: N802 (DRF names the hook after the field)
        return budget_mode_parse(value)

    def validate_paths(self, value: list[str]) -> tuple[str, ...]:
        return paths_parse([path for path in value if path.strip()] or None)


@read_view
def _context_reply(request: HttpRequest, gate: Gate, *, params: QueryDict) -> Reply:
    release = gate.release
    namespace = release.snapshot.namespace
    context = {"categories": [c.slug for c in namespace.categories], "default_budget": namespace.default_budget}
    parameters = ContextParameters(data=params, context=context)
    parameters.is_valid(raise_exception=True)
    valid = parameters.validated_data
    query = ContextQuery(
        topic=valid["topic"],
        budget=valid["budget"] if valid["budget"] != "" else budget_parse(None, default=namespace.default_budget),
        category=valid["category"] or None,
        limit=None,
        budget_mode=valid["budgetMode"] or "entries",
        paths=valid["paths"] or (),
    )
    answer = context_answer(release, query)
    observed = context_observed(release, query, answer, channel="rest")
    return Reply(answer.body, JSON, etag=answer.etag, describedby=gate.path("llms.txt"), observed=observed)


class ContextApi(APIView):
    """GET /api/context through DRF's dispatch: Request, content negotiation, permission and throttle checks."""

    authentication_classes = ()
    permission_classes = ()
    throttle_classes = ()
    renderer_classes = (JSONRenderer,)

    def get(self, request: Request, namespace: str | None = None) -> HttpResponse:
        return _context_reply(request._request, namespace=namespace, params=request.query_params)


context_api = ContextApi.as_view()
# The DRF route first, then every production route (evergreen_site.urls's list is untyped: list[object]).
urlpatterns: list[Any] = [
    path("api/context", context_api, name="api-context"),
    path("t/<slug:namespace>/api/context", context_api, name="api-context"),
    *production.urlpatterns,
]
handler403 = production.handler403
handler500 = production.handler500
