"""GET /api/context?paths= (issue 16 §2) over HTTP: entries with path globs, from import to release to pack."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.errors import BadParameterError
from gateway.params import PATHS_NOT_STRINGS, context_query
from knowledge.models import EntryVersion, Namespace
from knowledge.services.imports import ImportFileError, entries_import, entries_parse
from tests.factories import UserFactory, content
from tests.servingfixtures import publish

pytestmark = pytest.mark.django_db

RULES: list[dict[str, Any]] = [
    {
        "id": "AL-201",
        "category": "rule",
        "title": "SQL migrations",
        "summary": "Migrations are reversible.",
        "body": "Every SQL migration has a reverse step and is reviewed.",
        "paths": ["*.sql", "db/migrations/**"],
        "confidence": 0.9,
        "updated": "2026-08-01",
    },
    {
        "id": "AL-202",
        "category": "rule",
        "title": "API handlers",
        "summary": "Handlers validate input.",
        "body": "API handlers validate input and never answer with a stack trace.",
        "paths": ["src/api/**/*.py"],
        "confidence": 0.95,
        "updated": "2026-08-01",
    },
    {
        "id": "AL-203",
        "category": "rule",
        "title": "Code review",
        "summary": "A second person reviews every change.",
        "body": "Every change is reviewed by a second person before it is merged.",
        "confidence": 0.9,
        "updated": "2026-08-01",
    },
]


@pytest.fixture
def rules(ns_a: Namespace) -> Namespace:
    return publish(ns_a, RULES)


def context(client: Any, query: str, slug: str = "alpha") -> Any:
    return client.get(f"/t/{slug}/api/context?{query}")


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [entry["id"] for entry in response.json()["entries"]]


def test_paths_load_the_entries_that_apply_and_nothing_else(client: Any, rules: Namespace) -> None:
    response = context(client, "paths=src/api/users.py")

    assert ids(response) == ["AL-202"]
    body = response.json()
    assert body["query"]["paths"] == ["src/api/users.py"]
    assert body["entries"][0]["matchedPaths"] == ["src/api/users.py"]
    assert body["entries"][0]["paths"] == ["src/api/**/*.py"]


def test_repeated_paths_each_count_and_their_order_does_not_matter(client: Any, rules: Namespace) -> None:
    one = context(client, "paths=src/api/users.py&paths=db/0002.sql")
    other = context(client, "paths=db/0002.sql&paths=./src/api/users.py")

    assert ids(one) == ["AL-202", "AL-201"]  # priority: the higher confidence first
    assert one.content == other.content and one["ETag"] == other["ETag"]


def test_paths_with_a_topic_put_the_applicable_entries_before_topic_hits(client: Any, rules: Namespace) -> None:
    found = ids(context(client, "topic=reviewed%20change&paths=src/api/users.py"))

    assert found[0] == "AL-202"
    assert "AL-203" in found[1:]  # a topic hit without globs
    assert "AL-201" not in found  # its globs match none of the paths: left out although the topic fits


def test_without_paths_the_globbed_entries_rank_by_topic(client: Any, rules: Namespace) -> None:
    found = ids(context(client, "topic=SQL%20migration%20reverse"))

    assert found[0] == "AL-201"


def test_an_empty_paths_value_is_an_empty_path(client: Any, rules: Namespace) -> None:
    """README, Paths: an empty path answers 400 invalid_paths, as MCP's paths [""] does."""
    response = context(client, "topic=review&paths=")

    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_paths"


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("paths=/home/me/repo/src/api/users.py", "absolute"),
        ("paths=src/../../secrets.txt", ".."),
        ("&".join(f"paths=f{n}.py" for n in range(51)), "more than 50"),
    ],
)
def test_bad_paths_answer_400_invalid_paths(client: Any, rules: Namespace, query: str, says: str) -> None:
    response = context(client, query)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("invalid_paths", "paths")
    assert says in error["message"]


def test_paths_of_the_wrong_type_are_refused_for_every_channel() -> None:
    with pytest.raises(BadParameterError) as refused:
        context_query(topic="", budget=None, category=None, categories=[], paths=[3])  # type: ignore[list-item]
    assert refused.value.code == "invalid_paths" and refused.value.message == PATHS_NOT_STRINGS


def test_the_globs_are_in_context_json_and_the_entry(client: Any, rules: Namespace) -> None:
    knowledge = client.get("/t/alpha/context.json").json()
    by_id = {entry["id"]: entry for entry in knowledge["entries"]}

    assert by_id["AL-201"]["paths"] == ["*.sql", "db/migrations/**"]
    assert "paths" not in by_id["AL-203"]  # an entry without globs has no member for them
    assert client.get("/t/alpha/api/entries/AL-202").json()["paths"] == ["src/api/**/*.py"]


def test_another_namespaces_globs_never_apply(client: Any, rules: Namespace, ns_b: Namespace) -> None:
    publish(ns_b, [{**RULES[1], "id": "BE-202", "title": "Beta handlers"}])

    assert ids(context(client, "paths=src/api/users.py", slug="beta")) == ["BE-202"]
    assert ids(context(client, "paths=src/api/users.py")) == ["AL-202"]


def test_the_globs_are_part_of_the_reviewed_content_and_its_hash() -> None:
    plain = content(title="Rule")
    scoped = content(title="Rule", paths=["*.sql"])

    assert plain.content_hash != scoped.content_hash
    assert content(title="Rule", paths=[]).content_hash == plain.content_hash  # old versions keep their hash


def test_an_import_with_a_bad_glob_names_the_line_and_writes_nothing(ns_a: Namespace) -> None:
    rows = [RULES[2], {**RULES[0], "paths": ["/etc/*.conf"]}]
    before = EntryVersion.objects.count()

    with pytest.raises(ImportFileError) as refused:
        entries_parse(json.dumps(row) for row in rows)  # every line is validated before anything is written

    assert refused.value.errors[0][0] == 2 and "relative to the project root" in refused.value.errors[0][1]
    assert EntryVersion.objects.count() == before


def test_an_import_line_without_paths_keeps_the_entrys_globs(rules: Namespace) -> None:
    row = {key: value for key, value in RULES[0].items() if key != "paths"}
    items = entries_parse([json.dumps({**row, "body": RULES[0]["body"] + " Changed."})])
    editor: Any = UserFactory()
    entries_import(namespace=rules, items=items, actor=editor, publish=False, source="test")

    newest = EntryVersion.objects.filter(entry__public_id="AL-201").order_by("-number").first()
    assert newest is not None and newest.paths == ["*.sql", "db/migrations/**"] and newest.state == "draft"
