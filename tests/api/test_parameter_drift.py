"""The public routes' parameter rules, their errors and /api/schema/ cannot drift apart (issue 15 §5).

Each route's parameters are declared once (gateway.declared) and the document is built from those
declarations. Here a live server is asked for every 400 code the document lists for each route, each
refusal must name the declared parameter, and every answer — refusals and successes — must validate
against the document: a code the server answers but the document does not list fails the schema's enum,
a documented code nobody can provoke fails the coverage test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema
import orjson
import pytest

from api.openapi.document import openapi_document
from api.views.browse import Q_REFUSALS
from gateway.params import CONTEXT
from knowledge.models import Namespace
from tests.configure import configure
from tests.observe.releases import second_release

pytestmark = pytest.mark.django_db

IDS = ",".join(f"AL-{n:03}" for n in range(1, 22))
TOO_MANY = "&".join(f"x{n}=1" for n in range(101))
PACK = "<pack>"  # replaced by the ETag of a pack the test asks for


@dataclass(frozen=True)
class Refusal:
    route: str  # the document's path
    url: str  # under /t/alpha/
    code: str
    param: str | None
    body: Any = None  # POST /api/verify: the JSON document, or raw bytes
    status: int = 400

    @property
    def method(self) -> str:
        return "get" if self.body is None else "post"


CASES = [
    # /api/context: every parameter's own refusal, and the query string's
    Refusal("/api/context", "api/context?topic=" + "x" * 501, "topic_too_long", "topic"),
    Refusal("/api/context", "api/context?topic=a%07b", "invalid_topic", "topic"),
    Refusal("/api/context", "api/context?budget=12.5", "invalid_budget", "budget"),
    Refusal("/api/context", "api/context?category=nonsense", "unknown_category", "category"),
    Refusal("/api/context", "api/context?budgetMode=all", "invalid_budget_mode", "budgetMode"),
    Refusal("/api/context", "api/context?paths=/etc/passwd", "invalid_paths", "paths"),
    Refusal("/api/context", "api/context?limit=0", "invalid_limit", "limit"),
    Refusal("/api/context", f"api/context?explain=1&why={IDS}", "too_many_ids", "why"),
    Refusal("/api/context", "api/context?explain=yes", "invalid_explain", "explain"),
    Refusal("/api/context", "api/context?topic=a&topic=b", "repeated_parameter", "topic"),
    Refusal("/api/context", f"api/context?{TOO_MANY}", "too_many_parameters", None),
    Refusal("/api/context", "api/context?topic=%FF", "invalid_text", "topic"),
    Refusal("/api/context", "api/context?release=latest", "invalid_release", "release"),
    Refusal("/api/context", "api/context?release=7", "unknown_release", "release"),
    Refusal("/api/context", "api/context?release=1", "release_expired", "release", status=410),
    # /api/entries/<ID>
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?version=x", "invalid_version", "version"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?version=9", "unknown_version", "version"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?version=%FF", "invalid_text", "version"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?version=1&version=2", "repeated_parameter", "version"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-0%0701", "invalid_id", "id"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?release=x", "invalid_release", "release"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?release=7", "unknown_release", "release"),
    Refusal("/api/entries/{entry_id}", "api/entries/AL-001?release=1", "release_expired", "release", status=410),
    # /api/changes
    Refusal("/api/changes", "api/changes", "missing_since", "since"),
    Refusal("/api/changes", "api/changes?since=never", "invalid_since", "since"),
    Refusal("/api/changes", "api/changes?since=9.9.9", "unknown_release", "since"),
    Refusal("/api/changes", "api/changes?since=0&limit=0", "invalid_limit", "limit"),
    Refusal("/api/changes", "api/changes?since=0&after=%FF", "invalid_text", "after"),
    Refusal("/api/changes", "api/changes?since=0&release=x", "invalid_release", "release"),
    Refusal("/api/changes", "api/changes?since=0&release=1", "release_expired", "release", status=410),
    Refusal("/api/changes", "api/changes?since=0&since=1", "repeated_parameter", "since"),
    # /api/prompt-pack and the entry list
    Refusal("/api/prompt-pack", "api/prompt-pack?scenario=nope", "unknown_scenario", "scenario"),
    Refusal("/api/prompt-pack", "api/prompt-pack?scenario=%FF", "invalid_text", "scenario"),
    Refusal("/api/prompt-pack", "api/prompt-pack?scenario=chat&scenario=coding", "repeated_parameter", "scenario"),
    Refusal("/api/prompt-pack", "api/prompt-pack?scenario=chat&release=7", "unknown_release", "release"),
    Refusal("/api/prompt-pack", "api/prompt-pack?release=x", "invalid_release", "release"),
    Refusal("/api/prompt-pack", "api/prompt-pack?release=1", "release_expired", "release", status=410),
    Refusal("/entries/", "entries/?q=" + "x" * 501, "topic_too_long", "q"),
    Refusal("/entries/", "entries/?q=a%07b", "invalid_topic", "q"),
    Refusal("/entries/", "entries/?category=nonsense", "unknown_category", "category"),
    Refusal("/entries/", "entries/?page=0", "invalid_page", "page"),
    Refusal("/entries/", "entries/?q=%FF", "invalid_text", "q"),
    Refusal("/entries/", "entries/?release=x", "invalid_release", "release"),
    Refusal("/entries/", "entries/?release=7", "unknown_release", "release"),
    Refusal("/entries/", "entries/?release=1", "release_expired", "release", status=410),
    Refusal("/entries/", "entries/?page=1&page=2", "repeated_parameter", "page"),
    Refusal("/entries/", "entries/?release=2&release=2", "repeated_parameter", "release"),
    # POST /api/verify: the body as a whole, then each field
    Refusal("/api/verify", "api/verify", "body_too_large", None, body=b"x" * (64 * 1024 + 1), status=413),
    Refusal("/api/verify", "api/verify", "invalid_json", None, body=b"{"),
    Refusal("/api/verify", "api/verify", "invalid_body", None, body=[]),
    Refusal("/api/verify", "api/verify", "invalid_text", "answer", body=b'{"answer": "a\\ud800"}'),
    Refusal("/api/verify", "api/verify", "missing_answer", "answer", body={"answer": " "}),
    Refusal("/api/verify", "api/verify", "answer_too_long", "answer", body={"answer": "x" * 20_001}),
    Refusal("/api/verify", "api/verify", "invalid_parameter", "answer", body={"answer": 5}),
    Refusal("/api/verify", "api/verify", "invalid_parameter", "release", body={"answer": "a", "release": True}),
    Refusal("/api/verify", "api/verify", "invalid_release", "release", body={"answer": "a", "release": "x"}),
    Refusal("/api/verify", "api/verify", "unknown_release", "release", body={"answer": "a", "release": 7}),
    Refusal("/api/verify", "api/verify", "release_expired", "release", body={"answer": "a", "release": 1}),
    Refusal("/api/verify", "api/verify", "unknown_pack", "pack", body={"answer": "a", "pack": '"nope"'}),
    Refusal(
        "/api/verify", "api/verify", "pack_release_mismatch", "pack", body={"answer": "a", "pack": PACK, "release": 7}
    ),
    Refusal("/api/verify", "api/verify?x=%FF", "invalid_text", "x", body={"answer": "a"}),
]


@pytest.fixture
def history(alpha: Namespace, settings: Any, no_rate_limit: None) -> Namespace:
    """Two releases of alpha, the first outside the retention window (release_expired)."""
    second_release(alpha)
    configure(settings, release_retention_days=1)
    return alpha


def _document() -> dict[str, Any]:
    return openapi_document()


def _schema(document: dict[str, Any], path: str, method: str, status: int) -> dict[str, Any]:
    response = document["paths"][path][method]["responses"][str(status)]
    if "$ref" in response:
        response = document["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    schema: dict[str, Any] = response["content"]["application/json"]["schema"]
    return schema


def _codes(schema: dict[str, Any]) -> set[str]:
    """The error codes a response schema allows (an entry's 410 is a tombstone or an error)."""
    if "anyOf" in schema:
        return {code for branch in schema["anyOf"] for code in _codes(branch)}
    error = schema.get("properties", {}).get("error", {})
    return set(error.get("properties", {}).get("code", {}).get("enum", ()))


def _ask(client: Any, case: Refusal) -> Any:
    url = f"/t/alpha/{case.url}"
    if case.body is None:
        return client.get(url)
    body = case.body
    if body is not None and not isinstance(body, bytes):
        if isinstance(body, dict) and body.get("pack") == PACK:
            body = {**body, "pack": client.get("/t/alpha/api/context?topic=alpha")["ETag"]}
        body = orjson.dumps(body)
    return client.post(url, body, content_type="application/json")


@pytest.mark.parametrize("case", CASES, ids=[f"{c.route} {c.code}" for c in CASES])
def test_each_refusal_names_its_declared_parameter_and_matches_the_document(
    client: Any, history: Namespace, case: Refusal
) -> None:
    response = _ask(client, case)

    assert response.status_code == case.status, response.content
    error = response.json()["error"]
    assert (error["code"], error["param"]) == (case.code, case.param)
    jsonschema.validate(response.json(), _schema(_document(), case.route, case.method, case.status))


@pytest.mark.parametrize("route", sorted({c.route for c in CASES}))
def test_every_documented_refusal_of_a_route_is_one_the_server_gives(route: str) -> None:
    """The other direction: a code the document lists that no request above provokes is a stale declaration."""
    document = _document()
    method = next(c.method for c in CASES if c.route == route)
    documented = _codes(_schema(document, route, method, 400))
    if method == "get":
        documented |= _codes(_schema(document, route, method, 410))
    else:
        documented |= _codes(_schema(document, route, method, 413))
    provoked = {c.code for c in CASES if c.route == route}

    assert documented - provoked == set(), "documented codes no case provokes: add a case or drop the declaration"
    assert provoked - documented == set()


@pytest.mark.parametrize(
    ("url", "route"),
    [
        (
            "api/context?topic=alpha&budget=600.0&category=fact&budgetMode=payload&paths=src/a.py&limit=2",
            "/api/context",
        ),
        ("api/context?topic=alpha&explain=1&why=AL-001", "/api/context"),
        ("api/entries/AL-002?version=1", "/api/entries/{entry_id}"),
        ("api/changes?since=1&limit=1", "/api/changes"),
    ],
)
def test_answers_to_every_declared_parameter_match_the_document(
    client: Any, history: Namespace, url: str, route: str
) -> None:
    response = client.get(f"/t/alpha/{url}")

    assert response.status_code == 200, response.content
    document = _document()
    sent = {name for name, _ in (pair.split("=", 1) for pair in url.split("?", 1)[1].split("&"))}
    declared = {p["name"] for p in document["paths"][route]["get"]["parameters"] if "name" in p}
    assert sent <= declared | {"release"}
    jsonschema.validate(response.json(), _schema(document, route, "get", 200))


def test_the_context_declaration_is_what_the_document_lists() -> None:
    parameters = openapi_document()["paths"]["/api/context"]["get"]["parameters"]

    assert [p["name"] for p in parameters if "name" in p] == list(CONTEXT.names)


@pytest.mark.parametrize("case", [c for c in CASES if c.route == "/entries/" and c.code in Q_REFUSALS])
def test_the_entry_list_words_its_topic_refusals_for_q(client: Any, history: Namespace, case: Refusal) -> None:
    message = _ask(client, case).json()["error"]["message"]

    assert message.startswith("q ") and "topic" not in message
