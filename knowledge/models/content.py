"""Namespace content beside entries: docs pages, prompt packs, golden questions, agent feedback."""

from __future__ import annotations

from django.db import models

from knowledge.models.namespace import Namespace


class DocPage(models.Model):
    """An editor-managed documentation page served at /docs/<slug> and /docs/<slug>.md."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="doc_pages")
    slug = models.SlugField(max_length=80)
    title = models.CharField(max_length=200)
    body = models.TextField(help_text="Markdown.")
    position = models.PositiveSmallIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["namespace", "position", "slug"]
        constraints = [models.UniqueConstraint(fields=["namespace", "slug"], name="docpage_unique_slug")]

    def __str__(self) -> str:
        return self.slug


class PromptPack(models.Model):
    """Instructions a user pastes into an assistant; ${base_url} is filled in when served."""

    class Scenario(models.TextChoices):
        CHAT = "chat", "Chat"
        CODING = "coding", "Coding"
        RESEARCH = "research", "Research"
        SUPPORT = "support", "Support"

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="prompt_packs")
    scenario = models.CharField(max_length=16, choices=Scenario.choices)
    template = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["namespace", "scenario"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "scenario"], name="promptpack_unique_scenario"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace.slug}/{self.scenario}"


class GoldenQuestion(models.Model):
    """An evaluation question with the entries that answer it, or none when it is not covered."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="golden_questions")
    key = models.CharField(max_length=64, help_text="A stable identifier, e.g. eg-q-001.")
    text = models.TextField()
    relevant = models.JSONField(
        default=dict, blank=True, help_text='{"EG-202": 2} (grade 2 = the answer, 1 = related); {} = not covered.'
    )
    split = models.CharField(max_length=8, default="dev")

    class Meta:
        ordering = ["namespace", "key"]
        constraints = [models.UniqueConstraint(fields=["namespace", "key"], name="golden_unique_key")]

    def __str__(self) -> str:
        return self.key


class Feedback(models.Model):
    """An agent's or reader's report; untrusted text that waits for an editor and changes nothing."""

    class Kind(models.TextChoices):
        OUTDATED = "outdated", "Outdated"
        INCORRECT = "incorrect", "Incorrect"
        MISSING = "missing", "Missing"
        OTHER = "other", "Other"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DONE = "done", "Handled"
        DISMISSED = "dismissed", "Dismissed"

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="feedback")
    entry_public_id = models.CharField(max_length=32, blank=True)
    query = models.CharField(max_length=500, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    message = models.TextField(max_length=2000)
    source = models.CharField(max_length=32, default="mcp")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    # The safety scan of the message and query, for the editor who reads them (never acted on alone).
    findings = models.JSONField(default=list, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "feedback"

    def __str__(self) -> str:
        return f"{self.kind}: {self.message[:40]}"


class EvaluationRun(models.Model):
    """The metrics of the golden questions against one release, as measured."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="evaluation_runs")
    release = models.ForeignKey("knowledge.Release", on_delete=models.PROTECT, related_name="evaluation_runs")
    metrics = models.JSONField()
    results = models.JSONField(help_text="Per question: ranked IDs, packed IDs, matched.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.namespace.slug} @ release {self.release_id}"
