"""Bad input on the public agent routes answers the documented JSON error, never a 500 or an HTML page."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import QueryDict
from django.test import Client, RequestFactory

from gateway.changes import changes_params
from gateway.entries import version_parse
from gateway.errors import BadParameterError
from gateway.outages import bad_request, page_not_found, server_error
from gateway.params import budget_parse
from knowledge.models import Namespace
from knowledge.selectors.changes import SinceError, since_resolve
from knowledge.services.personal_tokens import personal_token_create

# Characters str.isdigit() or \d accepts that are not ASCII digits: superscript two, circled one,
# fullwidth, Arabic-Indic, Devanagari.
UNICODE_DIGITS = ["²", "①", "１２００", "٣٠٠", "५००", "1²"]


def error_of(response: Any) -> dict[str, Any]:
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    return json.loads(response.content)["error"]


# Unicode digits: ?version=, ?limit= and ?budget= take ASCII digits only.


@pytest.mark.parametrize("raw", [*UNICODE_DIGITS, "1234567890", "-1", " 2"])
def test_version_parse_refuses_anything_but_ascii_digits(raw: str) -> None:
    with pytest.raises(BadParameterError) as refused:
        version_parse(raw)
    assert refused.value.code == "invalid_version"


def _query(**sent: str) -> QueryDict:
    query = QueryDict(mutable=True)
    query.update(sent)
    return query


@pytest.mark.parametrize("raw", [*UNICODE_DIGITS, "0", "1001", "1" * 5000])
def test_changes_params_refuses_unicode_digit_limits(raw: str) -> None:
    with pytest.raises(BadParameterError) as refused:
        changes_params(_query(since="0", limit=raw))
    assert refused.value.code == "invalid_limit"


def test_whole_numbers_stay_valid_versions_and_limits() -> None:
    assert version_parse("2") == 2 and version_parse("000000007") == 7 and version_parse("") is None
    assert changes_params(_query(since=" 0 ", limit=" 1000 ")) == ("0", None, 1000)


@pytest.mark.parametrize("raw", [*UNICODE_DIGITS, "\u00a0500", " 100", "100 ", "100\n", "\t100", "9" * 65])
def test_budget_parse_refuses_anything_but_ascii_digits(raw: str) -> None:
    with pytest.raises(BadParameterError) as refused:
        budget_parse(raw, default=2000)
    assert refused.value.code == "invalid_budget"


@pytest.mark.parametrize(
    ("raw", "budget"),
    [
        ("1200", 1200),
        ("600.0", 600),
        ("600.", 600),
        ("+600", 600),
        ("-5", 200),
        ("0009000", 8000),
        # QA: 13 digits were refused with a message saying budgets are clamped; a JSON body clamped them.
        ("1234567890123", 8000),
        ("-" + "9" * 40, 200),
    ],
)
def test_budget_parse_keeps_whole_numbers_valid(raw: str, budget: int) -> None:
    assert budget_parse(raw, default=2000) == budget


@pytest.mark.parametrize(
    ("url", "code", "param"),
    [
        ("/api/entries/EG-202?version=%C2%B2", "invalid_version", "version"),
        ("/api/entries/EG-202.md?version=%E2%91%A0", "invalid_version", "version"),
        ("/api/changes?since=0&limit=%C2%B2", "invalid_limit", "limit"),
        ("/api/changes?since=1&limit=1%C2%B2", "invalid_limit", "limit"),
        ("/api/context?budget=%EF%BC%91%EF%BC%92%EF%BC%90%EF%BC%90", "invalid_budget", "budget"),
        ("/api/context?budget=%D9%A3%D9%A0%D9%A0", "invalid_budget", "budget"),
        ("/api/context?budget=%C2%A0500", "invalid_budget", "budget"),
        ("/api/context?budget=%20100", "invalid_budget", "budget"),
    ],
)
def test_unicode_digits_answer_400_with_the_documented_code(
    client: Client, demo: Namespace, no_rate_limit: None, url: str, code: str, param: str
) -> None:
    response = client.get(url)

    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == code
    assert error_of(response)["param"] == param


# ?since= a moment whose UTC time is outside the years 1..9999.

OUT_OF_RANGE = ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-01:00"]


@pytest.mark.django_db
def test_since_resolve_reads_only_ascii_digits_as_a_release_number() -> None:
    with pytest.raises(SinceError) as refused:
        since_resolve(namespace_id=0, reference="\u0663")  # Arabic-Indic three
    assert refused.value.code == "invalid_since"


@pytest.mark.django_db
@pytest.mark.parametrize("since", OUT_OF_RANGE)
def test_since_resolve_refuses_a_moment_outside_the_utc_range(since: str) -> None:
    with pytest.raises(SinceError) as refused:
        since_resolve(namespace_id=0, reference=since)
    assert refused.value.code == "invalid_since"


@pytest.mark.parametrize("since", [*OUT_OF_RANGE, "0001-01-01T00:00:00%2B05:00"])
def test_changes_since_an_out_of_range_moment_answers_400(
    client: Client, demo: Namespace, no_rate_limit: None, since: str
) -> None:
    response = client.get(f"/api/changes?since={since.replace('+', '%2B')}")

    assert response.status_code == 400, response.content
    assert error_of(response) == {"code": "invalid_since", "message": error_of(response)["message"], "param": "since"}


@pytest.mark.parametrize("since", ["9999-12-31T23:59:59Z", "9999-12-31T11:59:59-12:00", "0001-01-01T00:00:00Z"])
def test_changes_since_the_edges_of_the_range_still_answers(
    client: Client, demo: Namespace, no_rate_limit: None, since: str
) -> None:
    assert datetime.fromisoformat(since.replace("Z", "+00:00"))  # a valid moment, inside the range
    assert client.get(f"/api/changes?since={since.replace('+', '%2B')}").status_code == 200


# Unknown URLs under the API prefixes, server errors and oversize bodies answer the JSON error shape.

API_MISSES = [
    "/api/nonexistent",
    "/t/evergreen/api/nonexistent",
    "/api/manage/nonexistent/",
    "/t/evergreen/api/manage/nonexistent/",
    "/api/manage/entries/EG-001/nonexistent/",
    "/mcp/nonexistent",
    "/t/evergreen/a2a/nonexistent",
]


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])  # QA: with DEBUG, Django's HTML page
@pytest.mark.parametrize("path", API_MISSES)
def test_an_unknown_api_url_answers_json_not_found(client: Client, settings: Any, path: str, debug: bool) -> None:
    settings.DEBUG = debug
    response = client.get(path)

    assert response.status_code == 404
    assert error_of(response) == {"code": "not_found", "message": "Nothing is served at this path.", "param": None}


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/nonexistent-page", "/t/evergreen/nonexistent-page", "/apinonexistent"])
def test_an_unknown_page_still_answers_html(client: Client, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_the_500_handler_answers_json_for_api_paths_and_html_for_pages() -> None:
    try:
        raise KeyError("a bug")
    except KeyError:
        api = server_error(RequestFactory().get("/t/evergreen/api/context"))
        page = server_error(RequestFactory().get("/entries/"))

    assert api.status_code == page.status_code == 500
    assert error_of(api)["code"] == "server_error" and error_of(api)["param"] is None
    assert page["Content-Type"].startswith("text/html")


def test_the_400_handler_answers_json_bad_request_for_other_unreadable_api_requests() -> None:
    response = bad_request(RequestFactory().get("/t/evergreen/api/context"), SuspiciousOperation())

    assert response.status_code == 400
    assert error_of(response)["code"] == "bad_request"


def test_the_404_and_400_handlers_leave_pages_to_django() -> None:
    request = RequestFactory().get("/admin/nonexistent/")

    assert page_not_found(request, Exception())["Content-Type"].startswith("text/html")
    assert bad_request(request, RequestDataTooBig())["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])  # QA: with DEBUG, Django's HTML page
@pytest.mark.parametrize("path", ["/api/manage/entries/", "/t/evergreen/api/manage/entries/"])
def test_a_management_body_over_the_upload_limit_answers_json_413(
    demo: Namespace, settings: Any, path: str, debug: bool
) -> None:
    _, token = personal_token_create(
        user=User.objects.get(username="editor"), name="editor", namespaces=(demo,), scope="editor", expires_at=None
    )
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    settings.DEBUG = debug
    editor = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = editor.post(path, {"title": "x" * 2048}, content_type="application/json")

    assert response.status_code == 413, response.content
    assert error_of(response)["code"] == "body_too_large"


@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])  # QA: with DEBUG, the debug page
def test_an_admin_form_over_the_upload_limit_answers_a_413_page_naming_the_code(
    demo: Namespace, settings: Any, debug: bool
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    settings.DEBUG = debug
    editor = Client()
    editor.force_login(User.objects.get(username="editor"))
    before = demo.entries.count()
    response = editor.post("/admin/knowledge/entry/add/", {"title": "x" * 2048, "body": "y"})

    assert response.status_code == 413, response.content[:300]
    assert response["Content-Type"].startswith("text/html")
    assert b"<code>body_too_large</code>" in response.content
    assert b"1024 bytes" in response.content
    assert demo.entries.count() == before
