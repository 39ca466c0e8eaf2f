"""Overlays (issue 16 §1): the base namespaces a namespace builds on, in priority order."""

from __future__ import annotations

from django.db import models

from knowledge.models.namespace import Namespace


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
