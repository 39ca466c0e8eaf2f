"""Versions: read, edit a draft under optimistic locking (If-Match), and move it through review."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import QuerySet
from django.utils.http import parse_etags
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.errors import ConflictError
from knowledge.models import EntryVersion, Role
from knowledge.services.versions import (
    version_approve,
    version_publish,
    version_reject,
    version_save,
    version_submit,
    version_withdraw,
)
from manage_api.base import ManageViewSet
from manage_api.errors import PreconditionFailed, PreconditionRequired
from manage_api.filters import StrictOrderingFilter, VersionFilter
from manage_api.schema import errors
from manage_api.serializers import (
    ApproveSerializer,
    ContentSerializer,
    NoteSerializer,
    RejectSerializer,
    VersionSerializer,
    version_etag,
)

VERSION_ID = OpenApiParameter("pk", int, OpenApiParameter.PATH, description="The version's id (`id` in lists).")
IF_MATCH = OpenApiParameter(
    "If-Match", str, OpenApiParameter.HEADER, required=True, description="The ETag of the draft as last read."
)
TRANSITION_ERRORS = errors(400, 401, 403, 404, 409, 422, 429)


def if_match_passes(header: str, etag: str) -> bool:
    """RFC 9110 §13.1.1: `*` matches the current draft; otherwise any listed tag, compared strongly (a weak
    tag, W/"…", never matches)."""
    tags = parse_etags(header)
    return tags == ["*"] or etag in tags


def _with_etag(version: EntryVersion) -> Response:
    response = Response(VersionSerializer(version).data)
    response["ETag"] = version_etag(version)
    return response


@extend_schema_view(
    list=extend_schema(
        summary="List versions", responses={200: VersionSerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One version, with its ETag",
        parameters=[VERSION_ID],
        responses={200: VersionSerializer, **errors(401, 404, 429)},
    ),
)
class VersionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = VersionSerializer
    namespace_path = "entry__namespace"
    filter_backends = [DjangoFilterBackend, StrictOrderingFilter]
    filterset_class = VersionFilter
    ordering_fields = ["id", "modified_at", "submitted_at", "updated"]
    ordering = ["-id"]
    roles: ClassVar[dict[str, str]] = {
        "partial_update": Role.EDITOR,
        "submit": Role.EDITOR,
        "withdraw": Role.EDITOR,
        "approve": Role.REVIEWER,
        "reject": Role.REVIEWER,
        "publish": Role.REVIEWER,
    }

    def get_queryset(self) -> QuerySet[EntryVersion]:
        return self.scoped(EntryVersion.objects.select_related("entry", "author", "reviewer"))

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return _with_etag(self.get_object())

    @extend_schema(
        summary="Edit a draft",
        description="Send only the fields that change, with If-Match: the ETag of the draft as you read it. "
        "Someone else's save in between answers 412 and changes nothing.",
        parameters=[VERSION_ID, IF_MATCH],
        request=ContentSerializer(partial=True),
        responses={200: VersionSerializer, **errors(400, 401, 403, 404, 412, 422, 428, 429)},
    )
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        version = self.get_object()
        expected = request.headers.get("If-Match", "").strip()
        if not expected:
            raise PreconditionRequired()
        if not if_match_passes(expected, version_etag(version)):
            raise PreconditionFailed()
        body = ContentSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        try:
            saved = version_save(
                version=version,
                content=body.content(base=version),
                expected_lock_version=version.lock_version,
                actor=request.user,
            )
        except ConflictError as error:
            raise PreconditionFailed() from error
        return _with_etag(saved)

    def _move(
        self, request: Request, body_class: type[serializers.Serializer], service: Callable[..., Any]
    ) -> Response:
        version = self.get_object()
        body = body_class(data=request.data)
        body.is_valid(raise_exception=True)
        moved = service(version=version, actor=request.user, **body.validated_data)
        return _with_etag(EntryVersion.objects.select_related("entry", "author", "reviewer").get(pk=moved.pk))

    @extend_schema(
        summary="Submit a draft for review",
        parameters=[VERSION_ID],
        request=NoteSerializer,
        responses={200: VersionSerializer, **TRANSITION_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def submit(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, NoteSerializer, version_submit)

    @extend_schema(
        summary="Withdraw a draft or a version in review",
        parameters=[VERSION_ID],
        request=NoteSerializer,
        responses={200: VersionSerializer, **TRANSITION_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def withdraw(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, NoteSerializer, version_withdraw)

    @extend_schema(
        summary="Approve a version in review (four eyes)",
        description="Nobody who wrote the version may approve it unless the namespace allows single-person "
        "review (403 `four_eyes`). `publish_at` schedules the go-live; one more than 5 minutes ago is most likely a "
        "typo and answers 400 `invalid_parameter`.",
        parameters=[VERSION_ID],
        request=ApproveSerializer,
        responses={200: VersionSerializer, **TRANSITION_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, ApproveSerializer, version_approve)

    @extend_schema(
        summary="Reject a version in review, saying what has to change",
        parameters=[VERSION_ID],
        request=RejectSerializer,
        responses={200: VersionSerializer, **TRANSITION_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, RejectSerializer, version_reject)

    @extend_schema(
        summary="Publish an approved version",
        description="The previous live version is superseded and a release build is queued.",
        parameters=[VERSION_ID],
        request=NoteSerializer,
        responses={200: VersionSerializer, **TRANSITION_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._move(request, NoteSerializer, version_publish)
