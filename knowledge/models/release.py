"""Immutable releases: the exact entry@version list and the artifacts agents read."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone

from knowledge.models.base import UndeletableModel
from knowledge.models.json_encoder import CompiledJSONEncoder
from knowledge.models.namespace import Namespace
from knowledge.retrieval.manifests import manifest_applied, manifest_whole_at


class Release(UndeletableModel):
    """A built, validated snapshot of a namespace; one per namespace is active at a time."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="releases")
    sequence = models.PositiveIntegerField()
    knowledge_version = models.CharField(max_length=32)
    revision = models.DateField()
    manifest_stored = models.JSONField(
        db_column="manifest",
        encoder=CompiledJSONEncoder,
        help_text="[{id, version, hash}] of the published entries, and tombstones; or how they differ from the "
        "previous release's (knowledge.retrieval.manifests).",
    )
    inputs_hash = models.CharField(max_length=64, help_text="Hash of everything the artifacts are built from.")
    content_serial = models.PositiveBigIntegerField(
        default=0, help_text="The namespace's content serial the build read; a stale build never activates."
    )
    built_at = models.DateTimeField()
    build_seconds = models.FloatField(default=0)
    entry_count = models.PositiveIntegerField(default=0)
    total_tokens = models.PositiveIntegerField(default=0)
    metrics = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        encoder=CompiledJSONEncoder,
        help_text="Measured when built: contextShape and budgetScan.",
    )
    files_pruned_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When the retention policy dropped this release's file contents (its record and manifest stay).",
    )

    class Meta:
        ordering = ["namespace", "-sequence"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "sequence"], name="release_unique_sequence"),
        ]
        # Not unique: content that comes back to an earlier release's state gets a new release (its
        # knowledgeVersion never goes down), and a build looks up the newest release of its inputs.
        indexes = [models.Index(fields=["namespace", "inputs_hash"], name="release_inputs")]

    def __str__(self) -> str:
        return f"{self.namespace.slug} #{self.sequence} v{self.knowledge_version}"

    @property
    def manifest(self) -> Any:
        """The whole manifest. A release that stored only its differences reads the release that stored it
        whole and every delta since in one query, and keeps the result."""
        whole = self.__dict__.get("_manifest")
        if whole is None:
            whole = self.__dict__["_manifest"] = self._manifest_resolved()
        return whole

    @manifest.setter
    def manifest(self, whole: Any) -> None:
        """Store `whole` as this release's manifest, whole."""
        self.manifest_stored = whole
        self.__dict__["_manifest"] = whole
        self.__dict__.pop("_hashes", None)

    def manifest_known(self, *, stored: Any, whole: Any, hashes: dict[str, str] | None = None) -> None:
        """What this release stores and the whole manifest it gives, known already (no query); `hashes`:
        its entries' content hashes by ID (manifest_hashes), when known too."""
        self.manifest_stored = stored
        self.__dict__["_manifest"] = whole
        self.__dict__.pop("_hashes", None)
        if hashes is not None:
            self.__dict__["_hashes"] = hashes

    def manifest_hashes(self) -> dict[str, str]:
        """The content hash of each entry of the manifest, by ID; made once per object: the next build's
        version bump and calibration lineage both compare against it (0.02 s each at 100,000 entries)."""
        hashes = self.__dict__.get("_hashes")
        if hashes is None:
            whole = self.manifest
            entries = whole.get("entries", ()) if isinstance(whole, dict) else ()
            hashes = self.__dict__["_hashes"] = {item["id"]: item["hash"] for item in entries}
        return hashes

    def _manifest_resolved(self) -> Any:
        stored = self.manifest_stored
        start = manifest_whole_at(stored)
        if start is None:
            return stored
        chain = Release.objects.filter(namespace_id=self.namespace_id, sequence__gte=start, sequence__lt=self.sequence)
        whole: Any = None
        for link in [*chain.order_by("sequence").values_list("manifest_stored", flat=True), stored]:
            whole = link if manifest_whole_at(link) is None else manifest_applied(whole, link)
        return whole


class ArtifactBlob(models.Model):
    """A chunk of release files' bytes, stored once per namespace by content hash (SHA-256).

    A file is one chunk, or for a large one a sequence of content-defined chunks
    (knowledge.retrieval.chunks), so releases share every file and every chunk of a large file that
    did not change, and a publish stores only what it changed. Chunks no file refers to any more are
    deleted by the retention policy (knowledge.services.release_storage).
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="+")
    digest = models.CharField(max_length=64, help_text="SHA-256 of the content, hex.")
    content = models.BinaryField()
    size = models.PositiveBigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["namespace", "digest"], name="artifactblob_unique_digest")]

    def __str__(self) -> str:
        return f"{self.digest[:12]} ({self.size} bytes)"


class Artifact(UndeletableModel):
    """One file of a release (context.json, llms.txt, the search index …) with its ETag.

    The row is never deleted; its bytes are its parts' chunks in order, which the retention policy
    may drop for old releases (the file then has no parts and the release's `files_pruned_at` says when).
    """

    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="artifacts")
    name = models.CharField(max_length=200)
    content_type = models.CharField(max_length=100)
    etag = models.CharField(max_length=80)
    size = models.PositiveIntegerField()

    class Meta:
        ordering = ["release", "name"]
        constraints = [models.UniqueConstraint(fields=["release", "name"], name="artifact_unique_name")]

    def __str__(self) -> str:
        return self.name

    @property
    def content(self) -> bytes:
        """The file's bytes (a query for its chunks)."""
        chunks = list(self.parts.order_by("position").values_list("blob__content", flat=True))
        if not chunks and self.size:
            raise LookupError(f"The files of release {self.release_id} were pruned.")
        return b"".join(bytes(chunk) for chunk in chunks)


class ArtifactPart(models.Model):
    """Chunk `position` of a file: the bytes from `offset` on (knowledge.retrieval.chunks cut them)."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="parts")
    position = models.PositiveIntegerField()
    offset = models.PositiveBigIntegerField()
    blob = models.ForeignKey(ArtifactBlob, on_delete=models.PROTECT, related_name="parts")

    class Meta:
        ordering = ["artifact", "position"]
        constraints = [models.UniqueConstraint(fields=["artifact", "position"], name="artifactpart_unique_position")]

    def __str__(self) -> str:
        return f"{self.artifact_id}#{self.position}"


class BuildStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Built and activated"
    UNCHANGED = "unchanged", "Nothing changed"
    HELD = "held", "Built and held by the golden questions"
    FAILED = "failed", "Failed"
    ABANDONED = "abandoned", "Abandoned (worker lost)"


class ReleaseBuild(models.Model):
    """One attempt to build a release: the status an operator watches in the admin."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="builds")
    status = models.CharField(max_length=16, choices=BuildStatus.choices, default=BuildStatus.RUNNING)
    release = models.ForeignKey(Release, null=True, blank=True, on_delete=models.SET_NULL, related_name="builds")
    task_id = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.namespace.slug} build {self.pk} ({self.status})"


class BuildRequest(models.Model):
    """A release build asked for in the same transaction as the change that needs it (a transactional outbox).

    The change and this row commit together, so a publish is never lost when the broker is down or a
    worker dies: the reconciler hands over again every request no release has satisfied yet.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="build_requests")
    serial = models.PositiveBigIntegerField(help_text="The namespace's content serial after the change.")
    reason = models.CharField(max_length=32, help_text="What asked for the build: publish, retire, rollback …")
    created_at = models.DateTimeField(default=timezone.now)
    enqueued_at = models.DateTimeField(null=True, blank=True, help_text="When it was last handed to the broker.")
    attempts = models.PositiveIntegerField(default=0, help_text="How often it was handed to the broker.")
    last_error = models.CharField(max_length=300, blank=True, help_text="Why the last hand-over failed.")
    built_at = models.DateTimeField(null=True, blank=True, help_text="When a release of this content was built.")
    release = models.ForeignKey(Release, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["namespace", "serial"],
                condition=models.Q(built_at__isnull=True),
                name="buildrequest_pending",
            )
        ]

    def __str__(self) -> str:
        return f"{self.namespace.slug} build request {self.pk} ({self.reason})"
