"""django-filter filter sets for every list of the management API."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import django_filters as filters
from django import forms
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from django_filters.fields import IsoDateTimeField
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions
from rest_framework.filters import OrderingFilter

from knowledge.models import (
    ApiKey,
    AuditRecord,
    Entry,
    EntryVersion,
    EvaluationRun,
    Feedback,
    GoldenQuestion,
    Release,
    Sensitivity,
    SynonymSet,
    SynonymVersion,
    TextKind,
    TextVersion,
    VersionState,
)

STALE_AFTER = timedelta(days=365)
BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1
OUT_OF_RANGE = "This time is out of range: it must fall between years 1 and 9999 in UTC."
INVALID_BOOLEAN = "Send true or false (or 1 or 0)."
INVALID_ORDERING = "`ordering` takes {accepted} (several separated by commas); not {refused}."
TRUE, FALSE = frozenset({"true", "1"}), frozenset({"false", "0"})


def tags_contain(tag: str) -> Q:
    """Versions whose tags hold `tag` exactly (JSON containment on PostgreSQL, the JSON text on SQLite)."""
    if connection.vendor == "postgresql":
        return Q(tags__contains=[tag])
    return Q(tags__icontains=json.dumps(tag))


def stale_cutoff() -> Any:
    return timezone.localdate() - STALE_AFTER


def in_utc(value: datetime) -> datetime:
    """The same instant in UTC, as the database compares it; a ValidationError when it has none there.

    Python's datetime cannot hold 9999-12-31T23:59:59-12:00 or 0001-01-01T00:00:00+05:00 in UTC, so the
    database adapter (SQLite's at least) would raise OverflowError from inside the query.
    """
    if timezone.is_naive(value):
        return value
    try:
        return value.astimezone(UTC)
    except OverflowError as error:
        raise ValidationError(OUT_OF_RANGE, code="out_of_range") from error


class UtcDateTimeField(IsoDateTimeField):
    def to_python(self, value: Any) -> datetime | None:
        parsed = super().to_python(value)
        return None if parsed is None else in_utc(parsed)


class TimeFilter(filters.IsoDateTimeFilter):
    """An ISO 8601 time (an offset or Z; else the site's time zone) that exists in UTC: 400, not 500."""

    field_class = UtcDateTimeField


class StrictOrderingFilter(OrderingFilter):
    """`ordering` of a list: a field it does not take is a bad parameter (400 invalid_parameter naming the ones it
    takes), like every other filter's bad value. DRF drops such terms and orders by the default instead."""

    def remove_invalid_fields(
        self, queryset: QuerySet[Any], fields: Iterable[str], view: Any, request: Any
    ) -> list[str]:
        valid = [item[0] for item in self.get_valid_fields(queryset, view, {"request": request})]
        terms = [term for term in fields if term]
        refused = [term for term in terms if term.removeprefix("-") not in valid]
        if refused:
            accepted = ", ".join(f"{name}, -{name}" for name in valid)
            message = INVALID_ORDERING.format(accepted=accepted, refused=", ".join(refused))
            raise exceptions.ValidationError({self.ordering_param: [message]})
        return terms


class StrictBooleanField(forms.Field):
    """true/false or 1/0 in any case; empty is no filter; anything else a ValidationError, not "no filter"."""

    widget = forms.TextInput  # hands the field the text sent: Django's NullBooleanSelect turns garbage into None

    def to_python(self, value: Any) -> bool | None:
        if value is None or value == "":
            return None
        text = str(value).strip().lower()
        if text in TRUE:
            return True
        if text in FALSE:
            return False
        raise ValidationError(INVALID_BOOLEAN, code="invalid")


@extend_schema_field(OpenApiTypes.BOOL)  # also for a `method=` filter, whose `bool | None` hint reads as a string
class StrictBooleanFilter(filters.BooleanFilter):
    """A yes/no filter that refuses `?stale=maybe` (400) instead of ignoring it."""

    field_class = StrictBooleanField


@extend_schema_field(OpenApiTypes.INT64)
class IdFilter(filters.NumberFilter):
    """A whole number a 64-bit column holds: `1.5` and 2**63 are refused (400), not sent to the database."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, min_value=BIGINT_MIN, max_value=BIGINT_MAX, **kwargs)

    def get_max_validator(self) -> None:
        return None  # the field's own min_value and max_value bound it


class StatesFilter(filters.MultipleChoiceFilter):
    """state=draft&state=in_review, or state=draft,in_review."""

    def __init__(self, field_name: str, **kwargs: Any) -> None:
        super().__init__(field_name=field_name, choices=VersionState.choices, **kwargs)


class EntryFilter(filters.FilterSet):
    """Entries, filtered on their newest version (the one being worked on, else the live one)."""

    q = filters.CharFilter(
        method="search", help_text="Words in the ID, title, summary or aliases of the newest version."
    )
    category = filters.CharFilter(field_name="category__slug", help_text="A category slug, e.g. fact.")
    state = StatesFilter("head_state", help_text="State of the newest version; repeat for several.")
    tag = filters.CharFilter(method="tagged", help_text="A tag of the newest version (exact).")
    author = filters.CharFilter(field_name="head_author", help_text="Username of the newest version's author.")
    reviewer = filters.CharFilter(field_name="head_reviewer", help_text="Username of its reviewer.")
    updated_after = filters.DateFilter(field_name="head_updated", lookup_expr="gte")
    updated_before = filters.DateFilter(field_name="head_updated", lookup_expr="lte")
    approved_after = TimeFilter(field_name="head_reviewed_at", lookup_expr="gte")
    approved_before = TimeFilter(field_name="head_reviewed_at", lookup_expr="lte")
    confidence_min = filters.NumberFilter(field_name="head_confidence", lookup_expr="gte")
    confidence_max = filters.NumberFilter(field_name="head_confidence", lookup_expr="lte")
    stale = StrictBooleanFilter(method="staleness", help_text="Newest version's `updated` over a year ago.")
    retired = StrictBooleanFilter(field_name="retired_at", lookup_expr="isnull", exclude=True)
    published = StrictBooleanFilter(field_name="live_version", lookup_expr="isnull", exclude=True)
    sensitivity = filters.MultipleChoiceFilter(
        method="sensitive",
        choices=Sensitivity.choices,
        help_text="The newest version's sensitivity; repeat for several.",
    )

    class Meta:
        model = Entry
        fields: list[str] = []

    def search(self, queryset: QuerySet[Entry], name: str, value: str) -> QuerySet[Entry]:
        value = value.strip()
        if not value:
            return queryset
        in_head = EntryVersion.objects.filter(pk=OuterRef("head_id")).filter(
            Q(title__icontains=value) | Q(summary__icontains=value) | Q(aliases__icontains=value)
        )
        return queryset.filter(Q(public_id__iexact=value) | Exists(in_head))

    def tagged(self, queryset: QuerySet[Entry], name: str, value: str) -> QuerySet[Entry]:
        return queryset.filter(Exists(EntryVersion.objects.filter(tags_contain(value), pk=OuterRef("head_id"))))

    def sensitive(self, queryset: QuerySet[Entry], name: str, value: list[str]) -> QuerySet[Entry]:
        if not value:
            return queryset
        return queryset.filter(Exists(EntryVersion.objects.filter(sensitivity__in=value, pk=OuterRef("head_id"))))

    def staleness(self, queryset: QuerySet[Entry], name: str, value: bool | None) -> QuerySet[Entry]:
        if value is None:
            return queryset
        old = Q(head_updated__lt=stale_cutoff())
        return queryset.filter(old if value else ~old)


class VersionFilter(filters.FilterSet):
    entry = filters.CharFilter(field_name="entry__public_id", lookup_expr="iexact", help_text="e.g. EG-202.")
    state = StatesFilter("state", help_text="Repeat for several, e.g. state=in_review.")
    category = filters.CharFilter(field_name="entry__category__slug")
    tag = filters.CharFilter(method="tagged")
    author = filters.CharFilter(field_name="author__username")
    reviewer = filters.CharFilter(field_name="reviewer__username")
    q = filters.CharFilter(method="search", help_text="Words in the title, summary or body.")
    updated_after = filters.DateFilter(field_name="updated", lookup_expr="gte")
    updated_before = filters.DateFilter(field_name="updated", lookup_expr="lte")
    approved_after = TimeFilter(field_name="reviewed_at", lookup_expr="gte")
    approved_before = TimeFilter(field_name="reviewed_at", lookup_expr="lte")
    confidence_min = filters.NumberFilter(field_name="confidence", lookup_expr="gte")
    confidence_max = filters.NumberFilter(field_name="confidence", lookup_expr="lte")
    stale = StrictBooleanFilter(method="staleness")
    sensitivity = filters.MultipleChoiceFilter(choices=Sensitivity.choices, help_text="Repeat for several.")

    class Meta:
        model = EntryVersion
        fields: list[str] = []

    def tagged(self, queryset: QuerySet[EntryVersion], name: str, value: str) -> QuerySet[EntryVersion]:
        return queryset.filter(tags_contain(value))

    def search(self, queryset: QuerySet[EntryVersion], name: str, value: str) -> QuerySet[EntryVersion]:
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(Q(title__icontains=value) | Q(summary__icontains=value) | Q(body__icontains=value))

    def staleness(self, queryset: QuerySet[EntryVersion], name: str, value: bool | None) -> QuerySet[EntryVersion]:
        if value is None:
            return queryset
        old = Q(updated__lt=stale_cutoff())
        return queryset.filter(old if value else ~old)


class ReleaseFilter(filters.FilterSet):
    built_after = TimeFilter(field_name="built_at", lookup_expr="gte")
    built_before = TimeFilter(field_name="built_at", lookup_expr="lte")
    knowledge_version = filters.CharFilter(field_name="knowledge_version")

    class Meta:
        model = Release
        fields: list[str] = []


class FeedbackFilter(filters.FilterSet):
    status = filters.MultipleChoiceFilter(choices=Feedback.Status.choices)
    kind = filters.MultipleChoiceFilter(choices=Feedback.Kind.choices)
    entry = filters.CharFilter(field_name="entry_public_id", lookup_expr="iexact")
    source = filters.CharFilter(field_name="source")
    q = filters.CharFilter(field_name="message", lookup_expr="icontains")
    created_after = TimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = TimeFilter(field_name="created_at", lookup_expr="lte")

    class Meta:
        model = Feedback
        fields: list[str] = []


class AuditFilter(filters.FilterSet):
    action = filters.CharFilter(field_name="action")
    actor = filters.CharFilter(field_name="actor__username")
    entry = filters.CharFilter(field_name="entry__public_id", lookup_expr="iexact")
    created_after = TimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = TimeFilter(field_name="created_at", lookup_expr="lte")

    class Meta:
        model = AuditRecord
        fields: list[str] = []


class GoldenQuestionFilter(filters.FilterSet):
    split = filters.CharFilter(field_name="split")
    q = filters.CharFilter(field_name="text", lookup_expr="icontains")

    class Meta:
        model = GoldenQuestion
        fields: list[str] = []


class EvaluationRunFilter(filters.FilterSet):
    release = IdFilter(field_name="release__sequence")
    created_after = TimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = TimeFilter(field_name="created_at", lookup_expr="lte")

    class Meta:
        model = EvaluationRun
        fields: list[str] = []


class ApiKeyFilter(filters.FilterSet):
    revoked = StrictBooleanFilter(field_name="revoked_at", lookup_expr="isnull", exclude=True)

    class Meta:
        model = ApiKey
        fields: list[str] = []


class SynonymSetFilter(filters.FilterSet):
    q = filters.CharFilter(field_name="name", lookup_expr="icontains")
    published = StrictBooleanFilter(field_name="live_version", lookup_expr="isnull", exclude=True)

    class Meta:
        model = SynonymSet
        fields: list[str] = []


class SynonymVersionFilter(filters.FilterSet):
    state = StatesFilter("state", help_text="Repeat for several, e.g. state=in_review.")
    synonym_set = IdFilter(field_name="synonym_set_id")
    author = filters.CharFilter(field_name="author__username")
    reviewer = filters.CharFilter(field_name="reviewer__username")

    class Meta:
        model = SynonymVersion
        fields: list[str] = []


class TextVersionFilter(filters.FilterSet):
    """Reviewed-text versions (themes, base namespaces, the profile, doc pages, prompt packs)."""

    kind = filters.MultipleChoiceFilter(field_name="text__kind", choices=TextKind.choices)
    key = filters.CharFilter(field_name="text__key")
    state = StatesFilter("state", help_text="Repeat for several, e.g. state=in_review.")
    author = filters.CharFilter(field_name="author__username")
    reviewer = filters.CharFilter(field_name="reviewer__username")

    class Meta:
        model = TextVersion
        fields: list[str] = []
