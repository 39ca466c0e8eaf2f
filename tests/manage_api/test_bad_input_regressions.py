"""Malformed input answers 400 with the documented error, never 500: filters, cursors, bodies, headers."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.test import Client

from manage_api.serializers import version_etag
from tests.manage_api.routes import BASE

pytestmark = pytest.mark.django_db


def error_of(response: Any) -> dict[str, Any]:
    return response.json()["error"]


def assert_bad_parameter(response: Any, param: str) -> None:
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "invalid_parameter"
    assert error_of(response)["param"] == param


def cursor(position: str) -> str:
    return base64.b64encode(position.encode()).decode()


FAR_FUTURE = "9999-12-31T23:59:59-12:00"
FAR_PAST = "0001-01-01T00:00:00+05:00"
TIME_FILTERS = [
    ("entries/", "approved_after"),
    ("entries/", "approved_before"),
    ("versions/", "approved_after"),
    ("versions/", "approved_before"),
    ("releases/", "built_after"),
    ("releases/", "built_before"),
    ("audit/", "created_after"),
    ("audit/", "created_before"),
    ("feedback/", "created_after"),
    ("feedback/", "created_before"),
    ("evaluation-runs/", "created_after"),
    ("evaluation-runs/", "created_before"),
]


@pytest.mark.parametrize(("route", "param"), TIME_FILTERS)
@pytest.mark.parametrize("value", [FAR_FUTURE, FAR_PAST])
def test_a_time_out_of_range_in_utc_is_invalid_parameter(world: Any, route: str, param: str, value: str) -> None:
    response = world.callers["editor_a"].get(BASE + route, data={param: value})
    assert_bad_parameter(response, param)


def test_time_filters_still_take_offsets_within_range(world: Any) -> None:
    caller = world.callers["editor_a"]
    assert caller.get(BASE + "versions/", data={"approved_after": "2000-01-01T00:00:00+05:00"}).status_code == 200
    assert caller.get(BASE + "versions/", data={"approved_before": "9999-12-31T00:00:00+05:00"}).status_code == 200


@pytest.mark.parametrize(("route", "param"), [("synonym-versions/", "synonym_set"), ("evaluation-runs/", "release")])
@pytest.mark.parametrize("value", ["9223372036854775808", "-99999999999999999999", "1.5", "x"])
def test_an_id_filter_takes_only_a_64_bit_integer(world: Any, route: str, param: str, value: str) -> None:
    response = world.callers["editor_a"].get(BASE + route, data={param: value})
    assert_bad_parameter(response, param)


def test_an_id_filter_still_finds_its_set(world: Any) -> None:
    set_id = world.synonyms.synonym_set_id
    response = world.callers["editor_a"].get(BASE + "synonym-versions/", data={"synonym_set": str(set_id)})
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["results"]] == [world.synonyms.pk]


@pytest.mark.parametrize(
    ("route", "value"),
    [
        ("entries/", cursor("p=abc")),
        ("versions/", cursor("p=%00")),
        ("versions/", cursor("p=1&o=x")),
        ("entries/", "garbage"),
        ("versions/", "garbage"),
    ],
)
def test_a_hand_made_cursor_is_invalid_parameter(world: Any, route: str, value: str) -> None:
    response = world.callers["editor_a"].get(BASE + route, data={"cursor": value})
    assert_bad_parameter(response, "cursor")


def test_the_cursors_the_api_hands_out_still_page(world: Any) -> None:
    caller = world.callers["editor_a"]
    first = caller.get(BASE + "versions/", data={"limit": 1}).json()
    second = caller.get(first["next"]).json()
    assert second["results"] and second["results"][0]["id"] < first["results"][0]["id"]


@pytest.mark.parametrize(
    ("route", "ordering", "position"),
    [
        ("entries/", "head_updated", "abc"),
        ("versions/", "updated", "abc"),
        ("versions/", "modified_at", "yesterday"),
        ("versions/", "modified_at", "9999-12-31 23:59:59-12:00"),
        ("versions/", "-id", "9223372036854775808"),
    ],
)
def test_a_cursor_position_must_fit_the_ordering_field(world: Any, route: str, ordering: str, position: str) -> None:
    response = world.callers["editor_a"].get(
        BASE + route, data={"ordering": ordering, "cursor": cursor(f"p={position}")}
    )
    assert_bad_parameter(response, "cursor")


@pytest.mark.parametrize("value", ["-1", "0", "abc", "201"])
def test_an_invalid_limit_is_invalid_parameter(world: Any, value: str) -> None:
    response = world.callers["editor_a"].get(BASE + "versions/", data={"limit": value})
    assert_bad_parameter(response, "limit")


def test_a_limit_within_range_sets_the_page_size(world: Any) -> None:
    caller = world.callers["editor_a"]
    assert len(caller.get(BASE + "versions/", data={"limit": "1"}).json()["results"]) == 1
    assert len(caller.get(BASE + "versions/", data={"limit": "200"}).json()["results"]) > 1
    assert len(caller.get(BASE + "versions/", data={"limit": ""}).json()["results"]) > 1


def test_a_deeply_nested_body_is_invalid_json(world: Any) -> None:
    body = '{"category": "fact", "title": "t", "body": "b", "tags": ' + "[" * 3000 + "]" * 3000 + "}"
    response = world.callers["editor_a"].post(BASE + "entries/", body)
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_json"


def test_a_nested_body_within_reason_still_parses(world: Any) -> None:
    body = json.dumps({"category": "fact", "title": "t", "summary": "s", "body": "b", "tags": ["a"]})
    assert world.callers["editor_a"].post(BASE + "entries/", body).status_code == 201


def edit(world: Any, if_match: str) -> Any:
    return world.callers["editor_a"].patch(
        f"{BASE}versions/{world.draft.pk}/", {"summary": "Edited."}, HTTP_IF_MATCH=if_match
    )


def test_if_match_star_matches_the_current_draft(world: Any) -> None:
    assert edit(world, "*").status_code == 200


def test_if_match_list_matches_when_one_strong_tag_matches(world: Any) -> None:
    assert edit(world, f'"x", {version_etag(world.draft)}').status_code == 200


def test_if_match_never_matches_a_weak_tag(world: Any) -> None:
    response = edit(world, f"W/{version_etag(world.draft)}")
    assert response.status_code == 412
    assert error_of(response)["code"] == "stale_version"


@pytest.mark.parametrize("if_match", ['"x"', '"x", "y"', "garbage"])
def test_if_match_without_the_current_tag_is_412(world: Any, if_match: str) -> None:
    assert edit(world, if_match).status_code == 412


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_authorization_scheme_is_case_insensitive(world: Any, scheme: str) -> None:
    token = world.callers["editor_a"].token
    response = Client(HTTP_AUTHORIZATION=f"{scheme} {token}").get(BASE + "entries/")
    assert response.status_code == 200
