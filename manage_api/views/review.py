"""Versions that move through review (synonym sets, reviewed texts): list, read, submit … publish.

A subclass names its version serializer, its services per action (`services`) and the body approval
takes; `review_schema` documents the five actions with that serializer. The services enforce the
transition table, roles, four eyes and the audit trail, as they do for the admin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import Role
from manage_api.base import ManageViewSet
from manage_api.schema import errors
from manage_api.serializers import NoteSerializer, RejectSerializer

ID = OpenApiParameter("id", int, OpenApiParameter.PATH)
TRANSITION_ERRORS = errors(400, 401, 403, 404, 409, 422, 429)
SUMMARIES = {
    "submit": "Submit a draft for review",
    "withdraw": "Withdraw a draft or a version in review",
    "approve": "Approve a version in review (four eyes)",
    "reject": "Reject a version in review",
    "publish": "Publish an approved version (the next release uses it)",
}


def review_schema(
    noun: str, serializer: type[serializers.Serializer], approve_body: type[serializers.Serializer], **summaries: str
) -> Callable[[type], type]:
    """The OpenAPI of a review viewset: its lists, and the five actions answering `serializer`."""
    requests = {"approve": approve_body, "reject": RejectSerializer}
    actions = {
        name: extend_schema(
            summary={**SUMMARIES, **summaries}[name],
            parameters=[ID],
            request=requests.get(name, NoteSerializer),
            responses={200: serializer, **TRANSITION_ERRORS},
        )
        for name in SUMMARIES
    }
    return extend_schema_view(
        list=extend_schema(
            summary=f"List {noun} versions", responses={200: serializer(many=True), **errors(400, 401, 404, 429)}
        ),
        retrieve=extend_schema(
            summary=f"One {noun} version", parameters=[ID], responses={200: serializer, **errors(401, 404, 429)}
        ),
        **actions,
    )


class ReviewViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    services: ClassVar[Mapping[str, Callable[..., Any]]] = {}
    approve_body: ClassVar[type[serializers.Serializer]] = NoteSerializer
    roles: ClassVar[dict[str, str]] = {
        "submit": Role.EDITOR,
        "withdraw": Role.EDITOR,
        "approve": Role.REVIEWER,
        "reject": Role.REVIEWER,
        "publish": Role.REVIEWER,
    }

    def _move(self, request: Request, body_class: type[serializers.Serializer]) -> Response:
        version = self.get_object()
        body = body_class(data=request.data)
        body.is_valid(raise_exception=True)
        moved = self.services[self.action or ""](version=version, actor=request.user, **body.validated_data)
        return Response(self.get_serializer(self.get_queryset().get(pk=moved.pk)).data)

    @action(detail=True, methods=["post"])
    def submit(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, NoteSerializer)

    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, NoteSerializer)

    @action(detail=True, methods=["post"])
    def approve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, self.approve_body)

    @action(detail=True, methods=["post"])
    def reject(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, RejectSerializer)

    @action(detail=True, methods=["post"])
    def publish(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, NoteSerializer)
