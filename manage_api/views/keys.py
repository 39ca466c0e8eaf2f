"""The namespace's API keys for private reads: list, create (the key is in the answer, once), revoke."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import ApiKey, Role
from knowledge.services.api_keys import api_key_create, api_key_revoke
from manage_api.base import ManageViewSet
from manage_api.bodies import EmptyBody
from manage_api.filters import ApiKeyFilter
from manage_api.schema import errors
from manage_api.serializers import ApiKeyCreatedSerializer, ApiKeyCreateSerializer, ApiKeySerializer

ID = OpenApiParameter("id", int, OpenApiParameter.PATH)


@extend_schema_view(
    list=extend_schema(
        summary="List API keys (namespace admins)",
        responses={200: ApiKeySerializer(many=True), **errors(400, 401, 403, 404, 429)},
    ),
    retrieve=extend_schema(
        summary="One API key", parameters=[ID], responses={200: ApiKeySerializer, **errors(401, 403, 404, 429)}
    ),
)
class ApiKeyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = ApiKeySerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = ApiKeyFilter
    roles: ClassVar[dict[str, str]] = {
        "list": Role.ADMIN,
        "retrieve": Role.ADMIN,
        "create": Role.ADMIN,
        "revoke": Role.ADMIN,
    }

    def get_queryset(self) -> QuerySet[ApiKey]:
        return self.scoped(ApiKey.objects.select_related("created_by"))

    @extend_schema(
        summary="Create an API key",
        description="The answer holds the key itself, the only time it is shown (Cache-Control: no-store); "
        "only its SHA-256 is stored.",
        request=ApiKeyCreateSerializer,
        responses={201: ApiKeyCreatedSerializer, **errors(400, 401, 403, 404, 429)},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = ApiKeyCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        key, raw = api_key_create(namespace=self.namespace, name=body.validated_data["name"], actor=request.user)
        data = {**ApiKeySerializer(key).data, "key": raw}
        response = Response(data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response

    @extend_schema(
        summary="Revoke an API key for good",
        parameters=[ID],
        request=None,
        responses={200: ApiKeySerializer, **errors(400, 401, 403, 404, 429)},
    )
    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = self.get_object()
        EmptyBody(data=request.data).is_valid(raise_exception=True)
        key = api_key_revoke(key=key, actor=request.user)
        return Response(ApiKeySerializer(key).data)
