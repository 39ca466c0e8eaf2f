"""Reviewed texts in the management API (issue 16 §4): themes, a namespace's base namespaces, and their versions."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from knowledge.models import ReviewedText, TextVersion
from knowledge.services.layers import BASES_MAX
from manage_api.bodies import RequestBody, StrictCharField
from manage_api.serializers import REVIEW_FIELDS, ReviewedVersionSerializer

SLUG_MAX = 64


class TextVersionSerializer(ReviewedVersionSerializer):
    kind = serializers.CharField(source="text.kind", read_only=True)
    key = serializers.CharField(source="text.key", read_only=True)
    content = serializers.SerializerMethodField(help_text="The version's fields; which ones depends on the kind.")

    class Meta:
        model = TextVersion
        fields = [
            "id",
            "kind",
            "key",
            "number",
            "state",
            "content",
            "lock_version",
            *REVIEW_FIELDS,
        ]
        read_only_fields = fields

    @extend_schema_field({"type": "object", "additionalProperties": True})
    def get_content(self, version: TextVersion) -> dict[str, Any]:
        return dict(version.content or {})


class ThemeContentSerializer(RequestBody):
    title = StrictCharField(max_length=200)
    summary = StrictCharField(max_length=300, required=False, allow_blank=True, default="")
    entries = serializers.ListField(
        child=StrictCharField(max_length=40), max_length=500, help_text="Entry IDs, in reading order."
    )
    position = serializers.IntegerField(min_value=0, max_value=32767, required=False, default=0)


class ThemeCreateSerializer(ThemeContentSerializer):
    key = serializers.SlugField(max_length=80, help_text="The theme's slug: its file is /themes/<key>.md.")


class ThemeSerializer(serializers.ModelSerializer):
    """A theme: what agents read now (its live version's content) and every version."""

    live_version = serializers.IntegerField(source="live_version.number", read_only=True, allow_null=True, default=None)
    live = serializers.SerializerMethodField(help_text="The published content (null before the first publish).")
    versions = TextVersionSerializer(many=True, read_only=True)

    class Meta:
        model = ReviewedText
        fields = ["id", "key", "live_version", "live", "created_at", "versions"]
        read_only_fields = fields

    @extend_schema_field({"type": "object", "additionalProperties": True, "nullable": True})
    def get_live(self, text: ReviewedText) -> dict[str, Any] | None:
        return dict(text.live_version.content) if text.live_version else None


class BasesSerializer(serializers.Serializer):
    """What the namespace builds on now, and the reviewed text that changes it."""

    bases = serializers.ListField(
        child=serializers.CharField(), help_text="The bases releases are built on now, in priority order."
    )
    versions = TextVersionSerializer(many=True, help_text="Every version of the list, newest first.")


class BasesProposalSerializer(RequestBody):
    echoes = BasesSerializer
    bases = serializers.ListField(
        child=StrictCharField(max_length=SLUG_MAX),
        max_length=BASES_MAX,
        allow_empty=True,
        help_text="Namespace slugs, the most important first; [] builds on nothing.",
    )
