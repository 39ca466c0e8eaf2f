"""GET /api/changes?since=…: what changed per entry between a past release and the served one."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace, Release
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.releases import release_build
from knowledge.services.rollback import release_rollback
from tests.observe.releases import SECOND_BUILT, retire_and_build, second_release
from tests.servingfixtures import beta_rows, publish

pytestmark = pytest.mark.django_db


def changes(client: Any, query: str, namespace: str = "alpha") -> Any:
    return client.get(f"/t/{namespace}/api/changes?{query}")


def test_since_a_release_it_lists_each_changed_entry_with_versions_and_hashes(client: Any, alpha: Namespace) -> None:
    first = Release.objects.get(namespace=alpha, sequence=1)
    second_release(alpha)
    response = changes(client, "since=1")
    document = response.json()

    assert response.status_code == 200
    assert response["ETag"] and response["Cache-Control"] == "public, max-age=900"
    assert document["releaseId"] == 2 and document["since"]["releaseId"] == 1
    assert document["since"]["knowledgeVersion"] == first.knowledge_version
    assert document["counts"] == {"added": 1, "changed": 1, "retired": 0, "restored": 0, "removed": 0}
    by_id = {c["id"]: c for c in document["changes"]}
    assert by_id["AL-003"]["change"] == "added" and by_id["AL-003"]["version"] == 1
    assert by_id["AL-002"]["change"] == "changed"
    assert by_id["AL-002"]["previousVersion"] == 1 and by_id["AL-002"]["version"] == 2
    assert by_id["AL-002"]["contentHash"] != by_id["AL-002"]["previousContentHash"]
    assert document["next"] is None


def test_since_accepts_a_knowledge_version_a_time_and_zero(client: Any, alpha: Namespace) -> None:
    version = Release.objects.get(namespace=alpha, sequence=1).knowledge_version
    second_release(alpha)
    between = (SECOND_BUILT.replace(hour=0)).isoformat()

    by_version = changes(client, f"since={version}").json()
    by_time = changes(client, f"since={between.replace('+00:00', 'Z')}").json()
    from_start = changes(client, "since=0").json()

    assert by_version["changes"] == by_time["changes"] == changes(client, "since=1").json()["changes"]
    assert by_time["since"]["releaseId"] == 1
    assert from_start["since"]["releaseId"] is None
    assert {c["change"] for c in from_start["changes"]} == {"added"}
    assert from_start["changeCount"] == 4


def test_pages_follow_the_next_link_to_the_end(client: Any, alpha: Namespace) -> None:
    seen, url = [], "/t/alpha/api/changes?since=0&limit=2"
    while url:
        document = client.get(url).json()
        seen += [c["id"] for c in document["changes"]]
        url = document["next"]
    assert seen == ["AL-001", "AL-002", "AL-201"]


def test_retirement_and_rollback_show_as_retired_and_removed(client: Any, alpha: Namespace, reviewer: Any) -> None:
    second_release(alpha)
    retire_and_build(alpha, "AL-001")
    retired = changes(client, "since=2").json()
    assert [(c["id"], c["change"]) for c in retired["changes"]] == [("AL-001", "retired")]

    release_rollback(namespace=alpha, release=Release.objects.get(namespace=alpha, sequence=1), actor=reviewer)
    release_build(namespace_id=alpha.pk)
    serving_caches_clear()
    rolled_back = changes(client, "since=2").json()
    # The rollback is a new release: release 1's versions again, with AL-001 still retired.
    assert rolled_back["releaseId"] == 4
    assert {c["id"]: c["change"] for c in rolled_back["changes"]} == {
        "AL-001": "retired",
        "AL-002": "changed",
        "AL-003": "removed",
    }


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("", "missing_since"),
        ("since=yesterday", "invalid_since"),
        ("since=7", "unknown_release"),
        ("since=9.9.9", "unknown_release"),
        ("since=0&limit=0", "invalid_limit"),
        ("since=0&limit=many", "invalid_limit"),
    ],
)
def test_bad_parameters_answer_400_with_a_code(client: Any, alpha: Namespace, query: str, code: str) -> None:
    response = changes(client, query)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code


def test_release_numbers_are_per_namespace(client: Any, alpha: Namespace, beta: Namespace) -> None:
    extra = {"id": "BE-003", "category": "fact", "title": "Beta harbour", "body": "The harbour is north."}
    publish(beta, [*beta_rows(), extra], now=SECOND_BUILT)  # beta has releases 1 and 2, alpha only 1
    serving_caches_clear()
    assert changes(client, "since=2").json()["error"]["code"] == "unknown_release"
    beta_changes = changes(client, "since=1", namespace="beta").json()["changes"]
    assert [(c["id"], c["change"]) for c in beta_changes] == [("BE-003", "added")]
    assert {c["id"] for c in changes(client, "since=0").json()["changes"]} == {"AL-001", "AL-002", "AL-201"}
