"""Entries: list and read them, create one (its ID from the category's block), check a proposal without writing it,
open a draft, retire."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db import transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.shortcuts import get_object_or_404
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema, extend_schema_view
from rest_framework import exceptions, mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import Category, Entry, EntryVersion, Role
from knowledge.services.entries import entry_create, entry_retire
from knowledge.services.versions import version_draft_opened, version_save
from manage_api.base import ManageViewSet
from manage_api.bodies import EmptyBody
from manage_api.filters import EntryFilter, StrictOrderingFilter
from manage_api.schema import errors
from manage_api.serializers import (
    EntryChangeSerializer,
    EntryCreateSerializer,
    EntryDetailSerializer,
    EntrySerializer,
    ProposalValidSerializer,
    RetireSerializer,
    VersionSerializer,
)

ENTRY_ID = OpenApiParameter("entry_id", str, OpenApiParameter.PATH, description="The entry's public ID, e.g. EG-202.")
UNKNOWN_CATEGORY = "No category “{slug}” in this namespace."
PROPOSAL = PolymorphicProxySerializer(
    component_name="EntryProposal",
    serializers=[EntryCreateSerializer, EntryChangeSerializer],
    resource_type_field_name=None,
)


def entries_with_head(queryset: QuerySet[Entry]) -> QuerySet[Entry]:
    """Entries annotated with their newest version's fields (what lists show and filter on)."""
    head = EntryVersion.objects.filter(entry=OuterRef("pk")).order_by("-number")

    def field(name: str) -> Subquery:
        return Subquery(head.values(name)[:1])

    return queryset.select_related("category", "live_version").annotate(
        head_id=field("pk"),
        head_number=field("number"),
        head_state=field("state"),
        head_title=field("title"),
        head_updated=field("updated"),
        head_confidence=field("confidence"),
        head_reviewed_at=field("reviewed_at"),
        head_author=field("author__username"),
        head_reviewer=field("reviewer__username"),
    )


@extend_schema_view(
    list=extend_schema(
        summary="List entries", responses={200: EntrySerializer(many=True), **errors(400, 401, 404, 429)}
    ),
    retrieve=extend_schema(
        summary="One entry with its versions",
        parameters=[ENTRY_ID],
        responses={200: EntryDetailSerializer, **errors(401, 404, 429)},
    ),
)
class EntryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ManageViewSet):
    lookup_field = "public_id"
    lookup_url_kwarg = "entry_id"
    filter_backends = [DjangoFilterBackend, StrictOrderingFilter]
    filterset_class = EntryFilter
    ordering_fields = ["number", "head_updated", "created_at"]
    ordering = ["number"]
    roles: ClassVar[dict[str, str]] = {"create": Role.EDITOR, "draft": Role.EDITOR, "retire": Role.REVIEWER}

    def get_queryset(self) -> QuerySet[Entry]:
        return entries_with_head(self.scoped(Entry.objects.all()))

    def get_serializer_class(self) -> Any:
        return EntryDetailSerializer if self.action == "retrieve" else EntrySerializer

    def get_object(self) -> Entry:
        queryset = self.get_queryset()
        if self.action == "retrieve":
            queryset = queryset.prefetch_related("versions__author", "versions__reviewer")
        return get_object_or_404(queryset, public_id__iexact=self.kwargs["entry_id"])

    def _detail(self, entry: Entry, *, created: bool = False) -> Response:
        fresh = self.get_queryset().prefetch_related("versions__author", "versions__reviewer").get(pk=entry.pk)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(EntryDetailSerializer(fresh, context=self.get_serializer_context()).data, status=code)

    @extend_schema(
        summary="Create an entry and its first draft",
        description="The ID is the next free number of the category's block unless `id` names a free one.",
        request=EntryCreateSerializer,
        responses={201: EntryDetailSerializer, **errors(400, 401, 403, 404, 409, 422, 429)},
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._detail(self._created(request).entry, created=True)

    def _created(self, request: Request) -> EntryVersion:
        body = EntryCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        slug = body.validated_data.pop("category")
        public_id = body.validated_data.pop("id", None)
        category = Category.objects.filter(namespace=self.namespace, slug=slug).first()
        if category is None:
            raise exceptions.ValidationError({"category": [UNKNOWN_CATEGORY.format(slug=slug)]})
        return entry_create(
            namespace=self.namespace,
            category=category,
            content=body.content(),
            actor=request.user,
            public_id=public_id.strip().upper() if public_id else None,
        )

    def _changed(self, request: Request) -> EntryVersion:
        """What `entries/<ID>/draft/` then a PATCH of that draft with the body would save."""
        body = EntryChangeSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        public_id = body.validated_data.pop("entry")
        entry = get_object_or_404(self.scoped(Entry.objects.all()), public_id__iexact=public_id)
        draft, _ = version_draft_opened(entry=entry, actor=request.user)
        return version_save(
            version=draft,
            content=body.content(base=draft),
            expected_lock_version=draft.lock_version,
            actor=request.user,
        )

    @extend_schema(
        summary="Check a new entry or a change without writing it",
        description="Runs the write itself — a create (the create body), or with `entry` opening a draft of that "
        "entry and saving the content into it (a PATCH body) — and rolls it back: nothing is kept, no ID is used, "
        "no audit record or build is left. `200` when the write would succeed; otherwise exactly the refusal the "
        "write would answer. Writes nothing, so any token scope may call it, but its owner must be an editor "
        "(`403 forbidden` otherwise), as for the write. `sync_entries --server --check` and `--dry-run` use it.",
        request=PROPOSAL,
        responses={200: ProposalValidSerializer, **errors(400, 401, 403, 404, 409, 422, 429)},
    )
    @action(detail=False, methods=["post"])
    def validate(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The services run inside a savepoint rolled back on the way out: their on-commit work (builds,
        webhooks) is discarded with it, and a refusal propagates as the write's own error."""
        change = isinstance(request.data, dict) and "entry" in request.data
        with transaction.atomic():
            version = self._changed(request) if change else self._created(request)
            transaction.set_rollback(True)
        return Response(ProposalValidSerializer({"valid": True, "id": version.entry.public_id}).data)

    @extend_schema(
        summary="Open a draft (or return the open one)",
        description="A new draft starts from the newest version; the live version keeps serving until the draft "
        "is published. An entry with a version in review or approved answers 422.",
        parameters=[ENTRY_ID],
        request=None,
        responses={200: VersionSerializer, 201: VersionSerializer, **errors(400, 401, 403, 404, 422, 429)},
    )
    @action(detail=True, methods=["post"])
    def draft(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        entry = self.get_object()
        EmptyBody(data=request.data).is_valid(raise_exception=True)
        draft, created = version_draft_opened(entry=entry, actor=request.user)
        response = Response(
            VersionSerializer(draft).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )
        response["ETag"] = VersionSerializer(draft).data["etag"]
        return response

    @extend_schema(
        summary="Retire the entry for good",
        description="Its ID answers 410 Gone with this tombstone from the next release; open versions are withdrawn.",
        parameters=[ENTRY_ID],
        request=RetireSerializer,
        responses={200: EntryDetailSerializer, **errors(400, 401, 403, 404, 422, 429)},
    )
    @action(detail=True, methods=["post"])
    def retire(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        entry = self.get_object()
        body = RetireSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry_retire(entry=entry, actor=request.user, **body.validated_data)
        return self._detail(entry)
