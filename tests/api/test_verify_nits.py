"""POST /api/verify reads its body as MCP verify_citations and A2A do: a whole-number release is an
integer, and text that is not clean is invalid_text naming the field (not invalid_json)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.errors import BadParameterError
from gateway.verify import verify_request_parse
from knowledge.models import Namespace
from tests.configure import configure
from tests.observe.releases import second_release

pytestmark = pytest.mark.django_db


def _post(client: Any, body: bytes | str) -> Any:
    return client.post("/t/alpha/api/verify", body, content_type="application/json")


def test_a_whole_number_release_is_that_release_id() -> None:
    assert verify_request_parse({"answer": "a", "release": 1.0}).release == "1"
    assert verify_request_parse({"answer": "a", "release": 1}).release == "1"


@pytest.mark.parametrize("release", [1.5, True, [1], {"id": 1}])
def test_a_release_that_is_not_an_id_or_a_version_is_still_refused(release: Any) -> None:
    with pytest.raises(BadParameterError) as refused:
        verify_request_parse({"answer": "a", "release": release})

    assert (refused.value.code, refused.value.param) == ("invalid_parameter", "release")


def test_release_1_0_is_accepted_over_rest(client: Any, alpha: Namespace, settings: Any, no_rate_limit: None) -> None:
    second_release(alpha)
    configure(settings, release_retention_days=1)
    whole = _post(client, '{"answer": "a", "release": 2.0}')
    integer = _post(client, '{"answer": "a", "release": 2}')

    assert whole.status_code == 200, whole.content
    assert whole.json()["releaseId"] == integer.json()["releaseId"] == 2


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ('{"answer": "a \\ud800 [AL-001]"}', "answer"),
        ('{"answer": "a", "pack": "\\udfff"}', "pack"),
        ('{"answer": "a\\u0000b"}', "answer"),
        ('{"answer": "a", "release": "v\\ud800"}', "release"),
    ],
)
def test_text_that_is_not_clean_is_invalid_text_naming_the_field(
    client: Any, alpha: Namespace, no_rate_limit: None, body: str, param: str
) -> None:
    response = _post(client, body)

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_text", param)


DEEP_UNCLEAN = ('{"answer": "a", "x": ' + "[" * 980 + '"\\ud800"' + "]" * 980 + "}").encode()


@pytest.mark.parametrize(
    "body", [b"{", b'{"answer": NaN}', b'{"answer": "a", "release": 1e999999}', b"\xff", DEEP_UNCLEAN]
)
def test_what_is_not_json_is_still_invalid_json(
    client: Any, alpha: Namespace, no_rate_limit: None, body: bytes
) -> None:
    response = _post(client, body)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"
