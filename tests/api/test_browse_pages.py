"""The public entry list and metrics page: search and paging at any size, clear errors, a small index page."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from knowledge.models import EvaluationRun, Namespace
from knowledge.retrieval.contract.records import Tombstone
from knowledge.selectors.pages import INDEX_ROWS, RETIRED_LISTED, index_page_render
from knowledge.selectors.serving import release_loaded, serving_caches_clear
from knowledge.services.releases import release_build
from tests.servingfixtures import publish

pytestmark = pytest.mark.django_db
ROWS = re.compile(r'<td class="id"><a href="([^"]+)">')


def many_rows(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"AL-{n:03d}",
            "category": "fact" if n % 2 else "rule",
            "title": f"{'Glider' if n % 5 == 0 else 'Rotor'} report {n}",
            "body": f"Measurements of {'glider wings' if n % 5 == 0 else 'rotor blades'} in test {n}.",
            "updated": "2026-08-01",
        }
        for n in range(1, 121)
    ]


@pytest.fixture
def atlas(ns_a: Namespace) -> Namespace:
    return publish(ns_a, many_rows(120))


def ids(html: str) -> list[str]:
    return ROWS.findall(html)


def test_the_entry_list_pages_through_every_entry(client: Any, atlas: Namespace) -> None:
    first = client.get("/t/alpha/entries/").content.decode()
    third = client.get("/t/alpha/entries/", {"page": 3}).content.decode()

    assert ids(first)[:2] == ["AL-001", "AL-002"] and len(ids(first)) == 50
    assert ids(third) == [f"AL-{n:03d}" for n in range(101, 121)]
    assert 'rel="next" href="?page=2"' in first and "Page 1 of 3" in first
    assert 'rel="prev" href="?page=2"' in third and 'rel="next"' not in third


def test_a_search_keeps_its_words_in_the_pager_and_lists_only_matches(client: Any, atlas: Namespace) -> None:
    page = client.get("/t/alpha/entries/", {"q": "glider"}).content.decode()

    assert ids(page) and all(int(i.split("-")[1]) % 5 == 0 for i in ids(page))
    assert "Results for “glider”" in page
    assert 'value="glider"' in page


def test_a_category_link_from_the_index_lists_that_category(client: Any, atlas: Namespace) -> None:
    index = client.get("/t/alpha/").content.decode()
    assert 'href="entries/?category=rule"' in index

    page = client.get("/t/alpha/entries/", {"category": "rule"}).content.decode()
    assert ids(page) == [f"AL-{n:03d}" for n in range(2, 101, 2)]


@pytest.mark.parametrize(
    ("params", "status", "code"),
    [
        ({"page": "two"}, 400, "invalid_page"),
        ({"page": "0"}, 400, "invalid_page"),
        ({"page": "4"}, 404, "not_found"),
        ({"category": "nope"}, 400, "unknown_category"),
        ({"q": "x" * 501}, 400, "topic_too_long"),
    ],
)
def test_bad_list_parameters_get_a_clear_error(
    client: Any, atlas: Namespace, params: dict[str, str], status: int, code: str
) -> None:
    response = client.get("/t/alpha/entries/", params)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_the_entry_list_has_a_markdown_twin(client: Any, atlas: Namespace) -> None:
    response = client.get("/t/alpha/entries/", {"page": 2}, HTTP_ACCEPT="text/markdown")

    assert response["Content-Type"].startswith("text/markdown")
    text = response.content.decode()
    assert "51–100 of 120 · Page 2 of 3" in text and "[AL-051]" in text


def test_the_entry_list_never_shows_another_namespaces_entries(client: Any, atlas: Namespace, beta: Namespace) -> None:
    page = client.get("/t/beta/entries/", {"q": "rotor"}).content.decode()

    assert not any(i.startswith("AL-") for i in ids(page))


def test_the_index_page_stays_small_at_100000_entries(atlas: Namespace) -> None:
    """Rendered from a release of 100,000 entries and 5,000 retirements: one page of each, and links onward."""
    assert atlas.active_release_id is not None
    loaded = release_loaded(release_id=atlas.active_release_id, key="k", namespace_id=atlas.pk)
    model = loaded.snapshot.entries[0]
    entries = tuple(replace(model, id=f"AL-{n:06d}", title=f"Entry {n}") for n in range(100_000))
    tombstones = tuple(
        Tombstone(id=f"AL-9{n:05d}", title="Gone", retired_at=f"2026-01-{1 + n % 28:02d}", reason="old", replaced_by="")
        for n in range(5000)
    )
    snapshot = replace(loaded.snapshot, entries=entries, tombstones=tombstones)

    html = index_page_render(snapshot, loaded.stamp)

    assert len(html.encode()) < 40_000
    assert len(ids(html)) == INDEX_ROWS
    assert html.count("— old (") == RETIRED_LISTED
    assert "Browse all 100000 entries" in html


def test_the_metrics_page_draws_the_measurements_and_the_trend(client: Any, alpha: Namespace) -> None:
    first = alpha.active_release
    assert first is not None
    EvaluationRun.objects.create(namespace=alpha, release=first, metrics={"ndcg_at_10": 0.61}, results=[])
    publish(alpha, [{"id": "AL-300", "category": "fact", "title": "New", "body": "More.", "updated": "2026-08-02"}])
    second = Namespace.objects.get(pk=alpha.pk).active_release
    assert second is not None and second.pk != first.pk
    serving_caches_clear()

    page = client.get("/t/alpha/metrics.html").content.decode()

    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == 3
    assert (
        f"Release #{second.sequence} (v{second.knowledge_version}), the one served now, has not been evaluated" in page
    )
    assert f"#{first.sequence} v{first.knowledge_version}" in page and "0.610" in page
    assert 'href="metrics.json"' in page
    assert 'href="metrics.html"' in client.get("/t/alpha/").content.decode()


def test_the_metrics_page_shows_the_served_releases_evaluation(client: Any, alpha: Namespace) -> None:
    release = alpha.active_release
    assert release is not None
    EvaluationRun.objects.create(
        namespace=alpha, release=release, metrics={"ndcg_at_10": 0.75, "queries": 9}, results=[]
    )

    page = client.get("/t/alpha/metrics.html").content.decode()

    assert "the one served now, was evaluated" in page
    assert re.search(r"<th scope=\"row\">Questions</th><td class=\"num\">9</td>", page)


def test_rebuilding_the_same_inputs_keeps_the_index_page_bytes(client: Any, atlas: Namespace) -> None:
    before = client.get("/t/alpha/").content
    release_build(namespace_id=atlas.pk)
    serving_caches_clear()

    assert client.get("/t/alpha/").content == before
