"""Theme routing (issue 16 §3), without Django: what it does, and the measurement that keeps it off."""

from __future__ import annotations

from bench.theme_routing import measure
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.theme_routing import RoutingTheme, ThemeRouter, routed_search
from tests.retrieval.helpers import make_document

DOCUMENTS = [
    make_document("EG-001", "Database migrations", summary="Reversible SQL migrations.", body="Migrations."),
    make_document("EG-002", "Index maintenance", summary="Rebuild database indexes.", body="Indexes."),
    make_document("EG-003", "Support hours", summary="Support answers on weekdays.", body="Support."),
    make_document("EG-004", "Refund policy", summary="Refunds within 30 days.", body="Refunds."),
]
THEMES = [
    RoutingTheme("database", "Database", "Schemas, migrations and indexes.", (0, 1)),
    RoutingTheme("customers", "Customers", "Support and money matters.", (2, 3)),
]


def test_a_topic_is_ranked_only_inside_its_best_theme() -> None:
    index = SearchIndex.compile(DOCUMENTS)
    router = ThemeRouter(THEMES, DOCUMENTS, top=1)

    assert [t.slug for t in router.routed("database migrations")] == ["database"]
    found = [DOCUMENTS[hit.position].id for hit in routed_search(index, router, "database refunds")]
    assert set(found) <= {"EG-001", "EG-002"}  # EG-004 matches "refunds" but lies outside the routed theme


def test_a_topic_no_theme_shares_a_word_with_is_ranked_plainly() -> None:
    index = SearchIndex.compile(DOCUMENTS)
    router = ThemeRouter(THEMES, DOCUMENTS)

    assert router.exclude("zeppelin") is None
    assert [h.position for h in routed_search(index, router, "zeppelin")] == [
        h.position for h in index.search("zeppelin")
    ]


def test_routing_stays_off_because_it_hurts_on_the_development_split() -> None:
    results = measure()

    assert results["questions"]["dev"] == 52  # the covered dev questions; the test split is never read
    assert results["routed to 2 themes"]["nDCG@10"] < results["plain"]["nDCG@10"]
