"""What the management API reads and writes. Output serializers are read-only views of the models;
input serializers validate a request's body before a service is called with it."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.utils import timezone
from rest_framework import serializers

from knowledge.models import (
    ApiKey,
    AuditRecord,
    Entry,
    EntryVersion,
    EvaluationRun,
    Feedback,
    GateStatus,
    GoldenQuestion,
    Release,
    ReleaseGate,
    Sensitivity,
    SynonymSet,
    SynonymVersion,
    VersionState,
)
from knowledge.retrieval.paths import GLOB_MAX_LENGTH, GLOBS_MAX, globs_normalize
from knowledge.services.content import (
    BODY_MAX,
    LIST_LIMITS,
    SUMMARY_MAX,
    TITLE_MAX,
    VersionContent,
    links_normalize,
    overridden_id_normalize,
)
from knowledge.services.gate_override import REASON_MAX
from knowledge.services.golden_questions import relevant_normalize
from knowledge.services.release_gate import HELD_CODE
from manage_api.bodies import RequestBody, StrictCharField, StrictIntegerField

ZERO, ONE = Decimal("0"), Decimal("1")
PUBLISH_AT_LEEWAY = timedelta(minutes=5)
PUBLISH_AT_PAST = (
    "publish_at is in the past: send a future time to schedule the go-live, or leave it out and publish the "
    "approved version yourself."
)


def version_etag(version: EntryVersion) -> str:
    """The strong ETag of a version's editable state: changes with every save of its content."""
    return f'"v{version.pk}.{version.lock_version}"'


class VersionSerializer(serializers.ModelSerializer):
    entry = serializers.CharField(source="entry.public_id", read_only=True)
    author = serializers.CharField(source="author.username", read_only=True, allow_null=True, default=None)
    reviewer = serializers.CharField(source="reviewer.username", read_only=True, allow_null=True, default=None)
    etag = serializers.SerializerMethodField()
    confidence = serializers.DecimalField(
        max_digits=3, decimal_places=2, min_value=ZERO, max_value=ONE, coerce_to_string=False, read_only=True
    )

    class Meta:
        model = EntryVersion
        fields = [
            "id",
            "entry",
            "number",
            "state",
            "title",
            "summary",
            "body",
            "tags",
            "aliases",
            "links",
            "paths",
            "overrides",
            "confidence",
            "updated",
            "sensitivity",
            "review_by",
            "valid_until",
            "tokens",
            "content_hash",
            "author",
            "reviewer",
            "review_note",
            "publish_at",
            "created_at",
            "modified_at",
            "submitted_at",
            "reviewed_at",
            "published_at",
            "lock_version",
            "etag",
        ]
        read_only_fields = fields

    def get_etag(self, version: EntryVersion) -> str:
        return version_etag(version)


class VersionBriefSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True, allow_null=True, default=None)
    reviewer = serializers.CharField(source="reviewer.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = EntryVersion
        fields = ["id", "number", "state", "title", "updated", "author", "reviewer", "modified_at", "published_at"]
        read_only_fields = fields


class EntrySerializer(serializers.ModelSerializer):
    """An entry with its newest version's main fields (the one being worked on, else the live one)."""

    id = serializers.CharField(source="public_id", read_only=True)
    category = serializers.CharField(source="category.slug", read_only=True)
    live_version = serializers.IntegerField(source="live_version.number", read_only=True, allow_null=True, default=None)
    newest_version = serializers.IntegerField(source="head_number", read_only=True)
    state = serializers.ChoiceField(source="head_state", choices=VersionState.choices, read_only=True)
    title = serializers.CharField(source="head_title", read_only=True)
    updated = serializers.DateField(source="head_updated", read_only=True)
    confidence = serializers.DecimalField(
        source="head_confidence",
        max_digits=3,
        decimal_places=2,
        min_value=ZERO,
        max_value=ONE,
        coerce_to_string=False,
        read_only=True,
    )
    author = serializers.CharField(source="head_author", read_only=True, allow_null=True)
    reviewer = serializers.CharField(source="head_reviewer", read_only=True, allow_null=True)
    retired = serializers.SerializerMethodField()

    class Meta:
        model = Entry
        fields = [
            "id",
            "category",
            "state",
            "title",
            "updated",
            "confidence",
            "author",
            "reviewer",
            "newest_version",
            "live_version",
            "retired",
            "retired_at",
            "retire_reason",
            "replaced_by",
            "created_at",
        ]
        read_only_fields = fields

    def get_retired(self, entry: Entry) -> bool:
        return entry.retired_at is not None


class EntryDetailSerializer(EntrySerializer):
    versions = VersionBriefSerializer(many=True, read_only=True)

    class Meta(EntrySerializer.Meta):
        fields = [*EntrySerializer.Meta.fields, "versions"]
        read_only_fields = fields


class ContentSerializer(RequestBody):
    """A version's editable content; on PATCH only the fields sent change (the rest of a GET may ride along)."""

    echoes = VersionSerializer

    title = StrictCharField(max_length=TITLE_MAX)
    summary = StrictCharField(allow_blank=True, required=False, default="", max_length=SUMMARY_MAX)
    body = StrictCharField(max_length=BODY_MAX)
    tags = serializers.ListField(
        child=StrictCharField(max_length=LIST_LIMITS["tags"][1]),
        max_length=LIST_LIMITS["tags"][0],
        required=False,
        default=list,
    )
    aliases = serializers.ListField(
        child=StrictCharField(max_length=LIST_LIMITS["aliases"][1]),
        max_length=LIST_LIMITS["aliases"][0],
        required=False,
        default=list,
    )
    links = serializers.ListField(
        child=StrictCharField(max_length=LIST_LIMITS["links"][1]),
        max_length=LIST_LIMITS["links"][0],
        required=False,
        default=list,
    )
    paths = serializers.ListField(
        child=StrictCharField(max_length=GLOB_MAX_LENGTH),
        max_length=GLOBS_MAX,
        required=False,
        default=list,
        help_text="Path globs of the files the entry applies to (src/api/**/*.py, *.sql); empty: everywhere.",
    )
    overrides = StrictCharField(
        max_length=32,
        required=False,
        allow_blank=True,
        default="",
        help_text="In a namespace built on bases: the ID of the base entry this one replaces (e.g. AC-101).",
    )
    confidence = serializers.DecimalField(
        max_digits=3, decimal_places=2, min_value=ZERO, max_value=ONE, required=False, default=Decimal("0.90")
    )
    updated = serializers.DateField(required=False, help_text="The date agents see; default today.")
    # The trust fields (issue 12), as the admin and import_entries take them; reviewed like the rest.
    sensitivity = serializers.ChoiceField(
        choices=Sensitivity.choices,
        required=False,
        default=Sensitivity.PUBLIC,
        help_text="Who may read the entry once published: internal and restricted only API keys cleared for them.",
    )
    review_by = serializers.DateField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Re-review due (YYYY-MM-DD); null: the category's default after approval.",
    )
    valid_until = serializers.DateField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Past this date (YYYY-MM-DD) the entry leaves the packs and waits for a decision; null: no end.",
    )

    def validate_overrides(self, value: str) -> str:
        try:
            return overridden_id_normalize(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error), code="invalid_overrides") from error

    def validate_links(self, value: list[str]) -> list[str]:
        try:
            return list(links_normalize(value))
        except ValueError as error:
            raise serializers.ValidationError(str(error), code="invalid_link") from error

    def validate_paths(self, value: list[str]) -> list[str]:
        try:
            return list(globs_normalize(value))
        except ValueError as error:
            raise serializers.ValidationError(str(error), code="invalid_glob") from error

    def content(self, base: EntryVersion | None = None) -> VersionContent:
        """The content to write; on a PATCH (`base`) every field not sent keeps the draft's value, the trust
        fields included (an edit of the summary never turns an internal entry public)."""
        data: dict[str, Any] = dict(self.validated_data)
        if base is not None:
            return VersionContent.of(base, **data)
        data.setdefault("updated", timezone.localdate())
        return VersionContent.build(**data)


class EntryCreateSerializer(ContentSerializer):
    category = serializers.SlugField(help_text="The category whose ID block gives the entry its ID.")
    id = StrictCharField(required=False, max_length=32, help_text="A free ID of the namespace; default the next one.")


class EntryChangeSerializer(ContentSerializer):
    """A change to an existing entry as `entries/validate/` takes it: the PATCH body of the entry's next draft
    (read partially: a field not sent keeps the draft's value)."""

    title = StrictCharField(max_length=TITLE_MAX, required=False)
    body = StrictCharField(max_length=BODY_MAX, required=False)
    entry = StrictCharField(max_length=32, help_text="The existing entry the content is for, e.g. EG-202.")


class ProposalValidSerializer(serializers.Serializer):
    """`entries/validate/`'s answer when the write would succeed (a refusal answers the write's own error)."""

    valid = serializers.BooleanField(help_text="Always true: the write would succeed now.")
    id = serializers.CharField(help_text="The entry's ID; for a new one, the ID a create would give it now.")


class NoteSerializer(RequestBody):
    note = StrictCharField(required=False, allow_blank=True, default="", max_length=2000)


class RejectSerializer(RequestBody):
    note = StrictCharField(max_length=2000, help_text="What has to change; the author reads it.")


class AcknowledgedApprovalSerializer(NoteSerializer):
    """An approval's body: a note, and why the safety scan's warnings are acceptable when it warns."""

    acknowledgement = StrictCharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=1000,
        help_text="Why the safety scan's warnings are acceptable (needed when it warns; audited).",
    )


class ApproveSerializer(AcknowledgedApprovalSerializer):
    """An entry version's approval. A `publish_at` up to PUBLISH_AT_LEEWAY ago (clock skew, a slow request) is
    due: the scheduler publishes it on its next run. One further back is most likely a typo of the year or
    date, so it is refused (400 invalid_parameter) rather than published at once by surprise."""

    publish_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        default=None,
        help_text="When the scheduler publishes the approved version; a time more than 5 minutes ago is refused.",
    )

    def validate_publish_at(self, value: datetime | None) -> datetime | None:
        if value is not None and value < timezone.now() - PUBLISH_AT_LEEWAY:
            raise serializers.ValidationError(PUBLISH_AT_PAST, code="past")
        return value


class RetireSerializer(RequestBody):
    reason = StrictCharField(max_length=500)
    replaced_by = StrictCharField(required=False, allow_blank=True, default="", max_length=32)


class ReleaseGateSerializer(serializers.ModelSerializer):
    """The publish gate's decision on a release: `code` is `release_held` while it is held."""

    code = serializers.SerializerMethodField()
    compared_with = serializers.IntegerField(
        source="compared_with.sequence", read_only=True, allow_null=True, default=None, help_text="The serving release."
    )
    decided_by = serializers.CharField(source="decided_by.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = ReleaseGate
        fields = ["status", "code", "regressions", "compared_with", "checked_at", "decided_by", "reason", "decided_at"]
        read_only_fields = fields

    def get_code(self, gate: ReleaseGate) -> str | None:
        return HELD_CODE if gate.status == GateStatus.HELD else None


class ReleaseGateDetailSerializer(ReleaseGateSerializer):
    class Meta(ReleaseGateSerializer.Meta):
        fields = [*ReleaseGateSerializer.Meta.fields, "report"]
        read_only_fields = fields


class ActivateSerializer(RequestBody):
    reason = StrictCharField(
        max_length=REASON_MAX, help_text="Why the golden questions' regressions are acceptable (audited)."
    )


class ReleaseSerializer(serializers.ModelSerializer):
    active = serializers.SerializerMethodField()
    gate = ReleaseGateSerializer(read_only=True, allow_null=True, help_text="Null: built before the gate existed.")

    class Meta:
        model = Release
        fields = [
            "sequence",
            "knowledge_version",
            "revision",
            "built_at",
            "build_seconds",
            "entry_count",
            "total_tokens",
            "inputs_hash",
            "active",
            "gate",
        ]
        read_only_fields = fields

    def get_active(self, release: Release) -> bool:
        return release.pk == release.namespace.active_release_id


class ReleaseDetailSerializer(ReleaseSerializer):
    gate = ReleaseGateDetailSerializer(read_only=True, allow_null=True, help_text="With per-question before and after.")
    manifest = serializers.JSONField(
        read_only=True, help_text="[{id, version, hash}] of the published entries, and tombstones."
    )

    class Meta(ReleaseSerializer.Meta):
        fields = [*ReleaseSerializer.Meta.fields, "manifest", "metrics"]
        read_only_fields = fields


class FeedbackSerializer(serializers.ModelSerializer):
    entry = serializers.CharField(source="entry_public_id", read_only=True)

    class Meta:
        model = Feedback
        fields = ["id", "kind", "status", "entry", "query", "message", "source", "created_at"]
        read_only_fields = fields


class FeedbackStatusSerializer(RequestBody):
    status = serializers.ChoiceField(choices=Feedback.Status.choices, default=Feedback.Status.DONE)


class AuditSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor.username", read_only=True, allow_null=True, default=None)
    entry = serializers.CharField(source="entry.public_id", read_only=True, allow_null=True, default=None)
    version = serializers.IntegerField(source="version.number", read_only=True, allow_null=True, default=None)
    release = serializers.IntegerField(source="release.sequence", read_only=True, allow_null=True, default=None)

    class Meta:
        model = AuditRecord
        fields = [
            "id",
            "created_at",
            "actor",
            "action",
            "entry",
            "version",
            "release",
            "from_state",
            "to_state",
            "field",
            "old_value",
            "new_value",
            "note",
        ]
        read_only_fields = fields


class ApiKeySerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = ApiKey
        fields = ["id", "name", "lookup", "created_by", "created_at", "revoked_at"]
        read_only_fields = fields


class ApiKeyCreateSerializer(RequestBody):
    name = StrictCharField(max_length=80)


class ApiKeyCreatedSerializer(ApiKeySerializer):
    key = serializers.CharField(read_only=True, help_text="The key itself: shown in this answer only, never again.")

    class Meta(ApiKeySerializer.Meta):
        fields = [*ApiKeySerializer.Meta.fields, "key"]
        read_only_fields = fields


class GoldenQuestionSerializer(serializers.ModelSerializer):
    class Meta:
        model = GoldenQuestion
        fields = ["id", "key", "text", "relevant", "split"]
        read_only_fields = fields


class GoldenQuestionCreateSerializer(RequestBody):
    key = StrictCharField(max_length=64, help_text="A stable identifier, e.g. eg-q-101.")
    text = StrictCharField(max_length=2000)
    relevant = serializers.DictField(
        child=StrictIntegerField(min_value=1, max_value=2),
        required=False,
        default=dict,
        help_text='{"EG-202": 2}: 2 for the answer, 1 for related; {} = the knowledge base does not cover it.',
    )
    split = serializers.ChoiceField(choices=[("dev", "dev"), ("test", "test")], default="dev")

    def validate_relevant(self, value: dict[str, int]) -> dict[str, int]:
        try:
            return relevant_normalize(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error), code="invalid_id") from error


class EvaluationRunSerializer(serializers.ModelSerializer):
    release = serializers.IntegerField(source="release.sequence", read_only=True)

    class Meta:
        model = EvaluationRun
        fields = ["id", "release", "metrics", "created_at"]
        read_only_fields = fields


class EvaluationRunDetailSerializer(EvaluationRunSerializer):
    class Meta(EvaluationRunSerializer.Meta):
        fields = [*EvaluationRunSerializer.Meta.fields, "results"]
        read_only_fields = fields


class EvaluationRunCreateSerializer(RequestBody):
    release = serializers.IntegerField(required=False, help_text="A release sequence; default the active one.")
    budget = serializers.IntegerField(required=False, min_value=200, max_value=8000, default=2000)


# What every reviewed version (a synonym set's, a reviewed text's) shows of its review, in this order.
REVIEW_FIELDS = [
    "author",
    "reviewer",
    "review_note",
    "created_at",
    "modified_at",
    "submitted_at",
    "reviewed_at",
    "published_at",
]


class ReviewedVersionSerializer(serializers.ModelSerializer):
    """Who wrote and who reviewed a version, by username (the REVIEW_FIELDS of its Meta)."""

    author = serializers.CharField(source="author.username", read_only=True, allow_null=True, default=None)
    reviewer = serializers.CharField(source="reviewer.username", read_only=True, allow_null=True, default=None)


class SynonymVersionSerializer(ReviewedVersionSerializer):
    synonym_set = serializers.CharField(source="synonym_set.name", read_only=True)
    phrases = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = SynonymVersion
        fields = [
            "id",
            "synonym_set",
            "number",
            "state",
            "phrases",
            "two_way",
            "enabled",
            *REVIEW_FIELDS,
        ]
        read_only_fields = fields


class SynonymSetSerializer(serializers.ModelSerializer):
    live_version = serializers.IntegerField(source="live_version.number", read_only=True, allow_null=True, default=None)
    versions = SynonymVersionSerializer(many=True, read_only=True)

    class Meta:
        model = SynonymSet
        fields = ["id", "name", "live_version", "created_at", "versions"]
        read_only_fields = fields


class SynonymContentSerializer(RequestBody):
    echoes = SynonymVersionSerializer
    phrases = serializers.ListField(child=StrictCharField(max_length=200), min_length=2, max_length=50)
    two_way = serializers.BooleanField(default=True, help_text="Off: only the first phrase searches for the others.")
    enabled = serializers.BooleanField(default=True, help_text="Off: once published, releases stop using the set.")


class SynonymSetCreateSerializer(SynonymContentSerializer):
    name = StrictCharField(max_length=80)
