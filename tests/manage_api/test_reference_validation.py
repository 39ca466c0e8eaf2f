"""References are checked when they are written: overrides, links and golden questions' graded IDs.

Before, each was only checked for its format (or not at all) and an impossible one reached the public
files; now the service layer refuses it, so the admin, the management API and the commands agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.models import GoldenQuestion
from knowledge.services.content import ContentReferenceError, content_references_check
from knowledge.services.entries import entry_create
from knowledge.services.imports import ImportFileError, entries_import, entries_parse
from tests.factories import content
from tests.manage_api.routes import BASE
from tests.servingfixtures import bases_declare

pytestmark = pytest.mark.django_db


def error_of(response: Any) -> dict[str, Any]:
    return response.json()["error"]


def refused_with(response: Any, code: str) -> str:
    assert (response.status_code, error_of(response)["code"]) == (422, code), response.content
    return str(error_of(response)["message"])


def new_entry(caller: Any, **fields: Any) -> Any:
    return caller.post(BASE + "entries/", {"category": "fact", "title": "Support hours", "body": "Weekdays.", **fields})


def edit_draft(caller: Any, version_pk: int, fields: dict[str, Any]) -> Any:
    path = BASE + f"versions/{version_pk}/"
    return caller.patch(path, fields, HTTP_IF_MATCH=caller.get(path)["ETag"])


# -- overrides ---------------------------------------------------------------------------------------------


def test_an_override_in_a_namespace_without_bases_is_refused(world: Any) -> None:
    response = new_entry(world.callers["editor_a"], overrides="TB-000")

    message = refused_with(response, "overrides.no_base_entry")
    assert "TB-000" in message and "builds on no other namespace" in message
    assert not world.alpha.entries.filter(versions__overrides="TB-000").exists()


def test_an_entry_cannot_override_itself(world: Any) -> None:
    own_id = world.draft.entry.public_id

    response = edit_draft(world.callers["editor_a"], world.draft.pk, {"overrides": own_id})

    assert own_id in refused_with(response, "overrides.self")
    world.draft.refresh_from_db()
    assert world.draft.overrides == ""


def test_an_override_must_name_a_live_entry_of_a_base(world: Any) -> None:
    bases_declare(world.alpha, world.beta)
    editor = world.callers["editor_a"]

    other_tenant = new_entry(editor, overrides="TB-000")
    unpublished = new_entry(editor, overrides="BE-999")
    own_entry = new_entry(editor, overrides=world.live.entry.public_id)
    accepted = new_entry(editor, overrides=world.beta_live.entry.public_id.lower())

    assert "beta" in refused_with(other_tenant, "overrides.no_base_entry")
    refused_with(unpublished, "overrides.no_base_entry")
    refused_with(own_entry, "overrides.no_base_entry")
    assert accepted.status_code == 201, accepted.content
    created = world.alpha.entries.get(public_id=accepted.json()["id"])
    assert created.versions.get().overrides == world.beta_live.entry.public_id


def test_a_retired_base_entry_cannot_be_overridden(world: Any) -> None:
    bases_declare(world.alpha, world.beta)
    world.beta_live.entry.retired_at = world.beta_live.published_at
    world.beta_live.entry.save(update_fields=["retired_at"])

    response = new_entry(world.callers["editor_a"], overrides=world.beta_live.entry.public_id)

    refused_with(response, "overrides.no_base_entry")


def test_the_services_refuse_an_impossible_override_for_every_caller(world: Any) -> None:
    """The admin and the commands write through entry_create and imports: they get the same refusal."""
    editor = world.callers["editor_a"].user
    with pytest.raises(ContentReferenceError) as refused:
        entry_create(
            namespace=world.alpha,
            category=world.alpha.categories.get(slug="fact"),
            content=content(title="Mine", overrides="TB-000"),
            actor=editor,
        )
    assert refused.value.code == "overrides.no_base_entry"

    line = {"id": "AL-150", "category": "fact", "title": "Mine", "body": "Mine.", "overrides": "AL-150"}
    with pytest.raises(ImportFileError) as bad_file:
        entries_import(
            namespace=world.alpha, items=entries_parse([json.dumps(line)]), actor=editor, publish=False, source="test"
        )
    assert "AL-150 cannot override itself" in str(bad_file.value.errors)


# -- links -------------------------------------------------------------------------------------------------


def test_a_link_that_is_not_an_id_is_refused_naming_it(world: Any) -> None:
    response = new_entry(world.callers["editor_a"], links=[world.live.entry.public_id, "not an id"])

    assert (response.status_code, error_of(response)["code"]) == (400, "invalid_parameter"), response.content
    assert error_of(response)["param"] == "links"
    assert "NOT AN ID" in error_of(response)["message"]


def test_a_link_to_another_tenants_id_is_refused(world: Any) -> None:
    response = edit_draft(world.callers["editor_a"], world.draft.pk, {"links": [world.live.entry.public_id, "TB-000"]})

    assert "TB-000" in refused_with(response, "links.foreign")
    world.draft.refresh_from_db()
    assert world.draft.links == []


def test_links_to_own_and_base_entries_are_kept(world: Any) -> None:
    bases_declare(world.alpha, world.beta)
    links = [world.live.entry.public_id, world.beta_live.entry.public_id, "AL-999"]  # AL-999: review warns

    response = edit_draft(world.callers["editor_a"], world.draft.pk, {"links": links})

    assert response.status_code == 200, response.content
    assert response.json()["links"] == links


def test_every_writer_refuses_a_malformed_link(world: Any) -> None:
    """The services check what is written (stored content still rebuilds: VersionContent.build keeps them)."""
    written = content(title="Mine", links=[world.live.entry.public_id, "not an id"])
    with pytest.raises(ContentReferenceError, match="NOT AN ID"):
        content_references_check(namespace=world.alpha, public_id=None, content=written)


# -- golden questions --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["", "not an id", "EG-" + "1" * 4997])
def test_a_golden_question_grades_only_entry_ids(world: Any, key: str) -> None:
    response = world.callers["editor_a"].post(
        BASE + "golden-questions/", {"key": "q1", "text": "?", "relevant": {key: 2}}
    )

    assert (response.status_code, error_of(response)["code"]) == (400, "invalid_parameter"), response.content
    assert error_of(response)["param"] == "relevant"
    assert len(error_of(response)["message"]) < 200
    assert not GoldenQuestion.objects.filter(namespace=world.alpha).exists()


def test_a_golden_question_cannot_grade_another_tenants_entry(world: Any) -> None:
    body = {"key": "q1", "text": "Support hours?", "relevant": {"TB-000": 2}}

    response = world.callers["editor_a"].post(BASE + "golden-questions/", body)

    assert "TB-000" in refused_with(response, "invalid")
    assert not GoldenQuestion.objects.filter(namespace=world.alpha).exists()


@pytest.mark.parametrize("grade", [0, 3, True])
def test_a_golden_question_grade_is_one_or_two(world: Any, grade: Any) -> None:
    body = {"key": "q1", "text": "?", "relevant": {world.live.entry.public_id: grade}}

    response = world.callers["editor_a"].post(BASE + "golden-questions/", body)

    assert response.status_code == 400, response.content
    assert not GoldenQuestion.objects.filter(namespace=world.alpha).exists()


def test_a_golden_question_grades_own_and_base_entries(world: Any) -> None:
    bases_declare(world.alpha, world.beta)
    own, base = world.live.entry.public_id, world.beta_live.entry.public_id
    body = {"key": "q1", "text": "Support hours?", "relevant": {own.lower(): 2, base: 1}}

    response = world.callers["editor_a"].post(BASE + "golden-questions/", body)

    assert response.status_code == 201, response.content
    assert response.json()["relevant"] == {own: 2, base: 1}
