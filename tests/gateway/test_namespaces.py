"""Namespaces: by host name, by /t/<namespace>/, the default; private ones need a key and otherwise do not exist."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace, NamespaceHost
from knowledge.selectors import serving
from knowledge.services.api_keys import api_key_create, api_key_revoke
from knowledge.services.releases import release_build
from tests.configure import configure
from tests.servingfixtures import BUILT_AT, publish

pytestmark = pytest.mark.django_db

ROUTES = [
    "",
    "index.html.md",
    "llms.txt",
    "llms-full.txt",
    "context.json",
    "sitemap.xml",
    "robots.txt",
    "ai.txt",
    "ai-policy.json",
    "metrics.json",
    "api/context",
    "api/context?topic=zeppelin",
    "api/context?topic=token%20budget",
    "api/entries/AL-001",
    "api/entries/BE-001",
    "api/entries/BE-001.md",
    "entries/BE-001",
    "entries/BE-001.md",
]


@pytest.fixture
def hosts(alpha: Namespace, beta: Namespace, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["alpha.example.com", "beta.example.com", "testserver"]
    NamespaceHost.objects.create(namespace=alpha, host="alpha.example.com")
    NamespaceHost.objects.create(namespace=beta, host="beta.example.com")


@pytest.fixture
def private_beta(beta: Namespace) -> Namespace:
    beta.is_public = False
    beta.save(update_fields=["is_public"])
    return beta


def test_the_host_name_selects_the_namespace(client: Any, hosts: None) -> None:
    alpha = client.get("/llms.txt", headers={"Host": "alpha.example.com"}).content.decode()
    beta = client.get("/llms.txt", headers={"Host": "beta.example.com:8443"}).content.decode()

    assert alpha.startswith("# Alpha knowledge")
    assert beta.startswith("# Beta knowledge")


def test_the_path_prefix_selects_the_namespace_on_any_host(client: Any, hosts: None) -> None:
    response = client.get("/t/beta/api/entries/BE-001", headers={"Host": "alpha.example.com"})

    assert response.status_code == 200
    assert response.json()["id"] == "BE-001"


def test_the_bare_host_serves_the_default_namespace(client: Any, alpha: Namespace, settings: Any) -> None:
    configure(settings, default_namespace="alpha")

    assert client.get("/api/entries/AL-001").status_code == 200


def test_an_unknown_namespace_is_a_404_on_every_route(client: Any, alpha: Namespace) -> None:
    for route in ROUTES:
        response = client.get("/t/nope/" + route)
        assert response.status_code == 404, route
        assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("route", ROUTES)
def test_a_private_namespace_without_a_key_answers_exactly_like_a_missing_one(
    client: Any, private_beta: Namespace, route: str
) -> None:
    hidden = client.get("/t/beta/" + route)
    missing = client.get("/t/gamma/" + route)
    wrong_key = client.get("/t/beta/" + route, headers={"Authorization": "Bearer egk_not-a-key"})

    assert hidden.status_code == missing.status_code == wrong_key.status_code == 404
    assert hidden.content == missing.content == wrong_key.content
    ignore = {"RateLimit", "X-Request-ID"}  # the remaining count differs per window key; the ID per request
    assert {k: v for k, v in hidden.items() if k not in ignore} == {k: v for k, v in missing.items() if k not in ignore}


def test_a_private_namespace_with_its_key_is_served_privately(client: Any, private_beta: Namespace) -> None:
    _, raw = api_key_create(namespace=private_beta, name="agent", actor=None, check_permission=False)
    response = client.get("/t/beta/api/context?topic=zeppelin", headers={"Authorization": f"Bearer {raw}"})

    assert response.status_code == 200
    assert response.json()["entries"][0]["id"] == "BE-001"
    assert response["Cache-Control"] == "private, max-age=900"
    assert "Authorization" in response["Vary"]
    not_modified = client.get(
        "/t/beta/api/context?topic=zeppelin",
        headers={"Authorization": f"Bearer {raw}", "If-None-Match": response["ETag"]},
    )
    assert not_modified.status_code == 304
    assert not_modified["Cache-Control"] == "private, max-age=900"


def test_a_key_of_another_namespace_or_a_revoked_key_does_not_open_it(
    client: Any, private_beta: Namespace, alpha: Namespace, monkeypatch: Any
) -> None:
    _, alpha_key = api_key_create(namespace=alpha, name="alpha agent", actor=None, check_permission=False)
    key, beta_key = api_key_create(namespace=private_beta, name="beta agent", actor=None, check_permission=False)
    monkeypatch.setattr(serving, "NAMESPACE_TTL_SECONDS", 0.0)

    assert client.get("/t/beta/llms.txt", headers={"Authorization": f"Bearer {alpha_key}"}).status_code == 404
    assert client.get("/t/beta/llms.txt", headers={"Authorization": f"Bearer {beta_key}"}).status_code == 200
    api_key_revoke(key=key, actor=None, check_permission=False)
    assert client.get("/t/beta/llms.txt", headers={"Authorization": f"Bearer {beta_key}"}).status_code == 404


@pytest.mark.parametrize("route", ROUTES)
def test_alpha_never_shows_betas_entries_through_any_route(client: Any, hosts: None, route: str) -> None:
    """The cross-namespace matrix: alpha by prefix and by host, beta's content never appears."""
    for response in (
        client.get("/t/alpha/" + route),
        client.get("/" + route, headers={"Host": "alpha.example.com"}),
    ):
        text = response.content.decode().lower().replace('"topic":"zeppelin"', "")  # the echo of the query
        assert "zeppelin" not in text, route
        assert "be-002" not in text and "beta token budget" not in text, route


@pytest.mark.parametrize("route", ROUTES)
def test_beta_never_shows_alphas_entries_through_any_route(client: Any, hosts: None, route: str) -> None:
    for response in (
        client.get("/t/beta/" + route.replace("AL-", "BE-")),
        client.get("/" + route, headers={"Host": "beta.example.com"}),
    ):
        text = response.content.decode().lower()
        assert "tuesday" not in text and "al-201" not in text and "alpha pricing" not in text, route


@pytest.mark.django_db(transaction=True)  # the new release loads in a thread of its own, on its own connection
def test_a_publish_becomes_visible_once_the_namespace_cache_expires(
    client: Any, alpha: Namespace, monkeypatch: Any
) -> None:
    # However slow the machine, the cached namespace stays fresh until the TTL is shortened below.
    monkeypatch.setattr(serving, "NAMESPACE_TTL_SECONDS", 3600.0)
    before = client.get("/t/alpha/context.json").json()
    publish(
        alpha, [{"id": "AL-003", "category": "fact", "title": "New", "body": "A new fact.", "updated": "2026-09-01"}]
    )

    # Within NAMESPACE_TTL_SECONDS the process may still serve the previous release…
    assert client.get("/t/alpha/context.json").json()["releaseId"] == before["releaseId"]
    # …and after it the new one, without any other signal, once this process has loaded it.
    monkeypatch.setattr(serving, "NAMESPACE_TTL_SECONDS", 0.0)
    serving._states.clear()
    client.get("/t/alpha/context.json")  # starts loading the new release in the background
    alpha.refresh_from_db()
    assert alpha.active_release is not None
    serving.release_switch_wait(key=serving.release_cache_key(alpha.active_release))
    after = client.get("/t/alpha/context.json").json()
    assert after["releaseId"] == before["releaseId"] + 1
    assert "AL-003" in [e["id"] for e in after["entries"]]


def test_a_namespace_without_a_release_is_not_found(client: Any, ns_a: Namespace) -> None:
    assert client.get("/t/alpha/llms.txt").status_code == 404
    release_build(namespace_id=ns_a.pk, now=BUILT_AT)
    serving.serving_caches_clear()
    assert client.get("/t/alpha/llms.txt").status_code == 200
