"""A namespace above the sitemaps protocol's 50,000 URLs serves sitemap.xml as an index of /sitemaps/<n>.xml."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.retrieval.render import sitemap
from tests.servingfixtures import alpha_rows, publish

pytestmark = pytest.mark.django_db


def test_sitemap_xml_becomes_an_index_and_each_file_is_served(
    client: Any, ns_a: Namespace, monkeypatch: Any, no_rate_limit: None
) -> None:
    monkeypatch.setattr(sitemap, "SITEMAP_MAX_URLS", 5)  # alpha lists 13 URLs: three files
    publish(ns_a, alpha_rows())

    index = client.get("/t/alpha/sitemap.xml")
    parts = [client.get(f"/t/alpha/sitemaps/{n}.xml") for n in (1, 2, 3)]

    assert index.status_code == 200 and b"<sitemapindex" in index.content
    assert index.content.count(b"<sitemap>") == 3 and b"/sitemaps/3.xml</loc>" in index.content
    assert [part.status_code for part in parts] == [200, 200, 200]
    assert [part.content.count(b"<url>") for part in parts] == [5, 5, 3]
    assert parts[0]["Content-Type"].startswith("application/xml")
    assert client.get("/t/alpha/sitemaps/4.xml").status_code == 404
