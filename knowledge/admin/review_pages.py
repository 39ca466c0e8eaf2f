"""What a version's review page and the compare page show, for any reviewed version (see `workflow`)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from knowledge.admin.roles import request_roles
from knowledge.models import Role, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.selectors.reviews import review_thread, version_baseline, version_siblings

COMPARE_TEMPLATE = "admin/evergreen/compare.html"


def history_rows(admin: Any, versions: list[Any]) -> list[dict[str, Any]]:
    return [{"version": v, "title": admin.version_title(v)} for v in versions]


def review_context(admin: Any, request: HttpRequest, version: Any) -> dict[str, Any]:
    """Everything around the form: what changed, the buttons this person may use, the history, the thread."""
    roles = request_roles(request)
    namespace_id = admin.namespace_id_of(version)
    baseline = version_baseline(version)
    history = list(version_siblings(version))
    open_version = next((v for v in history if v.state in OPEN_STATES), None)
    may_edit = roles.has(namespace_id, Role.EDITOR) and not admin.is_retired(version)
    return {
        "editable": admin._is_editable(request, version),
        "transition_buttons": admin.actions_for(request, version),
        "transition_url_name": f"admin:{admin.url_name('transition')}",
        "version_url_name": f"admin:{admin.url_name('change')}",
        "compare_url": admin.page_url(version, "compare"),
        "comment_url": admin.page_url(version, "comment"),
        "revise_url": admin.page_url(version, "revise"),
        "schedulable": admin.schedulable,
        "scanned": admin.scanned,
        "self_review_blocked": (
            version.state == VersionState.IN_REVIEW
            and roles.has(namespace_id, Role.REVIEWER)
            and admin.four_eyes_blocks(request, version)
        ),
        "diff": admin.diff_html(baseline, version),
        "baseline": baseline,
        "subject_name": admin.subject_name(version),
        "history": history_rows(admin, history),
        "thread": review_thread(version),
        "can_comment": roles.has(namespace_id),
        "can_revise": may_edit and open_version is None,
        "open_version": open_version,
        "title": admin.version_title(version) or admin.subject_name(version),
        "subtitle": f"{version} · {version.get_state_display().lower()}",
    }


def compare_page(admin: Any, request: HttpRequest, version: Any) -> HttpResponse:
    """Two versions of the same thing, chosen by number (default: this one against the one before it)."""
    versions = list(version_siblings(version))
    by_number = {v.number: v for v in versions}
    try:
        new = by_number[int(request.GET.get("new", version.number))]
        old_number = request.GET.get("old")
        old = by_number[int(old_number)] if old_number else next((v for v in versions if v.number < new.number), None)
    except (KeyError, ValueError):
        messages.error(request, "Choose two versions of the same thing from the lists.")
        new, old = version, next((v for v in versions if v.number < version.number), None)
    context = {
        **admin.admin_site.each_context(request),
        "opts": admin.model._meta,
        "subject_name": admin.subject_name(version),
        "versions": history_rows(admin, versions),
        "old": old,
        "new": new,
        "version_url_name": f"admin:{admin.url_name('change')}",
        "compare_url": admin.page_url(version, "compare"),
        "diff": admin.diff_html(old, new),
        "title": f"Compare versions of {admin.subject_name(version)}",
    }
    return TemplateResponse(request, COMPARE_TEMPLATE, context)
