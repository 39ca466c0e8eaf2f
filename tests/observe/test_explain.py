"""Explain: /api/context?…&explain=1&why=… and MCP explain_context say why a pack is what it is."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.retrieval.index import COVERAGE_KNEE, COVERAGE_SLOPE, MATCH_COVERAGE_FLOOR
from knowledge.services.entries import entry_create
from tests.factories import content
from tests.mcp_bridge.http_calls import tool
from tests.observe.releases import retire_and_build

pytestmark = pytest.mark.django_db


def explained(client: Any, query: str) -> dict[str, Any]:
    response = client.get(f"/t/alpha/api/context?{query}&explain=1")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def test_each_candidate_is_scored_by_term_field_and_factor_and_its_outcome_matches_the_pack(
    client: Any, alpha: Namespace
) -> None:
    document = explained(client, "topic=token%20budget%20truncated&budget=200")
    explain = document["explain"]
    packed = [e["id"] for e in document["entries"]]
    omitted = [e["id"] for e in document["omitted"]]

    assert [t["term"] for t in explain["analysis"]["terms"]] == ["token", "budget", "truncat"]
    assert explain["candidates"], "the topic shares words with entries"
    for candidate in explain["candidates"]:
        breakdown = candidate["breakdown"]
        assert abs(sum(t["part"] for t in breakdown["terms"]) - breakdown["score"]) < 1e-3
        assert 0.85 <= breakdown["confidenceFactor"] <= 1.0
        assert all(term["fields"] for term in breakdown["terms"])  # each scoring term is found in some field
        expected = "in_pack" if candidate["id"] in packed else "over_budget" if candidate["id"] in omitted else None
        if expected:
            assert candidate["outcome"] == expected
    top = explain["candidates"][0]
    assert top["rank"] == 1 and top["id"] == "AL-201"
    assert {"title", "summary", "body", "tags"} & set(top["breakdown"]["terms"][0]["fields"])
    matching = explain["matching"]
    assert matching["matched"] == document["matched"]
    assert matching["coverageFloor"] == round(MATCH_COVERAGE_FLOOR, 4)
    assert matching["feedback"] is False  # a small namespace is not crowded
    assert (matching["coverageKnee"], matching["coverageSlope"]) == (COVERAGE_KNEE, COVERAGE_SLOPE)
    entry = matching["bestCoverage"]["entry"]
    penalty = COVERAGE_SLOPE * max(0.0, COVERAGE_KNEE - entry)
    assert matching["coveragePenalty"] == pytest.approx(penalty, abs=1e-4)
    assert matching["gateScore"] == pytest.approx(matching["matchScore"] - penalty, abs=2e-4)
    rule = not matching["belowCoverageFloor"] and matching["gateScore"] >= matching["threshold"]
    assert matching["matched"] == rule  # the rule stated is the rule applied


def test_why_names_the_reason_for_each_entry_asked_about(client: Any, alpha: Namespace, editor: Any) -> None:
    retire_and_build(alpha, "AL-002")
    entry_create(namespace=alpha, category=alpha.categories.get(slug="fact"), content=content(), actor=editor)
    asked = "AL-201,AL-001,AL-002,AL-003,AL-999"
    entries = {
        e["id"]: e for e in explained(client, f"topic=token%20budget&category=rule&why={asked}")["explain"]["entries"]
    }
    assert entries["AL-201"]["outcome"] == "in_pack" and entries["AL-201"]["rank"] == 1
    assert entries["AL-001"]["outcome"] == "other_category"
    assert entries["AL-002"]["outcome"] == "retired"
    assert entries["AL-003"]["outcome"] == "not_public"  # a draft
    assert entries["AL-999"]["outcome"] == "not_found"
    no_words = explained(client, "topic=tuesday%20ships&why=AL-201")["explain"]["entries"][0]
    assert no_words["outcome"] == "no_common_term"


def test_a_topic_nothing_covers_says_so(client: Any, alpha: Namespace) -> None:
    document = explained(client, "topic=quantum%20chromodynamics&why=AL-001")
    assert document["matched"] is False and document["explain"]["matching"]["mode"] == "fallback"
    assert [t["known"] for t in document["explain"]["analysis"]["terms"]] == [False, False]
    assert document["explain"]["entries"][0]["outcome"] == "fallback"


def test_an_explanation_is_the_same_bytes_every_time_and_over_mcp(client: Any, alpha: Namespace) -> None:
    query = "topic=alpha%20pricing&budget=800&why=AL-002"
    first = client.get(f"/t/alpha/api/context?{query}&explain=1").content
    assert client.get(f"/t/alpha/api/context?{query}&explain=1").content == first
    result = tool(
        client, "/t/alpha/mcp", "explain_context", {"query": "alpha pricing", "budget": 800, "ids": ["AL-002"]}
    )
    assert result["isError"] is False
    assert (
        result["structuredContent"]["explain"]
        == client.get(f"/t/alpha/api/context?{query}&explain=1").json()["explain"]
    )


def test_too_many_ids_are_refused(client: Any, alpha: Namespace) -> None:
    why = ",".join(f"AL-{n:03d}" for n in range(21))
    response = client.get(f"/t/alpha/api/context?topic=alpha&explain=1&why={why}")
    assert response.status_code == 400 and response.json()["error"]["code"] == "too_many_ids"


def test_reviewers_see_in_the_agent_preview_whether_agents_find_the_entry_by_its_title(
    client: Any, alpha: Namespace, reviewer: Any
) -> None:
    from knowledge.models import EntryVersion

    live = EntryVersion.objects.get(entry__public_id="AL-201", state="published")
    client.force_login(reviewer)
    page = client.get(f"/admin/knowledge/entryversion/{live.pk}/change/").content.decode()
    assert 'id="evergreen-finding"' in page
    assert "Token budget discipline" in page and "in_pack" in page and "Rank 1" in page
