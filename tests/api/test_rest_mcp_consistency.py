"""QA findings: REST agrees with MCP on empty paths and on `limit`, and every HTML page's Link names its own twin."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from gateway.params import LIMIT_INVALID
from knowledge.models import Namespace
from knowledge.retrieval.packing import pack_to_budget
from knowledge.retrieval.paths import PATH_EMPTY
from knowledge.retrieval.ranking import Hit

pytestmark = pytest.mark.django_db

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def mcp_search(client: Any, slug: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": "search_context", "arguments": arguments}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    response = client.post(f"/t/{slug}/mcp", orjson.dumps(call), content_type="application/json", headers=MCP_HEADERS)
    result: dict[str, Any] = response.json()["result"]
    return result


def _alternate(response: Any) -> tuple[str, str]:
    found = re.search(r'<([^>]*)>; rel="alternate"; type="([^"]*)"', response["Link"])
    assert found is not None, response["Link"]
    return found.group(1), found.group(2)


# --- 1. an empty path is refused over REST as over MCP -------------------------------------------------


@pytest.mark.parametrize("query", ["paths=", "topic=alpha&paths=", "paths=a.py&paths=", "paths=%20"])
def test_an_empty_paths_value_answers_400_invalid_paths_like_mcp(
    client: Any, alpha: Namespace, no_rate_limit: None, query: str
) -> None:
    response = client.get(f"/t/alpha/api/context?{query}")

    assert response.status_code == 400
    assert response.json()["error"] == {"code": "invalid_paths", "message": PATH_EMPTY, "param": "paths"}
    refused = mcp_search(client, "alpha", {"query": "", "paths": [""]})
    assert refused["isError"] is True


def test_a_comma_in_a_path_is_part_of_the_file_name_not_a_separator(client: Any, alpha: Namespace) -> None:
    """README, Paths: paths are repeated, never comma-separated; `a.py,,b.py` is one (odd) file name."""
    response = client.get("/t/alpha/api/context?paths=a.py,,b.py")

    assert response.status_code == 200
    assert response.json()["query"]["paths"] == ["a.py,,b.py"]


def test_the_document_does_not_allow_an_empty_paths_value(client: Any, alpha: Namespace) -> None:
    parameters = client.get("/api/schema/").json()["paths"]["/api/context"]["get"]["parameters"]
    paths = next(p for p in parameters if p.get("name") == "paths")

    assert "allowEmptyValue" not in paths
    assert paths["schema"]["items"]["minLength"] == 1


# --- 2. what `limit` cuts is said, and REST takes `limit` too ------------------------------------------


def test_limit_names_what_it_cut_and_echoes_itself(client: Any, alpha: Namespace, no_rate_limit: None) -> None:
    whole = client.get("/t/alpha/api/context?budget=8000").json()
    limited = client.get("/t/alpha/api/context?budget=8000&limit=2").json()

    assert whole["entryCount"] > 2 and not whole["truncated"]
    assert limited["query"]["limit"] == 2
    assert [e["id"] for e in limited["entries"]] == [e["id"] for e in whole["entries"][:2]]
    assert limited["overLimit"] == [{"id": e["id"], "tokens": e["tokens"]} for e in whole["entries"][2:]]
    assert limited["truncated"] is False and limited["omitted"] == []  # the budget left nothing out
    assert "limit" not in whole["query"] and "overLimit" not in whole  # a pack without limit is as before


def test_mcp_and_rest_answer_a_limited_pack_with_the_same_json(
    client: Any, alpha: Namespace, no_rate_limit: None
) -> None:
    rest = client.get("/t/alpha/api/context?budget=8000&limit=2").json()
    mcp = mcp_search(client, "alpha", {"query": "", "limit": 2, "budget": 8000})

    assert mcp["structuredContent"] == rest
    assert rest["overLimit"]


def test_a_limit_that_cut_nothing_says_so(client: Any, alpha: Namespace) -> None:
    whole = client.get("/t/alpha/api/context?budget=8000").json()
    limited = client.get(f"/t/alpha/api/context?budget=8000&limit={whole['entryCount']}").json()

    assert limited["overLimit"] == []
    assert limited["entries"] == whole["entries"]


@pytest.mark.parametrize("limit", ["0", "51", "x", "1.5", "-1", "%EF%BC%92"])
def test_a_bad_limit_answers_400_invalid_limit(client: Any, alpha: Namespace, no_rate_limit: None, limit: str) -> None:
    response = client.get(f"/t/alpha/api/context?limit={limit}")

    assert response.status_code == 400
    assert response.json()["error"] == {"code": "invalid_limit", "message": LIMIT_INVALID, "param": "limit"}


def test_an_empty_limit_is_no_cap(client: Any, alpha: Namespace) -> None:
    assert client.get("/t/alpha/api/context?limit=").content == client.get("/t/alpha/api/context").content


def test_the_packer_lists_only_what_the_budget_would_also_have_held() -> None:
    hits = [Hit(position, 1.0, None) for position in range(5)]
    costs = [100, 100, 300, 100, 100]

    pack = pack_to_budget(hits, tokens_of=costs.__getitem__, budget=350, min_tokens=100, limit=1)

    assert [hit.position for hit in pack.packed] == [0]
    # Without the limit the budget holds 0, 1 and 3 (2 and 4 do not fit). The limit stopped the pack before
    # the budget refused anything, so truncated stays false: raising the budget would add nothing.
    assert [hit.position for hit in pack.over_limit] == [1, 3]
    assert pack.over_limit_tokens == 200 and pack.truncated is False and pack.omitted == ()


# --- 3. each HTML page's Link names its own twin -------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/t/evergreen/",
        "/t/evergreen/index.html",
        "/t/evergreen/entries/EG-202",
        "/t/evergreen/docs/protocol-stack",
        "/t/evergreen/entries/",
        "/t/evergreen/entries/?q=token",
        "/t/evergreen/entries/?q=token%20%E9%A2%84%E7%AE%97&category=rule",
    ],
)
def test_the_alternate_of_an_html_page_is_its_own_markdown_twin(client: Any, demo: Namespace, url: str) -> None:
    page = client.get(url)
    twin = client.get(url, headers={"Accept": "text/markdown"})
    href, media = _alternate(page)

    assert page["Content-Type"].startswith("text/html") and media == "text/markdown"
    followed = client.get(href, headers={"Accept": "text/markdown"})
    assert followed["Content-Type"] == twin["Content-Type"] == "text/markdown; charset=utf-8"
    assert followed.content == twin.content


def test_the_entry_list_head_link_names_the_list_not_llms_txt(client: Any, demo: Namespace) -> None:
    html = client.get("/t/evergreen/entries/?q=token").content.decode()

    assert '<link rel="alternate" type="text/markdown" href="?q=token">' in html


def test_the_metrics_page_advertises_its_json_and_no_markdown_twin(client: Any, demo: Namespace) -> None:
    page = client.get("/t/evergreen/metrics.html")
    asked = client.get("/t/evergreen/metrics.html", headers={"Accept": "text/markdown"})

    assert _alternate(page) == ("/t/evergreen/metrics.json", "application/json")
    assert asked["Content-Type"].startswith("text/html")  # no twin, so none is advertised
    assert '<link rel="alternate" type="application/json" href="metrics.json">' in page.content.decode()
