"""Agent feedback (list, resolve) and the audit trail (read only)."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import AuditRecord, Feedback, Role
from knowledge.services.feedback import feedback_set_status
from manage_api.base import ManageViewSet
from manage_api.filters import AuditFilter, FeedbackFilter
from manage_api.schema import errors
from manage_api.serializers import AuditSerializer, FeedbackSerializer, FeedbackStatusSerializer

ID = OpenApiParameter("id", int, OpenApiParameter.PATH)


@extend_schema_view(
    list=extend_schema(
        summary="List agent feedback", responses={200: FeedbackSerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One report", parameters=[ID], responses={200: FeedbackSerializer, **errors(401, 404, 429)}
    ),
)
class FeedbackViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = FeedbackSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = FeedbackFilter
    roles: ClassVar[dict[str, str]] = {"resolve": Role.EDITOR}

    def get_queryset(self) -> QuerySet[Feedback]:
        return self.scoped(Feedback.objects.all())

    @extend_schema(
        summary="Mark a report handled, dismissed or open again",
        parameters=[ID],
        request=FeedbackStatusSerializer,
        responses={200: FeedbackSerializer, **errors(400, 401, 403, 404, 429)},
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        report = self.get_object()
        body = FeedbackStatusSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        changed = feedback_set_status(feedback=report, status=body.validated_data["status"], actor=request.user)
        return Response(FeedbackSerializer(changed).data)


@extend_schema_view(
    list=extend_schema(
        summary="The audit trail", responses={200: AuditSerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One audit record", parameters=[ID], responses={200: AuditSerializer, **errors(401, 404, 429)}
    ),
)
class AuditViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = AuditSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = AuditFilter

    def get_queryset(self) -> QuerySet[AuditRecord]:
        return self.scoped(AuditRecord.objects.select_related("actor", "entry", "version", "release"))
