"""The review queue: versions awaiting review, as their own admin list."""

from __future__ import annotations

from knowledge.models.entry import EntryVersion


class ReviewItem(EntryVersion):
    class Meta:
        proxy = True
        verbose_name = "version awaiting your review"
        verbose_name_plural = "awaiting your review"
