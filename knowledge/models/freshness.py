"""The “due for re-review” queue: live versions past their review-by or valid-until date, as an admin list."""

from __future__ import annotations

from knowledge.models.entry import EntryVersion


class DueItem(EntryVersion):
    class Meta:
        proxy = True
        verbose_name = "entry due for re-review"
        verbose_name_plural = "due for re-review"
