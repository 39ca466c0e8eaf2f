"""Personal tokens in the admin: made for one's own namespaces, shown once, listed without the secret, revoked."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from knowledge.models import PersonalToken
from knowledge.models.namespace import api_key_digest

pytestmark = pytest.mark.django_db


def test_a_person_makes_sees_once_and_revokes_a_token(world: Any) -> None:
    rita = world.callers["reviewer_a"].user
    browser = Client()
    browser.force_login(rita)
    page = browser.get("/admin/tokens/")
    assert page.status_code == 200
    assert b"alpha" in page.content and b"beta" not in page.content  # only her namespaces are offered

    made = browser.post(
        "/admin/tokens/",
        {"name": "review bot", "namespaces": [world.alpha.pk], "scope": "reviewer", "expires_in_days": "30"},
    )
    assert made.status_code == 200
    assert "no-store" in made["Cache-Control"]
    token = PersonalToken.objects.get(user=rita, name="review bot")
    secret = made.context["secret"]
    assert secret.startswith("egp_") and token.digest == api_key_digest(secret)
    assert secret.encode() in made.content
    assert token.expires_at is not None

    again = browser.get("/admin/tokens/")
    assert secret.encode() not in again.content
    assert token.lookup.encode() in again.content

    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.get("/t/alpha/api/manage/").json()["roles"] == ["reviewer"]
    assert browser.post(f"/admin/tokens/{token.pk}/revoke/").status_code == 302
    assert api.get("/t/alpha/api/manage/").status_code == 401


def test_a_token_for_a_foreign_namespace_is_refused_and_others_tokens_are_not_revocable(world: Any) -> None:
    rita = world.callers["reviewer_a"].user
    browser = Client()
    browser.force_login(rita)
    refused = browser.post("/admin/tokens/", {"name": "x", "namespaces": [world.beta.pk], "scope": "read"})
    assert refused.status_code == 200
    assert not PersonalToken.objects.filter(user=rita, name="x").exists()
    foreign = PersonalToken.objects.filter(user=world.callers["editor_a"].user).first()
    assert foreign is not None
    assert browser.post(f"/admin/tokens/{foreign.pk}/revoke/").status_code == 404
    foreign.refresh_from_db()
    assert foreign.revoked_at is None
    assert Client().get("/admin/tokens/").status_code == 302  # to the login page
