"""Overlays (issue 16 §1): the base namespaces a namespace builds on, in priority order."""

from __future__ import annotations

from django.db import models

from knowledge.models.namespace import Namespace, Sensitivity


class NamespaceBase(models.Model):
    """`namespace` builds on `base`: its releases include the base's published entries.

    Written only by knowledge.services.layers, which refuses cycles, a public namespace on a private
    base and IDs that two layers would share, and which decides `shares_protected` when the list is
    published.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="base_links")
    base = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="dependant_links")
    position = models.PositiveSmallIntegerField(help_text="Priority: 0 is the first base after the namespace itself.")
    shares_protected = models.BooleanField(
        default=False,
        help_text=(
            "The base's internal and restricted entries reach this namespace too: everyone who wrote the list "
            "could read them (an editor of the base), or it was set up from files. Otherwise only what the "
            "base serves publicly."
        ),
    )

    class Meta:
        ordering = ["namespace", "position"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "base"], name="namespacebase_unique_base"),
            models.UniqueConstraint(fields=["namespace", "position"], name="namespacebase_unique_position"),
            models.CheckConstraint(condition=~models.Q(namespace=models.F("base")), name="namespacebase_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace.slug} on {self.base.slug}"


class WithdrawnEntry(models.Model):
    """An ID a release of `namespace` served from the layer `layer` (a base, or a base's base) that a later
    release served from nowhere once `layer` was no longer among its bases (seed §6: an ID agents could
    read answers 410, never 404). Releases built while `layer` is not among the namespace's layers and
    the ID is neither served nor retired another way serve this as a tombstone.

    Written only by knowledge.services.layers_withdrawn when a release is built; kept when the base is
    added back (its entries are served again, so nothing answers from it), refreshed when removed again.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="withdrawn_entries")
    public_id = models.CharField(max_length=32)
    layer = models.SlugField(max_length=64, help_text="The namespace it was served from (its layer).")
    title = models.CharField(max_length=500, blank=True)
    sensitivity = models.CharField(
        max_length=16, choices=Sensitivity.choices, default=Sensitivity.PUBLIC, help_text="As it was served."
    )
    withdrawn_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["namespace", "public_id"], name="withdrawnentry_unique_id"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} withdrawn from {self.namespace.slug}"
