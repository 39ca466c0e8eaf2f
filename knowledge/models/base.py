"""Rows that are never deleted: entries, versions, releases, artifacts and the audit trail."""

from __future__ import annotations

from typing import Any, NoReturn

from django.db import models

NEVER_DELETED = "Evergreen never deletes {what}: retire entries, withdraw versions, roll releases back."


class UndeletableQuerySet(models.QuerySet):
    def delete(self) -> NoReturn:
        raise models.ProtectedError(NEVER_DELETED.format(what=self.model._meta.verbose_name_plural), set())


class UndeletableModel(models.Model):
    """Refuses delete() and QuerySet.delete(); PostgreSQL also refuses it with a trigger."""

    objects = UndeletableQuerySet.as_manager()

    class Meta:
        abstract = True

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise models.ProtectedError(NEVER_DELETED.format(what=self._meta.verbose_name_plural), set())
