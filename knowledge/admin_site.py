"""Evergreen's admin site: Django's, with each person's dashboard as its home page.

Outside the knowledge.admin package on purpose: Django imports the default site while that package
registers its model admins, so this module must not import the package at load time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse

from knowledge.charts.measures import RunPoint, quality_trend_chart
from knowledge.models import Role
from knowledge.selectors.dashboard import dashboard_get


@dataclass(frozen=True)
class VersionRow:
    """A dashboard row for a version of anything reviewed: its name, content line and review page."""

    version: Any
    label: str
    title: str
    url: str


class EvergreenAdminSite(admin.AdminSite):
    site_header = "Evergreen"
    site_title = "Evergreen admin"
    index_title = "Your work"
    index_template = "admin/evergreen/dashboard.html"

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> TemplateResponse:
        from knowledge.admin.roles import request_roles  # noqa: PLC0415  # see the module's docstring

        roles = request_roles(request)
        board = dashboard_get(user=request.user, roles=roles)
        for name in ("my_drafts", "rejected", "awaiting_review", "to_publish", "scheduled"):
            panel = getattr(board, name)
            if panel is not None:
                panel.rows = [self.version_row(version) for version in panel.rows]
        by_namespace: dict[str, list[RunPoint]] = defaultdict(list)
        for run in board.trend:
            by_namespace[run.namespace.slug].append(RunPoint(f"#{run.release.sequence}", run.metrics))
        charts = [(slug, quality_trend_chart(points, ident=f"quality-{slug}")) for slug, points in by_namespace.items()]
        context = {
            "board": board,
            "quality_charts": charts,
            "is_editor": roles.anywhere(Role.EDITOR),
            "is_reviewer": roles.anywhere(Role.REVIEWER),
            **(extra_context or {}),
        }
        return super().index(request, context)

    def version_row(self, version: Any) -> VersionRow:
        """Named by the version's own admin (see knowledge.admin.workflow), so every kind reads alike."""
        model_admin: Any = self._registry[type(version)]
        return VersionRow(
            version=version,
            label=f"{model_admin.subject_name(version)} v{version.number}",
            title=model_admin.version_title(version),
            url=model_admin.page_url(version),
        )
