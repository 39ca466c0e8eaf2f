"""Findings of the admin QA pass: secrets never in a message cookie, publish times checked, members added
only from one's own tenants, and bulk actions that say what they skipped."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from knowledge.errors import SELF_APPROVAL
from knowledge.models import Category, EntryVersion, Membership, Namespace, Role, VersionState, WebhookEndpoint
from knowledge.services.entries import entry_create
from knowledge.services.versions import version_submit
from tests.configure import configure
from tests.factories import UserFactory, content, membership
from tests.knowledge.adminforms import admin_form, as_user

pytestmark = pytest.mark.django_db

SECRET = re.compile(r"whsec_[A-Za-z0-9+/=_-]{20,}")


@pytest.fixture
def keeper(ns_a: Namespace) -> Any:
    """The namespace admin of alpha."""
    return membership(UserFactory(username="kim"), ns_a, Role.ADMIN)


def _secret_shown_once(client: Client, response: Any, endpoint: WebhookEndpoint) -> None:
    endpoint.refresh_from_db()
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert endpoint.secret in SECRET.findall(response.text)
    assert endpoint.secret not in client.cookies.output()
    assert endpoint.secret not in str(dict(client.session))
    assert endpoint.secret not in client.get(reverse("admin:knowledge_webhookendpoint_changelist")).text


def test_a_rotated_webhook_secret_is_shown_once_and_never_in_a_cookie(ns_a: Namespace, keeper: Any) -> None:
    endpoint = WebhookEndpoint.objects.create(namespace=ns_a, url="https://alpha.example.org/hook", secret="whsec_eA==")
    client = as_user(keeper)

    response = client.post(
        reverse("admin:knowledge_webhookendpoint_changelist"),
        {"action": "rotate_secret", "_selected_action": [endpoint.pk]},
    )

    _secret_shown_once(client, response, endpoint)
    assert endpoint.secret != "whsec_eA=="


def test_a_new_webhook_secret_is_shown_once_and_never_in_a_cookie(ns_a: Namespace, keeper: Any, settings: Any) -> None:
    configure(settings, webhook_allow_private=True)
    client = as_user(keeper)

    response = client.post(
        reverse("admin:knowledge_webhookendpoint_add"),
        {"namespace": ns_a.pk, "url": "https://alpha.example.org/hook", "description": "ci"},
    )

    _secret_shown_once(client, response, WebhookEndpoint.objects.get())


@pytest.fixture
def in_review(ns_a: Namespace, fact: Category, editor: Any) -> EntryVersion:
    draft = entry_create(namespace=ns_a, category=fact, content=content(title="Budgets"), actor=editor)
    return version_submit(version=draft, actor=editor)


@pytest.mark.parametrize("publish_at", ["garbage", "99999-12-31T23:59", "an hour ago"])
def test_an_invalid_or_past_publish_time_is_refused_naming_the_field(
    in_review: EntryVersion, reviewer: Any, publish_at: str
) -> None:
    if publish_at == "an hour ago":  # the management API's limit is five minutes in the past
        publish_at = (timezone.localtime() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    approve = reverse("admin:knowledge_entryversion_transition", args=[in_review.pk, "approve"])

    response = as_user(reviewer).post(approve, {"note": "", "publish_at": publish_at}, follow=True)

    assert "Publish at" in response.text
    assert "approve done" not in response.text
    in_review.refresh_from_db()
    assert (in_review.state, in_review.publish_at) == (VersionState.IN_REVIEW, None)


def test_a_publish_time_in_the_future_schedules_the_go_live(in_review: EntryVersion, reviewer: Any) -> None:
    when = timezone.localtime() + timedelta(days=1)
    approve = reverse("admin:knowledge_entryversion_transition", args=[in_review.pk, "approve"])

    response = as_user(reviewer).post(approve, {"publish_at": when.strftime("%Y-%m-%dT%H:%M")}, follow=True)

    assert "approve done" in response.text
    in_review.refresh_from_db()
    assert in_review.state == VersionState.APPROVED
    assert in_review.publish_at == when.replace(second=0, microsecond=0)


def _add_member(client: Client, username: str, namespace: Namespace) -> Any:
    url = reverse("admin:knowledge_membership_add")
    form = admin_form(client, url)
    data = {**form, "username": [username], "namespace": [str(namespace.pk)], "role": [Role.EDITOR]}
    return client.post(url, data)


def test_a_namespace_admin_adds_only_people_of_namespaces_they_administer(
    ns_a: Namespace, ns_b: Namespace, keeper: Any, outsider: Any
) -> None:
    UserFactory(username="sam", is_superuser=True)
    UserFactory(username="loner")  # an account nobody gave a role yet: the superuser places it
    colleague = membership(UserFactory(username="cole"), ns_a, Role.REVIEWER)
    client = as_user(keeper)

    answers = {}
    for username in ("sam", "otto", "loner", "no-such-person"):
        response = _add_member(client, username, ns_a)
        assert response.status_code == 200
        errors = response.context["adminform"].form.errors["username"]
        answers[username] = tuple(error.replace(username, "…") for error in errors)

    assert len(set(answers.values())) == 1  # the same answer as an unknown name: existence is not revealed
    assert not Membership.objects.filter(user__username__in=["sam", "otto", "loner"], namespace=ns_a).exists()
    assert _add_member(client, "cole", ns_a).status_code == 302
    assert Membership.objects.filter(user=colleague, namespace=ns_a, role=Role.EDITOR).exists()


def test_a_superuser_adds_anyone(ns_a: Namespace, outsider: Any) -> None:
    root = UserFactory(username="root", is_superuser=True)

    assert _add_member(as_user(root), "otto", ns_a).status_code == 302

    assert Membership.objects.filter(user=outsider, namespace=ns_a, role=Role.EDITOR).exists()


def test_bulk_approve_in_the_queue_says_why_ones_own_version_is_skipped(
    ns_a: Namespace, fact: Category, reviewer: Any
) -> None:
    membership(reviewer, ns_a, Role.EDITOR)
    draft = entry_create(namespace=ns_a, category=fact, content=content(title="Mine"), actor=reviewer)
    own = version_submit(version=draft, actor=reviewer)

    response = as_user(reviewer).post(
        reverse("admin:knowledge_reviewitem_changelist"),
        {"action": "bulk_approve", "_selected_action": [own.pk]},
        follow=True,
    )

    assert SELF_APPROVAL.split(",")[0] in response.text
    assert EntryVersion.objects.get(pk=own.pk).state == VersionState.IN_REVIEW


@pytest.mark.parametrize("model", ["reviewitem", "entryversion"])
def test_a_forged_action_on_another_tenants_ids_says_they_were_skipped(
    ns_b: Namespace, reviewer: Any, outsider: Any, model: str
) -> None:
    draft = entry_create(
        namespace=ns_b, category=ns_b.categories.get(slug="fact"), content=content(title="Theirs"), actor=outsider
    )
    theirs = version_submit(version=draft, actor=outsider)

    response = as_user(reviewer).post(
        reverse(f"admin:knowledge_{model}_changelist"),
        {"action": "bulk_approve", "_selected_action": [theirs.pk, 987654]},
        follow=True,
    )

    assert "Skipped 2 selected" in response.text
    assert "beta" not in response.text
    assert EntryVersion.objects.get(pk=theirs.pk).state == VersionState.IN_REVIEW
