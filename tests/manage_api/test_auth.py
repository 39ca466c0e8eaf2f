"""Tokens and sessions: who is let in, with which error when not, and what a token records."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from knowledge.errors import NotAllowedError
from knowledge.models import AuditRecord, NamespaceHost, PersonalToken, TokenScope
from knowledge.models.namespace import api_key_digest
from knowledge.services.api_keys import api_key_create
from knowledge.services.personal_tokens import personal_token_create, personal_token_revoke
from tests.manage_api.conftest import Caller
from tests.manage_api.routes import BASE, ROUTES

pytestmark = pytest.mark.django_db
URL = "/t/alpha/api/manage/entries/"


def error_of(response: Any) -> dict[str, Any]:
    return response.json()["error"]


def test_without_credentials_the_answer_is_401_with_a_challenge(world: Any) -> None:
    response = Client().get(URL)
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(
    ("token", "code"),
    [("egp_not-a-real-token", "invalid_token"), ("something else", "invalid_token")],
)
def test_unknown_tokens_are_401(world: Any, token: str, code: str) -> None:
    response = Client(HTTP_AUTHORIZATION=f"Bearer {token}").get(URL)
    assert response.status_code == 401
    assert error_of(response)["code"] == code


def test_a_namespace_api_key_is_not_a_personal_token(world: Any) -> None:
    _, raw = api_key_create(namespace=world.alpha, name="agent", actor=None, check_permission=False)
    response = Client(HTTP_AUTHORIZATION=f"Bearer {raw}").get(URL)
    assert response.status_code == 401
    assert "personal API token" in error_of(response)["message"]


def test_expired_and_revoked_tokens_say_so(world: Any) -> None:
    caller = world.callers["editor_a"]
    token = PersonalToken.objects.get(digest=api_key_digest(caller.token))
    PersonalToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert error_of(caller.get(URL))["code"] == "token_expired"
    PersonalToken.objects.filter(pk=token.pk).update(expires_at=None)
    assert caller.get(URL).status_code == 200
    personal_token_revoke(token=token, actor=caller.user)
    response = caller.get(URL)
    assert response.status_code == 401
    assert error_of(response)["code"] == "token_revoked"
    assert AuditRecord.objects.filter(namespace=world.alpha, action="token-revoke", actor=caller.user).exists()


def test_an_inactive_owner_locks_their_tokens(world: Any) -> None:
    caller = world.callers["editor_a"]
    caller.user.is_active = False
    caller.user.save(update_fields=["is_active"])
    assert caller.get(URL).status_code == 401


def test_tokens_are_stored_hashed_and_record_their_last_use(world: Any) -> None:
    caller = world.callers["reviewer_a"]
    token = PersonalToken.objects.get(user=caller.user)
    assert token.digest == api_key_digest(caller.token)
    assert caller.token not in str(PersonalToken.objects.filter(pk=token.pk).values_list())
    assert token.last_used_at is None
    assert caller.get(URL).status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_a_token_names_only_namespaces_its_owner_belongs_to(world: Any) -> None:
    edna = world.callers["editor_a"].user
    with pytest.raises(NotAllowedError, match="beta"):
        personal_token_create(user=edna, name="x", namespaces=[world.alpha, world.beta], scope="read", expires_at=None)


def test_a_token_reaches_only_the_namespaces_it_names(world: Any) -> None:
    """rufus holds roles in beta; give him alpha too, but his token names only beta."""
    rufus = world.callers["reviewer_b"]
    rufus.user.memberships.create(namespace=world.alpha, role="editor")
    assert rufus.get(URL).status_code == 404
    _, raw = personal_token_create(
        user=rufus.user, name="both", namespaces=[world.alpha, world.beta], scope=TokenScope.READ, expires_at=None
    )
    assert Caller("rufus both", rufus.user, raw).get(URL).status_code == 200


def test_only_the_owner_revokes_a_token(world: Any) -> None:
    token = PersonalToken.objects.filter(user=world.callers["editor_a"].user).first()
    assert token is not None
    with pytest.raises(NotAllowedError):
        personal_token_revoke(token=token, actor=world.callers["admin_a"].user)


def test_a_session_reads_and_needs_csrf_to_write(world: Any) -> None:
    edna = world.callers["editor_a"].user
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(edna)
    assert browser.get(URL).status_code == 200
    path = f"/t/alpha/api/manage/versions/{world.draft.pk}/submit/"
    refused = browser.post(path, {}, content_type="application/json")
    assert refused.status_code == 403
    assert error_of(refused)["code"] == "csrf_failed"
    browser.get("/admin/")  # the admin sets the CSRF cookie (its logout form)
    csrf = browser.cookies["csrftoken"].value
    accepted = browser.post(path, {}, content_type="application/json", HTTP_X_CSRFTOKEN=csrf)
    assert accepted.status_code == 200, accepted.content
    assert accepted.json()["state"] == "in_review"


def test_the_namespace_of_a_host_is_served_at_the_root(world: Any, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["*"]
    NamespaceHost.objects.create(namespace=world.alpha, host="alpha.example.org")
    caller = world.callers["editor_a"]
    response = caller.client.get("/api/manage/", HTTP_HOST="alpha.example.org")
    assert response.status_code == 200
    assert response.json()["namespace"] == "alpha"
    assert caller.client.get("/api/manage/entries/", HTTP_HOST="beta.example.org").status_code == 404


def test_the_rate_limit_counts_per_token_in_redis(world: Any, settings: Any) -> None:
    from tests.configure import configure

    configure(settings, manage_rate_limit="2/min")
    caller = world.callers["admin_a"]
    assert caller.get(URL).status_code == 200
    assert caller.get(URL).status_code == 200
    refused = caller.get(URL)
    assert refused.status_code == 429
    assert error_of(refused)["code"] == "rate_limited"
    assert int(refused["Retry-After"]) >= 1
    assert world.callers["reviewer_a"].get(URL).status_code == 200  # another token has its own window


def test_refusals_count_against_the_limit_by_address(world: Any, settings: Any) -> None:
    from tests.configure import configure

    configure(settings, manage_rate_limit="2/min")
    guesser = Client(HTTP_AUTHORIZATION="Bearer egp_guess", REMOTE_ADDR="203.0.113.9")
    assert guesser.get(URL).status_code == 401
    assert guesser.get(URL).status_code == 401
    assert guesser.get(URL).status_code == 429


def test_a_signed_in_browser_gets_the_browsable_api(world: Any) -> None:
    browser = Client()
    browser.force_login(world.callers["editor_a"].user)
    page = browser.get(URL, HTTP_ACCEPT="text/html")
    assert page.status_code == 200
    assert page["Content-Type"].startswith("text/html")
    assert b"AL-000" in page.content
    assert browser.get(URL).json()["results"][0]["id"] == "AL-000"  # JSON stays the default
    admin = Client()
    admin.force_login(world.callers["admin_a"].user)
    for route in ROUTES:
        if route.method == "get":
            assert admin.get(BASE + route.path(world), HTTP_ACCEPT="text/html").status_code == 200, route.name
