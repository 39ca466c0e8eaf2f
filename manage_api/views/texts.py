"""Themes and base namespaces (issue 16 §4): propose them, list them, and review their versions.

Both are reviewed texts: every write goes through knowledge.services.texts, as the admin's does, so
the roles, four eyes, the safety scan, the checks of a list of bases (a cycle, a private base …) and
the audit trail hold alike. A proposal is the text's draft (opened if needed) saving the content
sent; it is submitted, approved and published through text-versions/{id}/….
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.db import transaction
from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import Namespace, ReviewedText, Role, TextKind, TextVersion
from knowledge.selectors.layers import bases_list
from knowledge.services.texts import TEXT_TRANSITIONS, text_draft, text_save
from manage_api.base import ManageViewSet
from manage_api.filters import TextVersionFilter
from manage_api.schema import errors
from manage_api.serializers import AcknowledgedApprovalSerializer
from manage_api.text_serializers import (
    BasesProposalSerializer,
    BasesSerializer,
    TextVersionSerializer,
    ThemeContentSerializer,
    ThemeCreateSerializer,
    ThemeSerializer,
)
from manage_api.views.review import ReviewViewSet, review_schema

KEY = OpenApiParameter("key", str, OpenApiParameter.PATH, description="The theme's slug.")
WRITE_ERRORS = errors(400, 401, 403, 404, 409, 422, 429)
VERSIONS = Prefetch("versions", queryset=TextVersion.objects.select_related("author", "reviewer", "text"))


def _propose(namespace: Namespace, *, kind: str, key: str = "", content: Mapping[str, Any], actor: Any) -> TextVersion:
    """The text's draft (opened if needed) with `content` saved: one transaction, so a refusal leaves nothing."""
    with transaction.atomic():
        draft = text_draft(namespace=namespace, kind=kind, key=key, actor=actor)
        return text_save(version=draft, content=content, expected_lock_version=draft.lock_version, actor=actor)


def _version_answer(version: TextVersion, code: int = status.HTTP_200_OK) -> Response:
    fresh = TextVersion.objects.select_related("text", "author", "reviewer").get(pk=version.pk)
    return Response(TextVersionSerializer(fresh).data, status=code)


class BasesViewSet(ManageViewSet):
    """The namespace's one list of bases: `bases/` reads it, `bases/propose/` proposes a new one
    (mounted by manage_api.urls: one object per namespace, nothing to list or look up)."""

    queryset = ReviewedText.objects.none()  # drf-spectacular asks for a model
    roles: ClassVar[dict[str, str]] = {"propose": Role.EDITOR}

    @extend_schema(
        summary="The base namespaces: what releases build on now, and every version of the list",
        responses={200: BasesSerializer, **errors(401, 404, 429)},
    )
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        versions = TextVersion.objects.filter(text__namespace=self.namespace, text__kind=TextKind.BASES)
        versions = versions.select_related("text", "author", "reviewer").order_by("-number")
        body = {"bases": [base.slug for base in bases_list(namespace=self.namespace)], "versions": versions}
        return Response(BasesSerializer(body).data)

    @extend_schema(
        summary="Propose a list of base namespaces (the list's draft, opened if needed, takes it)",
        description="Refused with 422 and a `layers.*` code (layers.cycle, layers.private_base, layers.prefix, "
        "layers.unknown_namespace …) when the list cannot be declared; checked again at "
        "submit, approval and publish. Submit the draft through text-versions/{id}/submit/.",
        request=BasesProposalSerializer,
        responses={200: TextVersionSerializer, **WRITE_ERRORS},
    )
    def propose(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = BasesProposalSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        content = {"bases": body.validated_data["bases"]}
        return _version_answer(_propose(self.namespace, kind=TextKind.BASES, content=content, actor=request.user))


@extend_schema_view(
    list=extend_schema(
        summary="List themes", responses={200: ThemeSerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One theme with its versions",
        parameters=[KEY],
        responses={200: ThemeSerializer, **errors(401, 404, 429)},
    ),
)
class ThemeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = ThemeSerializer
    lookup_field = "key"
    roles: ClassVar[dict[str, str]] = {"create": Role.EDITOR, "propose": Role.EDITOR}

    def get_queryset(self) -> QuerySet[ReviewedText]:
        themes = ReviewedText.objects.filter(kind=TextKind.THEME).select_related("live_version")
        return self.scoped(themes.prefetch_related(VERSIONS))

    @extend_schema(
        summary="Create a theme (its first version is a draft)",
        request=ThemeCreateSerializer,
        responses={201: TextVersionSerializer, **WRITE_ERRORS},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = ThemeCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        content = dict(body.validated_data)
        key = content.pop("key")
        if ReviewedText.objects.filter(namespace=self.namespace, kind=TextKind.THEME, key=key).exists():
            raise serializers.ValidationError({"key": [f"The theme “{key}” exists: propose to it."]})
        version = _propose(self.namespace, kind=TextKind.THEME, key=key, content=content, actor=request.user)
        return _version_answer(version, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Propose new content for a theme: its draft (opened if needed) takes it",
        description="Submit the draft afterwards through text-versions/{id}/submit/.",
        parameters=[KEY],
        request=ThemeContentSerializer,
        responses={200: TextVersionSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def propose(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        theme = get_object_or_404(self.get_queryset(), key=self.kwargs["key"])
        body = ThemeContentSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        content = dict(body.validated_data)
        return _version_answer(
            _propose(self.namespace, kind=TextKind.THEME, key=theme.key, content=content, actor=request.user)
        )


@review_schema(
    "reviewed-text",
    TextVersionSerializer,
    AcknowledgedApprovalSerializer,
    approve="Approve a version in review (four eyes; a list of bases is checked again)",
)
class TextVersionViewSet(ReviewViewSet):
    """Versions of every reviewed text (themes, base namespaces, the profile, doc pages, prompt packs)."""

    serializer_class = TextVersionSerializer
    namespace_path = "text__namespace"
    filter_backends = [DjangoFilterBackend]
    filterset_class = TextVersionFilter
    approve_body = AcknowledgedApprovalSerializer
    services = TEXT_TRANSITIONS

    def get_queryset(self) -> QuerySet[TextVersion]:
        return self.scoped(TextVersion.objects.select_related("text", "author", "reviewer"))
