"""Releases: list and read them, roll back to one, activate one the golden questions held; golden questions
and evaluation runs against releases."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import EvaluationRun, GoldenQuestion, Release, Role
from knowledge.selectors.evaluation import ReleasePrunedError, golden_questions_list, release_for_evaluation
from knowledge.services.evaluation import evaluation_run_record, questions_evaluate
from knowledge.services.gate_override import release_gate_override
from knowledge.services.golden_questions import golden_question_create
from knowledge.services.rollback import release_rollback
from manage_api.base import ManageViewSet
from manage_api.errors import error_body
from manage_api.filters import EvaluationRunFilter, GoldenQuestionFilter, ReleaseFilter
from manage_api.schema import errors
from manage_api.serializers import (
    ActivateSerializer,
    EvaluationRunCreateSerializer,
    EvaluationRunDetailSerializer,
    EvaluationRunSerializer,
    GoldenQuestionCreateSerializer,
    GoldenQuestionSerializer,
    NoteSerializer,
    ReleaseDetailSerializer,
    ReleaseSerializer,
)

SEQUENCE = OpenApiParameter("sequence", int, OpenApiParameter.PATH, description="The release's sequence number.")
NO_RELEASE = "The namespace has no active release yet; publish something first, or name a release."
NO_QUESTIONS = "The namespace has no golden questions to evaluate."
# What a release list does not read: manifests, metrics and gate reports.
UNLISTED = (
    "manifest_stored",
    "metrics",
    "gate__report",
    "gate__compared_with__manifest_stored",
    "gate__compared_with__metrics",
)


@extend_schema_view(
    list=extend_schema(
        summary="List releases", responses={200: ReleaseSerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One release with its manifest",
        parameters=[SEQUENCE],
        responses={200: ReleaseDetailSerializer, **errors(401, 404, 429)},
    ),
)
class ReleaseViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    lookup_field = "sequence"
    lookup_value_regex = "[0-9]+"
    filter_backends = [DjangoFilterBackend]
    filterset_class = ReleaseFilter
    roles: ClassVar[dict[str, str]] = {"rollback": Role.REVIEWER, "activate": Role.REVIEWER}

    def get_queryset(self) -> QuerySet[Release]:
        releases = Release.objects.select_related("namespace", "gate__compared_with", "gate__decided_by")
        return self.scoped(releases.defer(*UNLISTED))

    def get_serializer_class(self) -> Any:
        return ReleaseDetailSerializer if self.action == "retrieve" else ReleaseSerializer

    def get_object(self) -> Release:
        queryset = self.scoped(Release.objects.select_related("namespace"))
        return get_object_or_404(queryset, sequence=self.kwargs["sequence"])

    @extend_schema(
        summary="Roll back to this release",
        description="A reviewed revert: this release's entry versions are published again (audited under the "
        "caller), entries retired since stay retired, and the namespace serves that state: this release itself "
        "when nothing else changed since, otherwise a new release built from it. Later publishes keep the rollback.",
        parameters=[SEQUENCE],
        request=NoteSerializer,
        responses={200: ReleaseSerializer, **errors(400, 401, 403, 404, 422, 429)},
    )
    @action(detail=True, methods=["post"])
    def rollback(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        release = self.get_object()
        body = NoteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        release_rollback(namespace=self.namespace, release=release, actor=request.user, **body.validated_data)
        return Response(ReleaseSerializer(self.get_object()).data)

    @extend_schema(
        summary="Activate a release the golden questions held",
        description="A release whose golden questions regressed is built but held (its gate's `code` is "
        "`release_held`); a reviewer who wrote none of its changed versions activates it with a reason, "
        "which the audit trail keeps. 409 `release_not_held` when it is not held.",
        parameters=[SEQUENCE],
        request=ActivateSerializer,
        responses={200: ReleaseSerializer, **errors(400, 401, 403, 404, 409, 422, 429)},
    )
    @action(detail=True, methods=["post"])
    def activate(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        release = self.get_object()
        body = ActivateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        release_gate_override(release=release, actor=request.user, reason=body.validated_data["reason"])
        return Response(ReleaseSerializer(self.get_object()).data)


@extend_schema_view(
    list=extend_schema(
        summary="List golden questions",
        responses={200: GoldenQuestionSerializer(many=True), **errors(400, 401, 404, 429)},
    ),
    retrieve=extend_schema(
        summary="One golden question", responses={200: GoldenQuestionSerializer, **errors(401, 404, 429)}
    ),
)
class GoldenQuestionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    serializer_class = GoldenQuestionSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = GoldenQuestionFilter
    roles: ClassVar[dict[str, str]] = {"create": Role.EDITOR}

    def get_queryset(self) -> QuerySet[GoldenQuestion]:
        return self.scoped(GoldenQuestion.objects.all())

    @extend_schema(
        summary="Add a golden question",
        request=GoldenQuestionCreateSerializer,
        responses={201: GoldenQuestionSerializer, **errors(400, 401, 403, 404, 422, 429)},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = GoldenQuestionCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        question = golden_question_create(namespace=self.namespace, actor=request.user, **body.validated_data)
        return Response(GoldenQuestionSerializer(question).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    list=extend_schema(
        summary="List evaluation runs",
        responses={200: EvaluationRunSerializer(many=True), **errors(400, 401, 404, 429)},
    ),
    retrieve=extend_schema(
        summary="One evaluation run with its per-question results",
        responses={200: EvaluationRunDetailSerializer, **errors(401, 404, 429)},
    ),
)
class EvaluationRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    filter_backends = [DjangoFilterBackend]
    filterset_class = EvaluationRunFilter
    # Editors keep the golden questions and evaluate them, as in the admin and `manage.py evaluate --record`.
    roles: ClassVar[dict[str, str]] = {"create": Role.EDITOR}

    def get_queryset(self) -> QuerySet[EvaluationRun]:
        return self.scoped(EvaluationRun.objects.select_related("release"))

    def get_serializer_class(self) -> Any:
        return EvaluationRunDetailSerializer if self.action == "retrieve" else EvaluationRunSerializer

    @extend_schema(
        summary="Evaluate the golden questions against a release",
        description="Runs every golden question through the release as /api/context serves it and stores the run. "
        "410 `release_expired` for a release whose files were pruned (retention policy).",
        request=EvaluationRunCreateSerializer,
        responses={201: EvaluationRunDetailSerializer, **errors(400, 401, 403, 404, 410, 422, 429)},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = EvaluationRunCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        sequence = body.validated_data.get("release")
        releases = Release.objects.filter(namespace=self.namespace)
        if sequence is not None:
            release = releases.filter(sequence=sequence).first()
            if release is None:
                return Response(
                    error_body("invalid_parameter", f"No release #{sequence} here.", "release"),
                    status=status.HTTP_400_BAD_REQUEST,
                )
        else:
            release = self.namespace.active_release
            if release is None:
                return Response(error_body("invalid", NO_RELEASE), status=422)
        questions = golden_questions_list(namespace=self.namespace)
        if not questions:
            return Response(error_body("invalid", NO_QUESTIONS), status=422)
        try:
            loaded = release_for_evaluation(release=release)
        except ReleasePrunedError as error:
            return Response(error_body(error.code, str(error), "release"), status=status.HTTP_410_GONE)
        evaluation = questions_evaluate(release=loaded, questions=questions, budget=body.validated_data["budget"])
        run = evaluation_run_record(namespace=self.namespace, release=release, evaluation=evaluation)
        return Response(EvaluationRunDetailSerializer(run).data, status=status.HTTP_201_CREATED)
