"""Issue 9: a Content-Security-Policy on every HTML page, whose hashes cover every inline block the pages carry."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from evergreen_site.csp import content_security_policy, inline_hash
from knowledge.models import EntryVersion, Namespace
from knowledge.services.entries import entry_create
from tests.factories import UserFactory, content
from tests.servingfixtures import clean_serving_state, demo, no_rate_limit

__all__ = ["clean_serving_state", "demo", "no_rate_limit"]

pytestmark = pytest.mark.django_db

INLINE = re.compile(r"<(script|style)(\s[^>]*)?>(.*?)</\1>", re.S)


def directives(response: Any) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in policy.split("; ")}


def inline_blocks(html: str) -> list[tuple[str, str]]:
    """(script|style, text) of every inline block a browser would run or apply (JSON-LD is data, not script)."""
    found = []
    for tag, attributes, text in INLINE.findall(html):
        if "src=" in attributes or "application/ld+json" in attributes:
            continue
        found.append((tag, text))
    return found


def assert_policy_covers(response: Any) -> None:
    assert response.status_code == 200
    policy = directives(response)
    assert policy["img-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    for tag, text in inline_blocks(response.content.decode()):
        assert inline_hash(text) in policy[f"{tag}-src"], (tag, text[:80])


@pytest.mark.parametrize("path", ["/", "/t/evergreen/", "/entries/EG-202", "/entries/EG-999", "/api/docs/"])
def test_public_pages_carry_the_policy_and_every_inline_block_is_hashed(
    client: Client, demo: Namespace, no_rate_limit: None, path: str
) -> None:
    response = client.get(path)
    if path == "/entries/EG-999":
        assert response.status_code == 404
        response.status_code = 200  # a missing entry still answers an HTML page, with the same policy
    assert_policy_covers(response)


def test_the_index_page_has_its_inline_playground_and_styles(client: Client, demo: Namespace) -> None:
    kinds = [tag for tag, _ in inline_blocks(client.get("/").content.decode())]

    assert kinds == ["style", "script"]


def test_docs_pages_carry_the_policy(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    slug = demo.doc_pages.values_list("slug", flat=True).first()

    assert_policy_covers(client.get(f"/docs/{slug}"))


def test_admin_pages_carry_the_policy(client: Client, demo: Namespace) -> None:
    admin: Any = UserFactory(username="root", is_staff=True, is_superuser=True)
    draft: EntryVersion = entry_create(
        namespace=demo, category=demo.categories.get(slug="fact"), content=content(), actor=admin
    )

    assert_policy_covers(client.get("/admin/login/"))
    client.force_login(admin)
    for path in ("/admin/", f"/admin/knowledge/entryversion/{draft.pk}/change/", "/admin/knowledge/entry/"):
        assert_policy_covers(client.get(path))


def test_json_and_text_answers_carry_no_policy(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    for path in ("/api/context", "/llms.txt", "/index.html.md"):
        assert "Content-Security-Policy" not in client.get(path)


def test_the_policy_is_one_fixed_string_per_process() -> None:
    assert content_security_policy() is content_security_policy()
    assert "script-src 'self' 'sha256-" in content_security_policy()
