"""An editor of one namespace can neither see nor change another namespace's objects in the admin."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import Entry, EntryVersion, Namespace, VersionState
from knowledge.services.entries import entry_create
from tests.factories import content

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry_a(ns_a: Namespace, editor: Any) -> EntryVersion:
    return entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)


@pytest.fixture
def entry_b(ns_b: Namespace, outsider: Any) -> EntryVersion:
    return entry_create(
        namespace=ns_b, category=ns_b.categories.get(slug="rule"), content=content(title="Beta secret"), actor=outsider
    )


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_lists_show_only_own_namespace(editor: Any, entry_a: EntryVersion, entry_b: EntryVersion) -> None:
    client = _client(editor)
    entries = client.get(reverse("admin:knowledge_entry_changelist"))
    versions = client.get(reverse("admin:knowledge_entryversion_changelist"))
    assert entries.status_code == 200
    assert entry_a.entry.public_id in entries.text
    assert entry_b.entry.public_id not in entries.text
    assert "Beta secret" not in versions.text


@pytest.mark.parametrize(
    "url_name",
    [
        "admin:knowledge_entry_change",
        "admin:knowledge_entry_history",
        "admin:knowledge_entry_edit",
        "admin:knowledge_entry_retire",
    ],
)
def test_change_urls_of_another_namespace_are_not_found(editor: Any, entry_b: EntryVersion, url_name: str) -> None:
    response = _client(editor).get(reverse(url_name, args=[entry_b.entry_id]))
    assert response.status_code in {302, 404}
    assert "Beta secret" not in response.text


def test_version_change_url_of_another_namespace_is_not_found(editor: Any, entry_b: EntryVersion) -> None:
    for url in (
        reverse("admin:knowledge_entryversion_change", args=[entry_b.pk]),
        reverse("admin:knowledge_entryversion_history", args=[entry_b.pk]),
    ):
        response = _client(editor).get(url)
        assert response.status_code in {302, 404}
        assert "Beta secret" not in response.text


def test_actions_ignore_another_namespaces_objects(editor: Any, entry_b: EntryVersion) -> None:
    response = _client(editor).post(
        reverse("admin:knowledge_entryversion_changelist"),
        {"action": "bulk_submit", "_selected_action": [entry_b.pk]},
    )
    assert response.status_code in {200, 302}
    entry_b.refresh_from_db()
    assert entry_b.state == VersionState.DRAFT


def test_transition_url_of_another_namespace_is_not_found(editor: Any, entry_b: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_transition", args=[entry_b.pk, "submit"])
    response = _client(editor).post(url, {"note": ""})
    assert response.status_code == 404
    entry_b.refresh_from_db()
    assert entry_b.state == VersionState.DRAFT


def test_category_choices_exclude_other_namespaces(editor: Any, ns_b: Namespace) -> None:
    response = _client(editor).get(reverse("admin:knowledge_entry_add"))
    assert response.status_code == 200
    assert "alpha/fact" in response.text
    assert "beta/" not in response.text


def test_autocomplete_offers_only_own_namespaces(editor: Any, ns_a: Namespace, ns_b: Namespace) -> None:
    response = _client(editor).get(
        reverse("admin:autocomplete"),
        {"app_label": "knowledge", "model_name": "category", "field_name": "namespace", "term": ""},
    )
    assert response.status_code == 200
    slugs = {item["text"] for item in response.json()["results"]}
    assert slugs == {"alpha"}


def test_superuser_sees_every_namespace(django_user_model: Any, entry_a: EntryVersion, entry_b: EntryVersion) -> None:
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    response = _client(root).get(reverse("admin:knowledge_entry_changelist"))
    assert entry_a.entry.public_id in response.text
    assert entry_b.entry.public_id in response.text


def test_nobody_can_delete_entries(editor: Any, entry_a: EntryVersion) -> None:
    response = _client(editor).get(reverse("admin:knowledge_entry_delete", args=[entry_a.entry_id]))
    assert response.status_code in {302, 403, 404}
    assert Entry.objects.filter(pk=entry_a.entry_id).exists()
