"""A base removed from a namespace's bases (issue 16 §1, seed §6 and §8): the IDs it served answer 410, not 404."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from knowledge.models import Namespace
from tests.factories import NamespaceFactory
from tests.knowledge.test_layers import COMPANY, PRODUCT, get, rebuild
from tests.mcp_bridge.http_calls import details, tool
from tests.servingfixtures import bases_declare, publish

pytestmark = pytest.mark.django_db

GONE = "No longer served in Product: company was removed from its base namespaces"


@pytest.fixture
def company(db: Any) -> Namespace:
    return publish(NamespaceFactory.create(slug="company", prefix="CO", name="Company"), COMPANY)


@pytest.fixture
def product(company: Namespace) -> Namespace:
    product = NamespaceFactory.create(slug="product", prefix="PR", name="Product")
    return publish(bases_declare(product, company), PRODUCT)


def drop_bases(namespace: Namespace) -> None:
    """Publish an empty list of bases and build the namespace's next release."""
    bases_declare(namespace)
    rebuild(namespace)


def test_a_base_entry_answers_410_once_the_base_is_removed_from_the_bases(product: Namespace) -> None:
    assert get("/t/product/api/entries/CO-102").status_code == 200

    drop_bases(product)

    gone = get("/t/product/api/entries/CO-102")
    assert gone.status_code == 410, gone.content
    assert gone.json()["id"] == "CO-102" and gone.json()["title"] == "Legacy status page"
    assert gone.json()["reason"] == GONE and gone.json()["replacedBy"] is None
    markdown = get("/t/product/api/entries/CO-102.md")
    assert markdown.status_code == 410 and GONE in markdown.text
    assert details(tool(Client(), "/t/product/mcp", "get_entry", {"id": "CO-102"}))["error"] == "gone"
    assert get("/t/product/api/entries/PR-201").status_code == 200  # its own entries are untouched
    assert get("/t/company/api/entries/CO-102").status_code == 200  # the base still serves it


def test_a_withdrawn_id_stays_gone_in_later_releases_until_the_base_is_added_back(
    product: Namespace, company: Namespace
) -> None:
    drop_bases(product)
    publish(product, [{**PRODUCT[1], "id": "PR-202", "title": "API handlers log"}])  # a later release

    assert product.releases.count() == 3
    assert get("/t/product/api/entries/CO-201").json()["reason"] == GONE

    bases_declare(product, company)
    rebuild(product)

    served = get("/t/product/api/entries/CO-201")
    assert served.status_code == 200 and served.json()["layer"] == "company"


def test_a_base_entry_the_dependant_never_served_is_still_not_found(product: Namespace, company: Namespace) -> None:
    drop_bases(product)
    publish(company, [{"id": "CO-103", "category": "fact", "title": "Status page", "body": "status.example.com"}])
    rebuild(product)

    assert get("/t/product/api/entries/CO-103").status_code == 404
    assert get("/t/product/api/entries/CO-102").status_code == 410


def test_other_namespaces_never_get_the_tombstones(product: Namespace, ns_b: Namespace) -> None:
    drop_bases(product)

    assert get("/t/beta/api/entries/CO-102").status_code == 404
