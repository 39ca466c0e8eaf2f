"""Characters no entry may hold, refused with the field and code point named on every path that writes content
(QA: a title's U+0001 and a body's U+FFFF passed review unseen and were served raw; a NUL in tags reached
PostgreSQL and came back as a database outage)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.errors import InvalidInputError
from knowledge.models import EntryVersion, Namespace, Role, TokenScope
from knowledge.services.content import ContentTextError
from knowledge.services.imports import UNSTORABLE_TEXT, ImportFileError, entries_parse
from tests.factories import UserFactory, content, membership
from tests.manage_api.conftest import token_for

REFUSED = {
    "title": ("QA zebra \x01fact", "title contains the control character U+0001; remove it."),
    "summary": ("Tab\tis fine, \x0c is not.", "summary contains the control character U+000C; remove it."),
    "body": ("Line\nbreaks are fine; \uffff is not.", "body contains the noncharacter U+FFFF; remove it."),
    "tags": (["ok", "x\x00y"], "tags contains the control character U+0000; remove it."),
    "aliases": (["Zebra\x1frule"], "aliases contains the control character U+001F; remove it."),
}


@pytest.mark.parametrize("field", REFUSED)
def test_content_with_a_control_character_or_noncharacter_is_refused_naming_field_and_code_point(field: str) -> None:
    value, message = REFUSED[field]
    with pytest.raises(ContentTextError) as refused:
        content(**{field: value})
    assert (refused.value.field, str(refused.value)) == (field, message)
    assert isinstance(refused.value, InvalidInputError) and isinstance(refused.value, ValueError)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "Tab\tin a title", "title contains the control character U+0009; remove it."),
        ("tags", ["new\nline"], "tags contains the control character U+000A; remove it."),
        ("title", "C1 \x9b here", "title contains the control character U+009B; remove it."),
        ("body", "DEL \x7f here", "body contains the control character U+007F; remove it."),
        ("body", "Plane 16 \U0010fffe", "body contains the noncharacter U+10FFFE; remove it."),
        ("title", "\ufdd0 Arabic block", "title contains the noncharacter U+FDD0; remove it."),
    ],
)
def test_a_title_or_tag_refuses_every_control_character(field: str, value: Any, message: str) -> None:
    with pytest.raises(ContentTextError, match=message.replace("+", r"\+")):
        content(**{field: value})


def test_text_with_tabs_line_breaks_and_visible_unicode_is_kept() -> None:
    kept = content(summary="a\tb", body="Zeile\r\n\tzwei — ½ 预算 \u00a0 🙂", aliases=["预算纪律"])
    assert kept.body == "Zeile\r\n\tzwei — ½ 预算 \u00a0 🙂"


def test_a_body_keeps_the_c1_controls_of_text_decoded_with_the_wrong_charset() -> None:
    """A docstring of Django's holds U+0099, bytes decoded as Latin-1 (bench/collections/pylibs)."""
    docstring = "an IRI (e.g. '/I ♥ Django/' or b'/I \u00e2\u0099\u00a5 Django/')"
    assert content(body=docstring, summary=docstring).body == docstring


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["title", "body", "tags", "aliases"])
def test_an_import_line_with_a_control_character_is_refused_with_its_line(field: str) -> None:
    value, message = REFUSED[field]
    line = {"title": "Fine", "body": "Fine.", field: value}

    with pytest.raises(ImportFileError) as refused:
        entries_parse([json.dumps({"title": "Kept", "body": "Kept."}), json.dumps(line)])

    if field == "tags":  # a NUL: the import's own message, before the content is built
        assert refused.value.errors == [(2, UNSTORABLE_TEXT.format(name="tags"))]
    else:
        assert refused.value.errors == [(2, message)]


@pytest.mark.django_db
def test_import_entries_refuses_a_control_character_and_imports_nothing(ns_a: Namespace, tmp_path: Path) -> None:
    rows = [{"title": "Fine", "body": "Fine."}, {"title": "QA zebra \u0001fact", "body": "Bell \u0007."}]
    path = tmp_path / "entries.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    err = StringIO()

    with pytest.raises(CommandError):
        call_command("import_entries", str(path), "--namespace", ns_a.slug, stdout=StringIO(), stderr=err)

    assert "entries.jsonl:2" in err.getvalue() and "title contains the control character U+0001" in err.getvalue()
    assert not EntryVersion.objects.filter(entry__namespace=ns_a).exists()


@pytest.mark.django_db
def test_the_management_api_refuses_a_control_character_as_invalid(client: Any, ns_a: Namespace) -> None:
    editor = membership(UserFactory(username="edna"), ns_a, Role.EDITOR)
    token = token_for(editor, ns_a, scope=TokenScope.EDITOR)
    response = client.post(
        f"/t/{ns_a.slug}/api/manage/entries/",
        {"category": "fact", "title": "QA zebra \u0001fact", "body": "Body."},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    assert response.json()["error"]["message"] == "title contains the control character U+0001; remove it."
    assert not EntryVersion.objects.filter(entry__namespace=ns_a).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["tags", "aliases"])
def test_the_management_api_refuses_a_nul_in_a_list_field_naming_it(client: Any, ns_a: Namespace, field: str) -> None:
    editor = membership(UserFactory(username="edna"), ns_a, Role.EDITOR)
    token = token_for(editor, ns_a, scope=TokenScope.EDITOR)
    response = client.post(
        f"/t/{ns_a.slug}/api/manage/entries/",
        {"category": "fact", "title": "Fine", "body": "Body.", field: ["x\u0000y"]},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_parameter"
    assert response.json()["error"]["param"].startswith(field)
    assert not EntryVersion.objects.filter(entry__namespace=ns_a).exists()
