"""QA's findings on the management API: `ordering`, forged cursors, list items, trust fields, override messages."""

from __future__ import annotations

import base64
from datetime import date
from typing import Any

import pytest

from knowledge.models import Entry, EntryVersion
from knowledge.services.content import ContentReferenceError, content_references_check
from tests.factories import content
from tests.manage_api.routes import BASE
from tests.servingfixtures import bases_declare

pytestmark = pytest.mark.django_db


def error_of(response: Any) -> dict[str, Any]:
    return response.json()["error"]


def assert_bad_parameter(response: Any, param: str) -> str:
    assert response.status_code == 400, response.content
    assert (error_of(response)["code"], error_of(response)["param"]) == ("invalid_parameter", param)
    return str(error_of(response)["message"])


def forged(position: str) -> str:
    """A cursor in the format DRF's CursorPagination decodes: base64 of its query string."""
    return base64.b64encode(position.encode()).decode()


def patch_version(caller: Any, version: EntryVersion, fields: dict[str, Any]) -> Any:
    path = BASE + f"versions/{version.pk}/"
    return caller.patch(path, fields, HTTP_IF_MATCH=caller.get(path)["ETag"])


# -- 1. ordering ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "ordering", "accepted"),
    [
        ("entries/", "secret", ["number", "-number", "head_updated", "created_at"]),
        ("entries/", "number,secret", ["number", "-created_at"]),
        ("versions/", "-secret", ["id", "-id", "modified_at", "submitted_at", "updated"]),
    ],
)
def test_an_unknown_ordering_is_invalid_parameter_naming_the_accepted_ones(
    world: Any, route: str, ordering: str, accepted: list[str]
) -> None:
    message = assert_bad_parameter(world.callers["editor_a"].get(BASE + route, data={"ordering": ordering}), "ordering")
    assert all(name in message for name in accepted), message


def test_the_documented_orderings_still_order(world: Any) -> None:
    caller = world.callers["editor_a"]
    for ordering in ("number", "-number", "head_updated", "-created_at", "number,-created_at", ""):
        assert caller.get(BASE + "entries/", data={"ordering": ordering}).status_code == 200, ordering
    ids = [row["id"] for row in caller.get(BASE + "versions/", data={"ordering": "id"}).json()["results"]]
    assert ids == sorted(ids)


# -- 2. cursors ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["entries/", "versions/", "audit/", "feedback/", "releases/"])
@pytest.mark.parametrize("position", ["p=100", "o=1000000", "p=1&r=1"])
def test_a_forged_cursor_is_invalid_parameter(world: Any, route: str, position: str) -> None:
    response = world.callers["editor_a"].get(BASE + route, data={"cursor": forged(position)})
    assert_bad_parameter(response, "cursor")


def test_a_cursor_handed_out_pages_and_one_altered_is_refused(world: Any) -> None:
    caller = world.callers["editor_a"]
    first = caller.get(BASE + "audit/", data={"limit": 1}).json()
    second = caller.get(first["next"])
    assert second.status_code == 200 and second.json()["results"]
    assert caller.get(second.json()["previous"]).json()["results"] == first["results"]
    handed = first["next"].split("cursor=")[1].split("&")[0]
    altered = handed[:-2] + ("AA" if not handed.endswith("AA") else "BB")
    assert_bad_parameter(caller.get(BASE + "audit/", data={"cursor": altered, "limit": 1}), "cursor")


# -- 3. lists of strings -------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["tags", "aliases", "links", "paths"])
@pytest.mark.parametrize("items", [[1, 2], [True], [None], [{"a": "b"}], [["x"]]])
def test_a_list_of_strings_takes_only_strings(world: Any, field: str, items: list[Any]) -> None:
    response = patch_version(world.callers["editor_a"], world.draft, {field: items})
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "invalid_parameter"
    assert str(error_of(response)["param"]).startswith(field)
    world.draft.refresh_from_db()
    assert world.draft.tags == ["cite"] and world.draft.lock_version == 0


def test_other_lists_of_strings_take_only_strings(world: Any) -> None:
    editor = world.callers["editor_a"]
    created = editor.post(BASE + "entries/", {"category": "fact", "title": "T", "body": "B", "tags": [7]})
    synonyms = editor.post(BASE + "synonym-sets/", {"name": "numbers", "phrases": ["one", 1]})
    bases = editor.post(BASE + "bases/propose/", {"bases": [5]})
    for response, field in ((created, "tags"), (synonyms, "phrases"), (bases, "bases")):
        assert response.status_code == 400, response.content
        assert str(error_of(response)["param"]).startswith(field)


@pytest.mark.parametrize("value", [5, True, ["x"], {"a": "b"}])
def test_every_text_field_of_a_body_takes_only_a_string(world: Any, value: Any) -> None:
    """QA: `retire/` took {"replaced_by": 5} as the text "5" (then a 422 about a replacement "5")."""
    editor, reviewer = world.callers["editor_a"], world.callers["reviewer_a"]
    live = world.live.entry.public_id
    sent = [
        (editor, BASE + "entries/", {"category": "fact", "title": value, "body": "B"}, "title"),
        (editor, BASE + "entries/", {"category": "fact", "title": "T", "body": value}, "body"),
        (editor, BASE + "entries/", {"category": "fact", "title": "T", "body": "B", "summary": value}, "summary"),
        (editor, BASE + "entries/", {"category": "fact", "title": "T", "body": "B", "id": value}, "id"),
        (reviewer, BASE + f"entries/{live}/retire/", {"reason": value}, "reason"),
        (reviewer, BASE + f"entries/{live}/retire/", {"reason": "Old.", "replaced_by": value}, "replaced_by"),
        (reviewer, BASE + f"versions/{world.draft.pk}/reject/", {"note": value}, "note"),
        (editor, BASE + "synonym-sets/", {"name": value, "phrases": ["a", "b"]}, "name"),
    ]
    for caller, path, body, field in sent:
        response = caller.post(path, body)
        assert response.status_code == 400, (field, response.content)
        assert (error_of(response)["code"], error_of(response)["param"]) == ("invalid_parameter", field)
    assert Entry.objects.get(public_id=live).retired_at is None


# -- 4. trust fields -----------------------------------------------------------------------------------------


def test_a_version_shows_and_a_draft_takes_the_trust_fields(world: Any) -> None:
    editor = world.callers["editor_a"]
    trust = {"sensitivity": "internal", "review_by": "2027-03-01", "valid_until": "2027-12-31"}

    response = patch_version(editor, world.draft, {"summary": "Cite it.", **trust})

    assert response.status_code == 200, response.content
    assert {name: response.json()[name] for name in trust} == trust
    world.draft.refresh_from_db()
    assert (world.draft.sensitivity, world.draft.review_by, world.draft.valid_until) == (
        "internal",
        date(2027, 3, 1),
        date(2027, 12, 31),
    )
    assert world.draft.state == "draft"  # reviewed like the rest of the content: only a draft changes
    again = patch_version(editor, world.draft, {"summary": "Cite every fact."})
    assert again.json()["sensitivity"] == "internal"  # an edit that does not send it keeps it


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sensitivity", "secret"),
        ("sensitivity", 1),
        ("review_by", "01/03/2027"),
        ("review_by", "2027-02-30"),
        ("valid_until", 20271231),
        ("valid_until", "2027-12-31T10:00:00"),
    ],
)
def test_bad_trust_fields_are_invalid_parameter(world: Any, field: str, value: Any) -> None:
    assert_bad_parameter(patch_version(world.callers["editor_a"], world.draft, {field: value}), field)
    world.draft.refresh_from_db()
    assert world.draft.sensitivity == "public" and world.draft.lock_version == 0


def test_a_new_entry_takes_the_trust_fields_and_only_a_draft_is_editable(world: Any) -> None:
    editor = world.callers["editor_a"]
    created = editor.post(
        BASE + "entries/",
        {"category": "fact", "title": "Salaries", "body": "Ask HR.", "sensitivity": "restricted", "valid_until": None},
    )
    assert created.status_code == 201, created.content
    version = EntryVersion.objects.get(entry__public_id=created.json()["id"])
    assert (version.sensitivity, version.state) == ("restricted", "draft")
    live = patch_version(editor, world.live, {"sensitivity": "internal"})
    assert live.status_code == 422  # a published version never changes: open a draft, submit it for review
    world.live.refresh_from_db()
    assert world.live.sensitivity == "public"


# -- 6. an override's refusal --------------------------------------------------------------------------------


def test_an_override_without_bases_says_there_is_nothing_to_override(world: Any) -> None:
    response = world.callers["editor_a"].post(
        BASE + "entries/", {"category": "fact", "title": "T", "body": "B", "overrides": "AC-101"}
    )
    assert (response.status_code, error_of(response)["code"]) == (422, "overrides.no_base_entry")
    message = error_of(response)["message"]
    assert "builds on no other namespace" in message
    assert "such as" not in message


def test_a_refused_override_suggests_a_live_base_entry_never_itself(world: Any) -> None:
    bases_declare(world.alpha, world.beta)
    live_base_id = world.beta_live.entry.public_id
    check = {"namespace": world.alpha, "public_id": None}

    with pytest.raises(ContentReferenceError) as unknown:
        content_references_check(**check, content=content(overrides="AC-101"))
    assert f"such as {live_base_id}" in str(unknown.value) and "AC-101" in str(unknown.value)

    Entry.objects.filter(pk=world.beta_live.entry_id).update(retired_at=world.beta_live.published_at)
    with pytest.raises(ContentReferenceError) as retired:
        content_references_check(**check, content=content(overrides=live_base_id))
    assert "such as" not in str(retired.value)  # the base has no other live entry to suggest
