"""/api/entries/<ID> and the entry pages (seed §6): 200 published, 410 retired, 404 unknown or another namespace's."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Entry, Namespace
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_build
from tests.servingfixtures import BUILT_AT

pytestmark = pytest.mark.django_db


@pytest.fixture
def retired(alpha: Namespace) -> Namespace:
    entry = Entry.objects.get(namespace=alpha, public_id="AL-002")
    entry_retire(
        entry=entry, actor=None, reason="Pricing moved to the contract.", replaced_by="AL-001", check_permission=False
    )
    release_build(namespace_id=alpha.pk, now=BUILT_AT)
    return alpha


def test_a_published_entry_answers_200_with_its_fields(client: Any, alpha: Namespace) -> None:
    body = client.get("/t/alpha/api/entries/AL-001").json()

    assert body["id"] == "AL-001"
    assert body["title"] == "Alpha is a test namespace"
    assert body["confidence"] == 0.99
    assert body["version"] == 1
    assert len(body["contentHash"]) == 64
    assert body["url"] == "https://alpha.example.com/api/entries/AL-001"
    assert body["citation"]["marker"] == "[AL-001]"
    assert body["stale"] is False


def test_an_old_entry_is_flagged_stale(client: Any, alpha: Namespace) -> None:
    assert client.get("/t/alpha/api/entries/AL-002").json()["stale"] is True


def test_ids_are_case_insensitive(client: Any, alpha: Namespace) -> None:
    assert client.get("/t/alpha/api/entries/al-001").json()["id"] == "AL-001"


def test_a_retired_entry_answers_410_with_its_tombstone(client: Any, retired: Namespace) -> None:
    response = client.get("/t/alpha/api/entries/AL-002")

    assert response.status_code == 410
    assert response.json() == {
        "id": "AL-002",
        "title": "Alpha pricing",
        "retiredAt": response.json()["retiredAt"],
        "reason": "Pricing moved to the contract.",
        "replacedBy": "AL-001",
    }
    markdown = client.get("/t/alpha/api/entries/AL-002.md")
    assert markdown.status_code == 410
    assert "Pricing moved to the contract." in markdown.content.decode()
    assert client.get("/t/alpha/entries/AL-002").status_code == 410
    assert client.get("/t/alpha/entries/AL-002.md").status_code == 410


def test_a_retired_entry_leaves_the_pack_and_context_json(client: Any, retired: Namespace) -> None:
    context = client.get("/t/alpha/context.json").json()

    assert "AL-002" not in [e["id"] for e in context["entries"]]
    assert [t["id"] for t in context["retired"]] == ["AL-002"]
    pack = client.get("/t/alpha/api/context", {"topic": "pricing"}).json()
    assert "AL-002" not in [e["id"] for e in pack["entries"]]


def test_an_unknown_id_answers_404_with_the_three_nearest(client: Any, alpha: Namespace) -> None:
    response = client.get("/t/alpha/api/entries/AL-003")

    assert response.status_code == 404
    body = response.json()
    assert body["nearest"] == ["AL-002", "AL-001", "AL-201"]
    assert body["error"]["code"] == "not_found"
    assert body["error"]["param"] == "id"
    assert client.get("/t/alpha/api/entries/AL-003.md").status_code == 404
    assert client.get("/t/alpha/entries/AL-003").status_code == 404


def test_another_namespaces_id_answers_exactly_like_one_that_never_existed(
    client: Any, alpha: Namespace, beta: Namespace
) -> None:
    foreign = client.get("/t/alpha/api/entries/BE-001")
    never = client.get("/t/alpha/api/entries/ZZ-001")

    assert foreign.status_code == never.status_code == 404
    assert foreign.json()["nearest"] == never.json()["nearest"]
    assert set(foreign.json()) == set(never.json())
    assert foreign.json()["error"]["code"] == never.json()["error"]["code"]
    assert "zeppelin" not in foreign.content.decode().lower()
    assert foreign.content.replace(b"BE-001", b"ZZ-001") == never.content


def test_the_markdown_mirror_has_the_entry(client: Any, alpha: Namespace) -> None:
    response = client.get("/t/alpha/api/entries/AL-001.md")
    text = response.content.decode()

    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert text.startswith("# AL-001 Alpha is a test namespace")
    assert "Alpha ships every Tuesday." in text
    assert client.get("/t/alpha/entries/AL-001.md").content == response.content


def test_the_entry_page_shows_the_entry_for_people(client: Any, alpha: Namespace) -> None:
    page = client.get("/t/alpha/entries/AL-201").content.decode()

    assert '<h1><span class="id">AL-201</span> Token budget discipline</h1>' in page
    assert 'href="AL-001"' in page  # its link, relative so it works under /t/alpha/ too


def test_retiring_an_entry_drops_it_from_other_entries_links(client: Any, alpha: Namespace) -> None:
    linking = Entry.objects.get(namespace=alpha, public_id="AL-201").live_version
    assert linking is not None and linking.links == ["AL-001"]
    entry = Entry.objects.get(namespace=alpha, public_id="AL-001")
    entry_retire(entry=entry, actor=None, reason="Folded into AL-201.", replaced_by="AL-201", check_permission=False)
    release_build(namespace_id=alpha.pk, now=BUILT_AT)

    after = {e["id"]: e["links"] for e in client.get("/t/alpha/context.json").json()["entries"]}
    assert after["AL-201"] == []
    assert client.get("/t/alpha/api/entries/AL-201").json()["links"] == []
    assert "AL-001" not in client.get("/t/alpha/api/entries/AL-201.md").content.decode()


def test_a_short_mistyped_id_gets_the_nearest_by_its_number(client: Any, alpha: Namespace) -> None:
    """AL-2 names number 2 (QA: an ID of fewer than three digits got the namespace's first three IDs)."""
    response = client.get("/t/alpha/api/entries/AL-2")

    assert response.status_code == 404
    assert response.json()["nearest"] == ["AL-002", "AL-001", "AL-201"]


def test_a_repeated_version_is_refused_not_the_last_one_taken(client: Any, alpha: Namespace) -> None:
    response = client.get("/t/alpha/api/entries/AL-001?version=1&version=2")

    assert response.status_code == 400
    assert (response.json()["error"]["code"], response.json()["error"]["param"]) == ("repeated_parameter", "version")
