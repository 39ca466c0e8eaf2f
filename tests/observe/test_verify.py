"""POST /api/verify and MCP verify_citations: do an answer's citations hold up against its release or pack?"""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.models import CitationCheck, Namespace, Role
from tests.factories import UserFactory, membership
from tests.mcp_bridge.http_calls import details, tool
from tests.observe.releases import retire_and_build, second_release

pytestmark = pytest.mark.django_db

GOOD = "Alpha ships every Tuesday [AL-001]. Raise the token budget when truncated [AL-201]."


def verify(client: Any, body: Any, namespace: str = "alpha") -> Any:
    raw = body if isinstance(body, bytes) else json.dumps(body)
    return client.post(f"/t/{namespace}/api/verify", raw, content_type="application/json")


def test_an_answer_citing_what_the_release_says_is_fully_valid(client: Any, alpha: Namespace) -> None:
    response = verify(client, {"answer": GOOD, "release": 1})
    report = response.json()
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    assert (report["citationCount"], report["validCount"], report["accuracy"]) == (2, 2, 1.0)
    assert report["problems"] == {}
    assert [c["id"] for c in report["citations"]] == ["AL-001", "AL-201"]


def test_each_kind_of_bad_citation_is_reported(client: Any, alpha: Namespace) -> None:
    answer = (
        "Alpha ships every Friday at 9 [AL-001]. "  # 9 is in no cited entry
        "Alpha was founded in space [AL-077]. "  # not an entry of the release
        "Beta launches zeppelins [BE-001]."  # another namespace's ID
    )
    report = verify(client, {"answer": answer}).json()
    by_id = {c["id"]: [p["code"] for p in c["problems"]] for c in report["citations"]}
    assert by_id == {
        "AL-001": ["figures_not_verbatim"],
        "AL-077": ["not_in_release"],
        "BE-001": ["not_in_release"],
    }
    figures = report["citations"][0]["problems"][0]
    assert figures["figures"] == ["9"]
    assert report["accuracy"] == 0.0
    assert report["problems"] == {"figures_not_verbatim": 1, "not_in_release": 2}


def test_a_citation_retired_since_the_answer_was_written_is_reported_with_its_replacement(
    client: Any, alpha: Namespace
) -> None:
    retire_and_build(alpha, "AL-001", replaced_by="AL-201")
    report = verify(client, {"answer": GOOD, "release": "1"}).json()
    problem = report["citations"][0]["problems"][0]
    assert report["releaseId"] == 1 and report["servingReleaseId"] == 2
    assert problem["code"] == "retired" and problem["replacedBy"] == "AL-201"
    assert report["citations"][1]["valid"] is True


def test_a_pack_etag_checks_membership_in_that_pack(client: Any, alpha: Namespace) -> None:
    pack = client.get("/t/alpha/api/context?topic=pricing&budget=200")
    held = [e["id"] for e in pack.json()["entries"]]
    assert held and "AL-001" not in held
    answer = f"Agents read alpha for free [{held[0]}]. Alpha ships every Tuesday [AL-001]."
    report = verify(client, {"answer": answer, "pack": pack["ETag"]}).json()
    assert report["pack"] == pack["ETag"]
    assert [c["valid"] for c in report["citations"]] == [True, False]
    assert report["citations"][1]["problems"][0]["code"] == "not_in_pack"


def test_the_release_the_answer_came_from_is_used_not_the_serving_one(client: Any, alpha: Namespace) -> None:
    second_release(alpha)  # AL-003 exists from release 2 on
    answer = "Support answers 9 to 17 [AL-003]."
    assert verify(client, {"answer": answer, "release": 2}).json()["validCount"] == 1
    old = verify(client, {"answer": answer, "release": 1}).json()
    assert old["citations"][0]["problems"][0]["code"] == "not_in_release"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", "invalid_json"),
        ({"release": 1}, "missing_answer"),
        ({"answer": "  "}, "missing_answer"),
        ({"answer": 5}, "invalid_parameter"),
        ({"answer": ["EG-001"]}, "invalid_parameter"),
        ({"answer": "x" * 20_001}, "answer_too_long"),
        ({"answer": GOOD, "release": 9}, "unknown_release"),
        ({"answer": GOOD, "release": "soon"}, "invalid_release"),
        ({"answer": GOOD, "pack": '"nope"'}, "unknown_pack"),
        ([1, 2], "invalid_body"),
    ],
)
def test_bad_requests_answer_400_with_a_code_and_record_nothing(
    client: Any, alpha: Namespace, body: Any, code: str
) -> None:
    response = verify(client, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert not CitationCheck.objects.exists()


def test_only_post_is_allowed(client: Any, alpha: Namespace) -> None:
    response = client.get("/t/alpha/api/verify")
    assert response.status_code == 405 and response["Allow"] == "POST"


def test_checks_are_recorded_per_namespace_and_shown_as_weekly_accuracy(
    client: Any, alpha: Namespace, beta: Namespace
) -> None:
    verify(client, {"answer": GOOD})
    verify(client, {"answer": "Zeppelins [AL-001] at 12."})
    verify(client, {"answer": "The beta zeppelin launches from the harbour [BE-001]."}, namespace="beta")
    checks = CitationCheck.objects.filter(namespace=alpha).order_by("at")
    assert [(c.citations, c.valid, c.channel) for c in checks] == [(2, 2, "rest"), (1, 0, "rest")]
    assert checks[1].problems == {"figures_not_verbatim": 1}
    assert len(checks[0].client) == 16  # a keyed hash, never the address

    member = membership(UserFactory(username="rita2"), alpha, Role.REVIEWER)
    client.force_login(member)
    page = client.get("/admin/knowledge/citationcheck/").content.decode()
    assert "Citation accuracy by week" in page
    assert "<td>alpha</td>" in page and "<td>beta</td>" not in page
    assert "67 %" in page  # 2 of 3 citations this week


def test_mcp_verify_citations_answers_the_same_report(client: Any, alpha: Namespace) -> None:
    result = tool(client, "/t/alpha/mcp", "verify_citations", {"answer": GOOD, "release": 1})
    rest = verify(client, {"answer": GOOD, "release": 1}).json()
    assert result["isError"] is False
    assert result["structuredContent"] == rest
    assert list(CitationCheck.objects.values_list("channel", flat=True).order_by("at")) == ["mcp", "rest"]
    refused = tool(client, "/t/alpha/mcp", "verify_citations", {"answer": GOOD, "release": 42})
    assert details(refused)["error"] == "unknown_release"
