"""How much one entry may hold, refused with the field named on every path that writes content (QA: a 1 MB
summary and 20,000 tags were stored, and every page showing them ran the safety scan over all of it)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from knowledge.models import Category, EntryVersion, Namespace, Role, TokenScope
from knowledge.services.content import BODY_MAX, SUMMARY_MAX, ContentSizeError
from tests.factories import UserFactory, content, membership
from tests.knowledge.adminforms import admin_form, as_user
from tests.manage_api.conftest import token_for

pytestmark = pytest.mark.django_db

TOO_BIG = {
    "summary": ("s" * (SUMMARY_MAX + 1), "“summary” is longer than 2,000 characters."),
    "body": ("b" * (BODY_MAX + 1), "“body” is longer than 100,000 characters."),
    "tags": ([f"t{n}" for n in range(51)], "“tags” holds more than 50 items."),
    "aliases": (["a" * 501], "“aliases” has an item longer than 500 characters."),
}


@pytest.mark.parametrize("field", TOO_BIG)
def test_content_past_a_limit_is_refused_naming_the_field(field: str) -> None:
    value, message = TOO_BIG[field]
    with pytest.raises(ContentSizeError) as refused:
        content(**{field: value})
    assert (refused.value.field, str(refused.value)) == (field, message)


def test_the_largest_content_allowed_is_kept() -> None:
    kept = content(summary="s" * SUMMARY_MAX, body="b" * BODY_MAX, tags=[f"t{n}" for n in range(50)])
    assert (len(kept.summary), len(kept.body), len(kept.tags)) == (SUMMARY_MAX, BODY_MAX, 50)


def test_the_admin_shows_a_summary_too_long_as_the_forms_error_and_stores_nothing(ns_a: Namespace) -> None:
    client = as_user(membership(UserFactory(username="edna"), ns_a, Role.EDITOR))
    url = reverse("admin:knowledge_entry_add")
    form = admin_form(client, url)
    category = Category.objects.get(namespace=ns_a, slug="fact")
    data = {
        **form,
        "category": [str(category.pk)],
        "title": ["Long"],
        "summary": ["s" * (SUMMARY_MAX + 1)],
        "body": ["Body."],
        "confidence": ["0.9"],
        "updated": ["2026-12-07"],
        "sensitivity": ["public"],
    }

    response = client.post(url, data)

    assert response.status_code == 200
    assert "is longer than 2,000 characters" in response.text
    assert not EntryVersion.objects.filter(entry__namespace=ns_a, title="Long").exists()


def test_an_import_line_too_large_is_refused_with_its_line(ns_a: Namespace, tmp_path: Path) -> None:
    rows = [{"title": "Fine", "body": "Fine."}, {"title": "Huge", "body": "Huge.", "tags": ["x" * 81]}]
    path = tmp_path / "entries.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    err = StringIO()

    with pytest.raises(CommandError):
        call_command("import_entries", str(path), "--namespace", ns_a.slug, stdout=StringIO(), stderr=err)

    assert "entries.jsonl:2" in err.getvalue() and "longer than 80 characters" in err.getvalue()
    assert not EntryVersion.objects.filter(entry__namespace=ns_a, title="Fine").exists()


def test_the_management_api_refuses_a_body_too_long(client: Any, ns_a: Namespace) -> None:
    editor = membership(UserFactory(username="edna"), ns_a, Role.EDITOR)
    token = token_for(editor, ns_a, scope=TokenScope.EDITOR)
    response = client.post(
        f"/t/{ns_a.slug}/api/manage/entries/",
        {"category": "fact", "title": "Long", "body": "b" * (BODY_MAX + 1)},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )

    assert response.status_code == 400 and response.json()["error"]["param"] == "body"
