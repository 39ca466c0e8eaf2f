"""entries/validate/: the write's own rules and refusals, run and rolled back, so nothing of it is kept."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import AuditRecord, Entry, EntryVersion
from tests.manage_api.conftest import World

pytestmark = pytest.mark.django_db

BASE = "/t/alpha/api/manage/"
VALIDATE = BASE + "entries/validate/"
NEW = {"category": "fact", "title": "Quote figures exactly", "body": "Quote them."}


def written() -> tuple[Any, ...]:
    """Everything a write leaves behind."""
    return (
        Entry.objects.count(),
        tuple(EntryVersion.objects.order_by("pk").values_list("pk", "state", "lock_version")),
        AuditRecord.objects.count(),
    )


def test_a_valid_new_entry_answers_200_leaves_nothing_and_its_id_stays_free(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    editor = world.callers["editor_a"]
    before = written()
    with django_capture_on_commit_callbacks() as callbacks:
        response = editor.post(VALIDATE, NEW)

    assert response.status_code == 200, response.content
    assert response.json() == {"valid": True, "id": "AL-001"}
    assert written() == before
    assert callbacks == []
    created = editor.post(BASE + "entries/", NEW)
    assert created.status_code == 201
    assert created.json()["id"] == "AL-001"


def test_a_dangling_link_is_refused_with_the_code_create_answers(world: World) -> None:
    editor = world.callers["editor_a"]
    body = {**NEW, "links": ["ZZ-404"]}
    before = written()

    refused = editor.post(VALIDATE, body)
    created = editor.post(BASE + "entries/", body)

    assert refused.status_code == created.status_code == 422
    assert refused.json() == created.json()
    assert refused.json()["error"]["code"] == "links.foreign"
    assert written() == before


def test_an_override_without_a_base_entry_and_a_taken_id_are_refused_as_create_refuses_them(world: World) -> None:
    editor = world.callers["editor_a"]
    for body in (
        {**NEW, "overrides": "AC-101"},
        {**NEW, "id": world.live.entry.public_id},
        {**NEW, "category": "nope"},
        {**NEW, "titel": "typo"},
    ):
        refused, created = editor.post(VALIDATE, body), editor.post(BASE + "entries/", body)
        assert (refused.status_code, refused.json()) == (created.status_code, created.json()), body
        assert refused.status_code in (400, 422)


def test_a_change_to_an_existing_entry_leaves_no_draft(world: World) -> None:
    editor = world.callers["editor_a"]
    entry = world.live.entry.public_id
    before = written()

    response = editor.post(VALIDATE, {"entry": entry.lower(), "summary": "A clearer summary."})

    assert response.status_code == 200, response.content
    assert response.json() == {"valid": True, "id": entry}
    assert written() == before
    assert not EntryVersion.objects.filter(entry__public_id=entry, state="draft").exists()


def test_a_refused_change_answers_what_the_patch_of_its_draft_answers(world: World) -> None:
    editor = world.callers["editor_a"]
    entry = world.live.entry.public_id
    before = written()

    refused = editor.post(VALIDATE, {"entry": entry, "links": ["ZZ-404"]})

    assert written() == before
    draft = editor.post(BASE + f"entries/{entry}/draft/").json()
    patched = editor.patch(BASE + f"versions/{draft['id']}/", {"links": ["ZZ-404"]}, HTTP_IF_MATCH=draft["etag"])
    assert (refused.status_code, refused.json()) == (patched.status_code, patched.json()) == (422, patched.json())
    assert refused.json()["error"]["code"] == "links.foreign"


def test_a_change_to_an_entry_in_review_or_of_another_namespace_is_refused(world: World) -> None:
    editor = world.callers["editor_a"]
    beta_entry = world.beta_live.entry.public_id
    assert editor.post(VALIDATE, {"entry": beta_entry, "title": "x"}).status_code == 404
    assert editor.post(VALIDATE, {"entry": "AL-999", "title": "x"}).status_code == 404
    editor.post(BASE + f"versions/{world.draft.pk}/submit/")
    in_review = editor.post(VALIDATE, {"entry": world.draft.entry.public_id, "title": "x"})
    assert in_review.status_code == 422
    assert in_review.json()["error"]["code"] == "invalid"


def test_a_reader_who_is_no_editor_is_refused_and_an_editors_read_token_may_check(world: World) -> None:
    before = written()
    reviewer = world.callers["reviewer_a"].post(VALIDATE, NEW)
    assert reviewer.status_code == 403
    assert reviewer.json()["error"]["code"] == "forbidden"
    assert "editor" in reviewer.json()["error"]["message"]
    assert world.callers["outsider"].post(VALIDATE, NEW).status_code == 404
    # It writes nothing, so the editor's token of scope read may check what the editor could write.
    assert world.callers["readonly_a"].post(VALIDATE, NEW).status_code == 200
    assert written() == before


def test_it_is_documented_in_the_schema(client: Any) -> None:
    schema = client.get("/api/manage/schema/?format=json").json()
    operation = schema["paths"]["/api/manage/entries/validate/"]["post"]
    assert {"200", "400", "403", "404", "409", "422"} <= set(operation["responses"])
    assert schema["components"]["schemas"]["EntryChange"]["required"] == ["entry"]
