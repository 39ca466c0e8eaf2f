"""A write body with a field the API does not take is refused (400 unknown_field), never silently dropped."""

from __future__ import annotations

from typing import Any

import pytest

from tests.manage_api.routes import BASE, FIRST, ROUTES, Route

pytestmark = pytest.mark.django_db

WRITES = [route for route in ROUTES if route.method != "get"]


def send(world: Any, route: Route, extra: dict[str, Any], caller: str | None = None) -> Any:
    route.setup(world)
    path = route.path(world)
    body = {**(route.body(world) or {}), **extra}
    headers = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in route.headers(world).items()}
    return getattr(world.callers[caller or FIRST[route.role]], route.method)(BASE + path, body, **headers)


@pytest.mark.parametrize("route", WRITES, ids=[route.name for route in WRITES])
def test_every_write_refuses_a_field_it_does_not_take(world: Any, route: Route) -> None:
    response = send(world, route, {"titel": "typo"})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "unknown_field"
    assert error["param"] == "titel"
    assert "titel" in error["message"]


def test_a_typo_in_a_draft_edit_changes_nothing_and_names_what_is_accepted(world: Any) -> None:
    response = world.callers["editor_a"].patch(
        f"{BASE}versions/{world.draft.pk}/", {"sumary": "Lost?", "title": "New"}, HTTP_IF_MATCH="*"
    )
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "sumary" in message and "summary" in message and "title" in message
    world.draft.refresh_from_db()
    assert world.draft.title == "Cite every fact"


def test_every_unknown_field_is_named(world: Any) -> None:
    body = {"category": "fact", "title": "t", "body": "b", "titel": "x", "sumary": "y"}
    response = world.callers["editor_a"].post(BASE + "entries/", body)
    assert response.status_code == 400
    assert "titel" in response.json()["error"]["message"]
    assert "sumary" in response.json()["error"]["message"]


def test_a_version_put_back_as_it_was_read_is_accepted(world: Any) -> None:
    caller = world.callers["editor_a"]
    read = caller.get(f"{BASE}versions/{world.draft.pk}/")
    echoed = {**read.json(), "summary": "Edited after reading."}
    response = caller.patch(f"{BASE}versions/{world.draft.pk}/", echoed, HTTP_IF_MATCH=read["ETag"])
    assert response.status_code == 200, response.content
    assert response.json()["summary"] == "Edited after reading."
    assert response.json()["number"] == read.json()["number"]


def test_a_synonym_version_sent_back_as_read_is_accepted(world: Any) -> None:
    caller = world.callers["editor_a"]
    read = caller.get(f"{BASE}synonym-versions/{world.synonyms.pk}/").json()
    body = {**read, "phrases": ["token budget", "预算", "budget cap"]}
    response = caller.post(f"{BASE}synonym-sets/{world.synonyms.synonym_set_id}/propose/", body)
    assert response.status_code == 200, response.content
