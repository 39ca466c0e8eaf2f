"""Synonym sets: list and read them, create one, propose new phrases, and review versions like entries'."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import Role, SynonymSet, SynonymVersion
from knowledge.services.synonyms import (
    SynonymContent,
    synonym_approve,
    synonym_draft,
    synonym_publish,
    synonym_reject,
    synonym_save,
    synonym_set_create,
    synonym_submit,
    synonym_withdraw,
)
from manage_api.base import ManageViewSet
from manage_api.filters import SynonymSetFilter, SynonymVersionFilter
from manage_api.schema import errors
from manage_api.serializers import (
    NoteSerializer,
    SynonymContentSerializer,
    SynonymSetCreateSerializer,
    SynonymSetSerializer,
    SynonymVersionSerializer,
)
from manage_api.views.review import ID, ReviewViewSet, review_schema


def _content(data: dict[str, Any]) -> SynonymContent:
    return SynonymContent.build(phrases=data["phrases"], two_way=data["two_way"], enabled=data["enabled"])


@extend_schema_view(
    list=extend_schema(
        summary="List synonym sets", responses={200: SynonymSetSerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One synonym set with its versions",
        parameters=[ID],
        responses={200: SynonymSetSerializer, **errors(401, 404, 429)},
    ),
)
class SynonymSetViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = SynonymSetSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = SynonymSetFilter
    roles: ClassVar[dict[str, str]] = {"create": Role.EDITOR, "propose": Role.EDITOR}

    def get_queryset(self) -> QuerySet[SynonymSet]:
        return self.scoped(SynonymSet.objects.select_related("live_version").prefetch_related("versions__author"))

    def _answer(self, synonym_set: SynonymSet, code: int = status.HTTP_200_OK) -> Response:
        return Response(SynonymSetSerializer(self.get_queryset().get(pk=synonym_set.pk)).data, status=code)

    @extend_schema(
        summary="Create a synonym set (its first version is a draft)",
        request=SynonymSetCreateSerializer,
        responses={201: SynonymSetSerializer, **errors(400, 401, 403, 404, 422, 429)},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = SynonymSetCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        synonym_set, _ = synonym_set_create(
            namespace=self.namespace,
            name=body.validated_data["name"],
            content=_content(body.validated_data),
            actor=request.user,
        )
        return self._answer(synonym_set, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Propose new phrases: the set's draft (opened if needed) takes them",
        description="Submit the draft afterwards through synonym-versions/{id}/submit/.",
        parameters=[ID],
        request=SynonymContentSerializer,
        responses={200: SynonymVersionSerializer, **errors(400, 401, 403, 404, 422, 429)},
    )
    @action(detail=True, methods=["post"])
    def propose(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        synonym_set = get_object_or_404(self.get_queryset(), pk=self.kwargs["pk"])
        body = SynonymContentSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        content = _content(body.validated_data)
        with transaction.atomic():
            draft = synonym_draft(synonym_set=synonym_set, actor=request.user)
            draft = synonym_save(version=draft, content=content, actor=request.user)
        return Response(SynonymVersionSerializer(draft).data)


@review_schema("synonym-set", SynonymVersionSerializer, NoteSerializer)
class SynonymVersionViewSet(ReviewViewSet):
    serializer_class = SynonymVersionSerializer
    namespace_path = "synonym_set__namespace"
    filter_backends = [DjangoFilterBackend]
    filterset_class = SynonymVersionFilter
    services: ClassVar[Mapping[str, Callable[..., Any]]] = {
        "submit": synonym_submit,
        "withdraw": synonym_withdraw,
        "approve": synonym_approve,
        "reject": synonym_reject,
        "publish": synonym_publish,
    }

    def get_queryset(self) -> QuerySet[SynonymVersion]:
        return self.scoped(SynonymVersion.objects.select_related("synonym_set", "author", "reviewer"))
