"""The entry forms of the editorial admin refuse what the services refuse beside the field, keeping every typed
character (QA: a foreign link emptied the add form, a draft's answered 500, a NUL in tags a 503 page, and a
control character in a title passed review unseen)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.admin import forms as admin_forms
from knowledge.admin.textdiff import field_diff
from knowledge.models import Category, Entry, EntryVersion, Namespace
from knowledge.services.entries import entry_create
from tests.factories import content
from tests.knowledge.adminforms import admin_form, as_user

pytestmark = pytest.mark.django_db

TYPED = {"title": "Zebra crossing rule", "body": "Stop for people on the crossing."}
REFUSED = {
    "links": ("TB-000", "links: TB-000 is not an ID of this namespace"),
    "overrides": ("EG-202", "overrides: EG-202 cannot be used: this namespace builds on no other namespace"),
    "tags": ("safe, x\x00y", "Null characters are not allowed."),
    "aliases": ("x\x00y", "Null characters are not allowed."),
}
CONTROLS = {
    "title": ("QA zebra \x01fact", "title contains the control character U+0001; remove it."),
    "body": ("Bell \x07 here.", "body contains the control character U+0007; remove it."),
    "summary": ("Not a char \uffff.", "summary contains the noncharacter U+FFFF; remove it."),
    "tags": ("safe, be\x1bll", "tags contains the control character U+001B; remove it."),
    "aliases": ("Zebra\x85rule", "aliases contains the control character U+0085; remove it."),
}


@pytest.fixture
def client(editor: Any) -> Client:
    return as_user(editor)


@pytest.fixture
def draft(ns_a: Namespace, editor: Any) -> EntryVersion:
    return entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)


def add_form(client: Client, ns_a: Namespace, **fields: str) -> dict[str, Any]:
    form = admin_form(client, reverse("admin:knowledge_entry_add"))
    category = Category.objects.get(namespace=ns_a, slug="fact")
    data: dict[str, Any] = {
        **form,
        "category": [str(category.pk)],
        "confidence": ["0.9"],
        "updated": ["2026-12-07"],
        "sensitivity": ["public"],
        **{name: [value] for name, value in {**TYPED, **fields}.items()},
        "_save": ["Save and view"],
    }
    return data


def draft_form(client: Client, draft: EntryVersion, **fields: str) -> dict[str, Any]:
    form = admin_form(client, reverse("admin:knowledge_entryversion_change", args=[draft.pk]))
    return {**form, **{name: [value] for name, value in {**TYPED, **fields}.items()}, "_continue": ["Save"]}


def field_errors(response: Any) -> dict[str, list[str]]:
    return {name: list(errors) for name, errors in response.context["adminform"].form.errors.items()}


@pytest.mark.parametrize("field", REFUSED)
def test_the_add_form_shows_a_refused_field_beside_it_and_keeps_the_text(
    client: Client, ns_a: Namespace, field: str
) -> None:
    value, message = REFUSED[field]

    response = client.post(reverse("admin:knowledge_entry_add"), add_form(client, ns_a, **{field: value}))

    assert response.status_code == 200
    errors = field_errors(response)
    assert list(errors) == [field] and message in errors[field][0]
    form = response.context["adminform"].form
    assert (form["title"].value(), form["body"].value()) == (TYPED["title"], TYPED["body"])
    assert not Entry.objects.filter(namespace=ns_a).exists()


@pytest.mark.parametrize("field", REFUSED)
def test_the_draft_form_shows_a_refused_field_beside_it_and_keeps_the_text(
    client: Client, draft: EntryVersion, field: str
) -> None:
    value, message = REFUSED[field]
    before = draft.content_hash
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])

    response = client.post(url, draft_form(client, draft, **{field: value}))

    assert response.status_code == 200
    errors = field_errors(response)
    assert list(errors) == [field] and message in errors[field][0]
    assert response.context["adminform"].form["title"].value() == TYPED["title"]
    draft.refresh_from_db()
    assert draft.content_hash == before


@pytest.mark.parametrize("field", CONTROLS)
def test_a_control_character_or_noncharacter_is_the_fields_error_on_both_forms(
    client: Client, ns_a: Namespace, draft: EntryVersion, field: str
) -> None:
    value, message = CONTROLS[field]
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])

    added = client.post(reverse("admin:knowledge_entry_add"), add_form(client, ns_a, **{field: value}))
    saved = client.post(url, draft_form(client, draft, **{field: value}))

    assert (added.status_code, saved.status_code) == (200, 200)
    assert field_errors(added) == {field: [message]} == field_errors(saved)
    assert Entry.objects.filter(namespace=ns_a).count() == 1  # only the draft's entry


def test_a_body_keeps_tabs_and_line_breaks(client: Client, draft: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])

    response = client.post(url, draft_form(client, draft, body="Step one:\r\n\tstop.\r\nStep two: look."))

    assert response.status_code == 302, field_errors(response)
    draft.refresh_from_db()
    assert draft.body == "Step one:\r\n\tstop.\r\nStep two: look."


def test_a_draft_whose_save_the_service_refuses_after_the_form_answers_a_message_not_a_500(
    client: Client, draft: EntryVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form checks what it can; a refusal it could not foresee (a base entry retired meanwhile) is shown."""
    monkeypatch.setattr(admin_forms.VersionForm, "reference_scope", lambda self, cleaned: None)
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])

    response = client.post(url, draft_form(client, draft, links="TB-000"), follow=True)

    assert response.status_code == 200
    assert any("TB-000 is not an ID of this namespace" in str(m) for m in response.context["messages"])
    draft.refresh_from_db()
    assert draft.links == []


def test_the_review_diff_shows_an_invisible_character_of_older_content_by_its_code_point() -> None:
    diff = field_diff("title", "QA zebra fact", "QA zebra \x01fact\uffff")

    assert diff.changed
    (line,) = diff.lines
    assert "".join(piece.text for piece in line.new or ()) == "QA zebra ⟨U+0001⟩fact⟨U+FFFF⟩"
