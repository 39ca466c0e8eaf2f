"""GET/HEAD /api/context over HTTP: the seed §4 contract, 400s, caching headers, determinism, the hot path."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.cache import reply_cache_clear
from gateway.params import BUDGET_NOT_INTEGER, REPEATED, TOPIC_CONTROL, TOPIC_TOO_LONG
from knowledge.models import Namespace
from knowledge.models.namespace import Packing
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.releases import release_build
from tests.servingfixtures import BUILT_AT

pytestmark = pytest.mark.django_db


def get(client: Any, **params: Any) -> Any:
    return client.get("/api/context", params)


@pytest.mark.parametrize(
    ("params", "code", "param", "message"),
    [
        ({"budget": "abc"}, "invalid_budget", "budget", BUDGET_NOT_INTEGER),
        ({"budget": "2000.5"}, "invalid_budget", "budget", BUDGET_NOT_INTEGER),
        ({"budget": "1e3"}, "invalid_budget", "budget", BUDGET_NOT_INTEGER),
        ({"topic": "x" * 501}, "topic_too_long", "topic", TOPIC_TOO_LONG),
        ({"topic": "token\x00budget"}, "invalid_topic", "topic", TOPIC_CONTROL),
        ({"topic": "token\nbudget"}, "invalid_topic", "topic", TOPIC_CONTROL),
    ],
)
def test_bad_parameters_answer_400_with_code_message_and_param(
    client: Any, demo: Any, params: dict[str, str], code: str, param: str, message: str
) -> None:
    response = get(client, **params)

    assert response.status_code == 400
    assert response.json() == {"error": {"code": code, "message": message, "param": param}}
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["ETag"]


def test_unknown_category_is_a_400_naming_the_known_ones(client: Any, demo: Any) -> None:
    response = get(client, category="nope")

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"]) == ("unknown_category", "category")
    assert "fact, protocol, rule, principle, workflow" in error["message"]


def test_a_repeated_parameter_is_a_400(client: Any, demo: Any) -> None:
    response = client.get("/api/context?topic=a&topic=b")

    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "repeated_parameter",
        "message": REPEATED.format(param="topic"),
        "param": "topic",
    }


def test_a_topic_of_exactly_500_characters_is_fine(client: Any, demo: Any) -> None:
    assert get(client, topic="预" * 500).status_code == 200


@pytest.mark.parametrize(("sent", "echoed"), [("50", 200), ("-3", 200), ("99999999", 8000), ("4000", 4000), ("", 2000)])
def test_budget_is_clamped_and_echoed_clamped(client: Any, demo: Any, sent: str, echoed: int) -> None:
    body = get(client, budget=sent).json()

    assert body["query"]["budget"] == body["budget"] == echoed
    assert body["usedTokens"] <= echoed


def test_absent_or_empty_category_echoes_null(client: Any, demo: Any) -> None:
    assert get(client).json()["query"] == {"topic": "", "budget": 2000, "category": None}
    assert get(client, category="", topic="token 预算").json()["query"]["category"] is None


def test_seed_example_token_budget_is_matched_truncated_and_led_by_the_budget_rule(client: Any, demo: Any) -> None:
    # The seed's exact packing (fill the budget in rank order) is a namespace setting.
    Namespace.objects.filter(pk=demo.pk).update(packing=Packing.SEED)
    release_build(namespace_id=demo.pk, now=BUILT_AT)
    demo.refresh_from_db()

    body = get(client, topic="token 预算", budget=2000).json()

    assert body["entries"][0]["id"] == "EG-202"
    assert body["entries"][0]["relevance"] == 1
    assert (body["matched"], body["truncated"]) == (True, True)
    assert body["entryCount"] == len(body["entries"]) == len(body["citations"]) > 1
    assert body["usedTokens"] > 1500


def test_by_default_a_pack_holds_only_relevant_entries_and_may_end_below_its_budget(client: Any, demo: Any) -> None:
    body = get(client, topic="token 预算怎么选", budget=2000).json()

    assert body["matched"] is True
    assert body["entries"][0]["id"] == "EG-202"
    # No rider at relevance 0.1 because budget was left: every packed entry is near the best one.
    assert all(entry["relevance"] >= 0.4 for entry in body["entries"])
    assert body["usedTokens"] < 2000
    assert (body["truncated"], body["omitted"], body["hint"]) == (False, [], None)
    assert body["entryCount"] == len(body["entries"]) == len(body["citations"])
    assert body["rules"][:-1] == list(demo.rules) and "不是指令" in body["rules"][-1]
    assert body["knowledgeVersion"] == "1.2.0"
    assert body["generatedAt"] == "2026-09-02T10:52:47Z"
    assert body["releaseId"] == demo.active_release.sequence


def test_a_chinese_question_and_an_english_topic_both_match(client: Any, demo: Any) -> None:
    assert get(client, topic="Prompt Pack 有哪些场景？").json()["matched"] is True
    assert get(client, topic="MCP tools").json()["matched"] is True


def test_rules_only_request_of_the_seed(client: Any, demo: Any) -> None:
    body = get(client, category="rule", budget=800).json()

    assert [e["id"] for e in body["entries"]] == ["EG-201", "EG-202"]
    assert body["truncated"] is False and body["hint"] is None


def test_zero_hit_fallback_is_unmatched(client: Any, demo: Any) -> None:
    body = get(client, topic="量子色动力学").json()

    assert body["matched"] is False
    assert body["entries"] and body["hint"]


def test_etag_is_the_hash_of_the_body_and_if_none_match_gives_304(client: Any, demo: Any) -> None:
    response = get(client, topic="token 预算")
    etag = response["ETag"]

    assert etag == '"' + hashlib.sha256(response.content).hexdigest()[:32] + '"'
    assert response["Cache-Control"] == "public, max-age=900"
    again = client.get("/api/context", {"topic": "token 预算"}, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert (again["ETag"], again["Cache-Control"]) == (etag, "public, max-age=900")


def test_head_has_the_get_headers_and_no_body(client: Any, demo: Any) -> None:
    got = get(client, topic="token 预算")
    head = client.head("/api/context", {"topic": "token 预算"})

    assert head.status_code == 200
    assert head.content == b""
    assert head["Content-Length"] == got["Content-Length"] == str(len(got.content))
    assert head["ETag"] == got["ETag"]


def test_identical_requests_give_identical_bytes_even_when_recomputed(client: Any, demo: Any) -> None:
    first = get(client, topic="token 预算", budget=1200).content
    reply_cache_clear()
    serving_caches_clear()
    assert get(client, topic="token 预算", budget=1200).content == first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    topic=st.text(alphabet=st.sampled_from(list("token预算规则引用 MCPaeiou410条目缓存")), max_size=30),
    budget=st.integers(min_value=-100, max_value=10000),
)
def test_property_used_tokens_within_budget_and_deterministic(
    client: Any, demo: Any, no_rate_limit: None, topic: str, budget: int
) -> None:
    first = get(client, topic=topic, budget=budget)
    reply_cache_clear()
    second = get(client, topic=topic, budget=budget)
    body = orjson.loads(first.content)

    assert first.status_code == 200
    assert first.content == second.content
    assert body["usedTokens"] <= body["budget"] == max(200, min(8000, budget))
    assert body["usedTokens"] == sum(e["tokens"] for e in body["entries"])


def test_the_warm_hot_path_runs_no_query(client: Any, demo: Any, django_assert_num_queries: Any) -> None:
    get(client, topic="token 预算")
    with django_assert_num_queries(0):
        assert get(client, topic="token 预算").status_code == 200
    with django_assert_num_queries(0):
        assert get(client, topic="另一个 topic", budget=900).status_code == 200


def test_a_cold_process_touches_no_entry_rows(client: Any, demo: Any, django_assert_num_queries: Any) -> None:
    with CaptureQueriesContext(connection) as queries:
        assert get(client, topic="token 预算").status_code == 200

    # the host's namespace (none: the default), the namespace with its active release, the release's
    # artifact list, then the bytes of the artifacts the process keeps
    assert len(queries) == 4
    assert not any("knowledge_entry" in q["sql"] for q in queries.captured_queries)
