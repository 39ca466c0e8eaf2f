"""An editor of one namespace can neither see nor change another namespace's objects in the admin."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import Entry, EntryVersion, Namespace, Role, VersionState
from knowledge.services.entries import entry_create
from tests.factories import UserFactory, content, membership
from tests.security.events import security_records

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


def test_autocomplete_offers_only_namespaces_where_the_form_may_be_saved(
    ns_a: Namespace, ns_b: Namespace, editor: Any
) -> None:
    """Categories need the namespace-admin role: an admin of alpha who edits beta is offered alpha only."""
    admin_of_alpha = membership(UserFactory(username="ada"), ns_a, Role.ADMIN)
    membership(admin_of_alpha, ns_b, Role.EDITOR)
    query = {"app_label": "knowledge", "model_name": "category", "field_name": "namespace", "term": ""}

    offered = _client(admin_of_alpha).get(reverse("admin:autocomplete"), query)
    to_an_editor = _client(editor).get(reverse("admin:autocomplete"), query)

    assert offered.status_code == 200
    assert {item["text"] for item in offered.json()["results"]} == {"alpha"}
    assert to_an_editor.json()["results"] == []


def test_superuser_sees_every_namespace(django_user_model: Any, entry_a: EntryVersion, entry_b: EntryVersion) -> None:
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    response = _client(root).get(reverse("admin:knowledge_entry_changelist"))
    assert entry_a.entry.public_id in response.text
    assert entry_b.entry.public_id in response.text


def test_nobody_can_delete_entries(editor: Any, entry_a: EntryVersion) -> None:
    response = _client(editor).get(reverse("admin:knowledge_entry_delete", args=[entry_a.entry_id]))
    assert response.status_code in {302, 403, 404}
    assert Entry.objects.filter(pk=entry_a.entry_id).exists()


def test_filters_name_only_the_users_namespaces(editor: Any, ns_b: Namespace, entry_a: EntryVersion) -> None:
    """Issue 9 item 5: "By namespace" and category filters listed every tenant, private ones too."""
    ns_b.categories.create(slug="beta-only-plans", name="Plans", position=9)
    pages = [
        reverse("admin:knowledge_entry_changelist"),
        reverse("admin:knowledge_entryversion_changelist"),
        reverse("admin:knowledge_auditrecord_changelist"),
        reverse("admin:knowledge_category_changelist"),
    ]
    for url in pages:
        response = _client(editor).get(url)
        assert response.status_code == 200, url
        assert "beta" not in response.text, url


def test_a_refusal_is_a_403_inside_the_admin_that_names_the_missing_role(editor: Any, entry_a: EntryVersion) -> None:
    response = _client(editor).get(reverse("admin:knowledge_entry_retire", args=[entry_a.entry_id]))

    assert response.status_code == 403
    assert "You are not a reviewer of the namespace “alpha”." in response.text
    assert 'id="site-name"' in response.text  # the admin's own page, not Django's bare 403


def test_an_action_on_a_selection_across_namespaces_acts_only_where_the_role_is_held(
    ns_a: Namespace, ns_b: Namespace, entry_a: EntryVersion, entry_b: EntryVersion, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="evergreen.security")
    both = membership(UserFactory(username="bea"), ns_a, Role.EDITOR)
    membership(both, ns_b, Role.REVIEWER)

    response = _client(both).post(
        reverse("admin:knowledge_entryversion_changelist"),
        {"action": "bulk_submit", "_selected_action": [entry_a.pk, entry_b.pk]},
        follow=True,
    )

    entry_a.refresh_from_db()
    entry_b.refresh_from_db()
    assert entry_a.state == VersionState.IN_REVIEW
    assert entry_b.state == VersionState.DRAFT
    assert "Skipped 1 selected entry versions in beta: you are not an editor there." in response.text
    (event,) = security_records(caplog, "permission_denied")
    assert (event["namespace"], event["reason"], event["action"]) == ("beta", "action_skipped", "bulk_submit")
