"""Every admin list and page asks the database a bounded number of questions with 1,400 entries imported.

The namespace holds as many entries as the Cranfield collection, each with a live version, and five or
more rows of every other model the admin lists, so a per-row query (N+1) shows as a count above the
budget on the page that has it; the same pages are counted for a superuser and for a member.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from knowledge.models import (
    Entry,
    EntryVersion,
    EvaluationRun,
    Feedback,
    GoldenQuestion,
    Namespace,
    Release,
    ReleaseBuild,
    Role,
    VersionState,
)
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.versions import version_draft_for_entry, version_save, version_submit
from tests.factories import NamespaceFactory, UserFactory, content, membership
from tests.knowledge.adminforms import as_user

pytestmark = pytest.mark.django_db

ENTRIES = 1400
MAX_QUERIES = 16
LIST_ROWS = 100  # Django's list_per_page


def _rows() -> list[str]:
    return [
        json.dumps(
            {
                "id": f"CR-{n:04d}",
                "category": "fact",
                "title": f"Slipstream study {n}",
                "body": f"Wing in a propeller slipstream, test {n}.",
                "tags": ["wing", f"t{n % 7}"],
                "updated": "2026-08-01",
            }
        )
        for n in range(1, ENTRIES + 1)
    ]


@pytest.fixture
def large(ns_a: Namespace) -> dict[str, Any]:
    """1,400 published entries, five open versions in review, releases, builds, runs, questions, feedback."""
    big = NamespaceFactory.create(slug="cran", prefix="CR", id_digits=4)
    fact = big.categories.get(slug="fact")
    fact.blocks.filter(start=0).update(end=499)
    fact.blocks.filter(start=500).update(end=9999)
    writer = membership(UserFactory(username="wendy"), big, Role.EDITOR)
    member = membership(UserFactory(username="pat"), big, Role.EDITOR, Role.REVIEWER)
    membership(member, ns_a, Role.EDITOR)
    boss = UserFactory(username="boss", is_superuser=True)
    entries_import(namespace=big, items=entries_parse(_rows()), actor=writer, reviewer=member, publish=True)
    in_review = []
    for entry in Entry.objects.filter(namespace=big).order_by("number")[:5]:
        draft = version_draft_for_entry(entry=entry, actor=writer)
        saved = version_save(
            version=draft, content=content(title=f"{entry.public_id} revised"), expected_lock_version=0, actor=writer
        )
        in_review.append(version_submit(version=saved, actor=writer))
    built = datetime(2026, 9, 1, tzinfo=UTC)
    for n in range(1, 6):
        release = Release.objects.create(
            namespace=big,
            sequence=n,
            knowledge_version=f"1.{n}.0",
            revision=built.date(),
            manifest_stored=[],
            inputs_hash=f"h{n}",
            built_at=built,
        )
        ReleaseBuild.objects.create(namespace=big, release=release, status="succeeded")
        EvaluationRun.objects.create(namespace=big, release=release, metrics={"ndcg_at_10": 0.5 + n / 20}, results=[])
        GoldenQuestion.objects.create(namespace=big, key=f"q{n}", text=f"Question {n}?", relevant={"CR-0001": 2})
        Feedback.objects.create(namespace=big, kind="outdated", entry_public_id=f"CR-{n:04d}", message=f"Old {n}")
    return {"namespace": big, "member": member, "boss": boss, "in_review": in_review, "release": release}


def _pages(world: dict[str, Any], user: Any) -> list[str]:
    """Every registered model's list and the change page of one of its objects, plus the custom pages."""
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = user
    urls = [reverse("admin:index")]
    for model, model_admin in admin.site._registry.items():
        info = (model._meta.app_label, model._meta.model_name)
        if not model_admin.has_module_permission(request):
            continue
        urls.append(reverse("admin:{}_{}_changelist".format(*info)))
        sample = model_admin.get_queryset(request).order_by("-pk").first()
        if sample is not None and model_admin.has_view_permission(request, sample):
            urls.append(reverse("admin:{}_{}_change".format(*info), args=[sample.pk]))
    version = world["in_review"][0]
    urls += [
        reverse("admin:knowledge_entryversion_change", args=[version.pk]),
        reverse("admin:knowledge_entry_change", args=[version.entry_id]),
        reverse("admin:knowledge_entry_retire", args=[version.entry_id]),
        reverse("admin:knowledge_entryversion_compare", args=[version.pk]),
        reverse("admin:knowledge_entry_changelist") + f"?namespace__id__exact={world['namespace'].pk}",
        reverse("admin:knowledge_entryversion_changelist") + "?state__exact=published",
    ]
    return urls


@pytest.mark.parametrize("who", ["boss", "member"])
def test_every_admin_page_stays_within_its_query_budget_at_1400_entries(large: dict[str, Any], who: str) -> None:
    published = EntryVersion.objects.filter(entry__namespace=large["namespace"], state=VersionState.PUBLISHED)
    assert published.count() == ENTRIES
    user = large[who]
    client = as_user(user)
    over: dict[str, int] = {}
    for url in _pages(large, user):
        client.get(url)  # warm the session and the content-type cache
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200, url
        if len(queries) > MAX_QUERIES:
            over[url] = len(queries)
    assert not over, f"pages over {MAX_QUERIES} queries: {over}"


def test_the_entry_list_shows_a_full_page_within_the_budget(
    large: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    client = as_user(large["member"])
    url = reverse("admin:knowledge_entry_changelist")
    client.get(url)
    with django_assert_max_num_queries(MAX_QUERIES):
        response = client.get(url)
    assert response.content.decode().count('<td class="field-title">') == LIST_ROWS
