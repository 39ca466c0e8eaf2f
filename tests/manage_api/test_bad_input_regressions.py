"""Malformed input answers 400 with the documented error, never 500: filters, cursors, bodies, headers."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from typing import Any

import django_filters
import pytest
from django.test import Client
from django.utils import timezone

from knowledge.services.versions import version_submit
from manage_api import filters as manage_filters
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


BOOLEAN_FILTERS = [
    ("entries/", "stale"),
    ("entries/", "retired"),
    ("entries/", "published"),
    ("versions/", "stale"),
    ("api-keys/", "revoked"),
    ("synonym-sets/", "published"),
]


@pytest.mark.parametrize(("route", "param"), BOOLEAN_FILTERS)
@pytest.mark.parametrize("value", ["maybe", "yes", "2", "tru"])
def test_a_boolean_filter_refuses_anything_but_true_or_false(world: Any, route: str, param: str, value: str) -> None:
    response = world.callers["admin_a"].get(BASE + route, data={param: value})
    assert_bad_parameter(response, param)


def test_every_boolean_filter_of_the_api_is_checked() -> None:
    declared = {
        (filterset.__name__, name)
        for filterset in vars(manage_filters).values()
        if isinstance(filterset, type) and issubclass(filterset, django_filters.FilterSet)
        for name, declared_filter in filterset.base_filters.items()  # type: ignore[attr-defined]
        if isinstance(declared_filter, django_filters.BooleanFilter)
    }
    assert declared, "the filter sets declare boolean filters"
    for filterset_name, name in declared:
        filterset = getattr(manage_filters, filterset_name)
        assert isinstance(filterset.base_filters[name], manage_filters.StrictBooleanFilter), (filterset_name, name)


@pytest.mark.parametrize(("value", "published"), [("true", True), ("1", True), ("False", False), ("0", False)])
def test_a_boolean_filter_still_filters(world: Any, value: str, published: bool) -> None:
    rows = world.callers["editor_a"].get(BASE + "entries/", data={"published": value}).json()["results"]
    assert rows and all((row["live_version"] is not None) is published for row in rows)


def test_an_empty_boolean_filter_is_no_filter(world: Any) -> None:
    caller = world.callers["editor_a"]
    every = caller.get(BASE + "entries/").json()["results"]
    assert caller.get(BASE + "entries/", data={"stale": ""}).json()["results"] == every


@pytest.mark.parametrize(
    ("route", "query", "param"),
    [
        ("entries/", "q=%FF", "q"),
        ("versions/", "q=budget%C3", "q"),
        ("feedback/", "q=%E9t%E9", "q"),
        ("golden-questions/", "q=%FF", "q"),
        ("synonym-sets/", "q=%FF", "q"),
        ("entries/", "tag=%FF", "tag"),
        ("audit/", "actor=%80", "actor"),
        ("text-versions/", "key=%FF", "key"),
        ("entries/", "stale=true&author=%FFx", "author"),
    ],
)
def test_a_parameter_that_is_not_utf_8_is_invalid_parameter(world: Any, route: str, query: str, param: str) -> None:
    response = world.callers["editor_a"].get(f"{BASE}{route}?{query}")
    assert_bad_parameter(response, param)


def test_a_replacement_character_sent_as_utf_8_is_still_a_search(world: Any) -> None:
    response = world.callers["editor_a"].get(f"{BASE}entries/?q=%EF%BF%BD+budget%C3%A9")
    assert response.status_code == 200
    assert response.json()["results"] == []


def approve(world: Any, publish_at: str) -> Any:
    version = version_submit(version=world.draft, actor=world.callers["editor_a"].user)
    return world.callers["reviewer_a"].post(f"{BASE}versions/{version.pk}/approve/", {"publish_at": publish_at})


def test_approving_with_a_publish_at_in_the_past_is_refused(world: Any) -> None:
    response = approve(world, (timezone.now() - timedelta(days=1)).isoformat())
    assert_bad_parameter(response, "publish_at")
    world.draft.refresh_from_db()
    assert world.draft.state == "in_review"


def test_a_publish_at_a_moment_ago_means_now(world: Any) -> None:
    response = approve(world, (timezone.now() - timedelta(seconds=30)).isoformat())
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "approved"


def test_a_publish_at_in_the_future_schedules_the_go_live(world: Any) -> None:
    when = timezone.now() + timedelta(days=2)
    response = approve(world, when.isoformat())
    assert response.status_code == 200, response.content
    assert response.json()["publish_at"] is not None
