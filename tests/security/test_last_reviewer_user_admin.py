"""The User admin keeps the membership rule: nobody deletes or deactivates a namespace's last reviewer.

Through the real admin as a superuser: a single delete, the bulk "delete selected" action and a
deactivation of the only reviewer are refused with the service's message and change nothing; deleting
someone who is not the last reviewer works and audits the memberships it takes away.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.test import Client

from knowledge.models import AuditRecord, Membership, Namespace, Role
from tests.factories import NamespaceFactory, UserFactory, membership

pytestmark = [pytest.mark.django_db]

User = get_user_model()
REFUSED = "is the last person who can review in “solo”"


@pytest.fixture
def solo() -> Namespace:
    return NamespaceFactory.create(slug="solo", prefix="SO", name="Solo")


@pytest.fixture
def solorev(solo: Namespace) -> Any:
    membership(UserFactory(username="ed1"), solo, Role.EDITOR)
    membership(UserFactory(username="ed2"), solo, Role.EDITOR)
    return membership(UserFactory(username="solorev"), solo, Role.REVIEWER)


@pytest.fixture
def root() -> Client:
    client = Client()
    superuser: Any = UserFactory(username="root", is_superuser=True)
    client.force_login(superuser)
    return client


def messages_of(response: Any) -> str:
    return " ".join(str(message) for message in response.context["messages"])


def still_there(user: Any, namespace: Namespace) -> None:
    user.refresh_from_db()
    assert user.is_active
    assert Membership.objects.filter(user=user, namespace=namespace, role=Role.REVIEWER).exists()
    assert not AuditRecord.objects.filter(action="membership-remove").exists()
    assert not LogEntry.objects.exists()


def test_single_delete_of_the_last_reviewer_is_refused(root: Client, solo: Namespace, solorev: Any) -> None:
    response = root.post(f"/admin/auth/user/{solorev.pk}/delete/", {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert REFUSED in messages_of(response)
    still_there(solorev, solo)


def test_bulk_delete_of_the_last_reviewer_is_refused(root: Client, solo: Namespace, solorev: Any) -> None:
    editor = User.objects.get(username="ed1")
    data = {"action": "delete_selected", "_selected_action": [solorev.pk, editor.pk], "post": "yes"}
    response = root.post("/admin/auth/user/", data, follow=True)
    assert response.status_code == 200
    assert REFUSED in messages_of(response)
    assert "Successfully deleted" not in messages_of(response)
    assert User.objects.filter(pk=editor.pk).exists()
    still_there(solorev, solo)


def test_bulk_delete_of_all_reviewers_together_is_refused(root: Client, solo: Namespace, solorev: Any) -> None:
    second = membership(UserFactory(username="rev2"), solo, Role.ADMIN)
    data = {"action": "delete_selected", "_selected_action": [solorev.pk, second.pk], "post": "yes"}
    response = root.post("/admin/auth/user/", data, follow=True)
    assert "is the last person who can review in “solo”" in messages_of(response)
    assert User.objects.filter(pk=second.pk).exists()
    still_there(solorev, solo)


def test_deactivating_the_last_reviewer_is_refused(root: Client, solo: Namespace, solorev: Any) -> None:
    data = {
        "username": solorev.username,
        "email": solorev.email,
        "first_name": "",
        "last_name": "",
        "is_staff": "on",
        # is_active left out: unticked
        "date_joined_0": solorev.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": solorev.date_joined.strftime("%H:%M:%S"),
        "last_login_0": "",
        "last_login_1": "",
    }
    response = root.post(f"/admin/auth/user/{solorev.pk}/change/", data, follow=True)
    assert response.status_code == 200
    assert REFUSED in messages_of(response)
    still_there(solorev, solo)
    # The same form with is_active ticked is accepted: the refusal is the rule, not a bad form.
    response = root.post(f"/admin/auth/user/{solorev.pk}/change/", {**data, "is_active": "on"}, follow=True)
    assert response.status_code == 200
    assert REFUSED not in messages_of(response)
    assert LogEntry.objects.count() == 1


def test_deleting_a_reviewer_who_is_not_the_last_works_and_is_audited(
    root: Client, solo: Namespace, solorev: Any, ns_b: Namespace
) -> None:
    leaving = membership(UserFactory(username="leaving"), solo, Role.REVIEWER, Role.EDITOR)
    membership(leaving, ns_b, Role.EDITOR)
    response = root.post(f"/admin/auth/user/{leaving.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not User.objects.filter(pk=leaving.pk).exists()
    assert not Membership.objects.filter(user_id=leaving.pk).exists()
    records = AuditRecord.objects.filter(action="membership-remove").order_by("namespace__slug", "old_value")
    assert [(r.namespace.slug, r.old_value, r.new_value, r.actor.username) for r in records] == [
        ("beta", {"user": "leaving", "role": "editor"}, None, "root"),
        ("solo", {"user": "leaving", "role": "editor"}, None, "root"),
        ("solo", {"user": "leaving", "role": "reviewer"}, None, "root"),
    ]


def test_bulk_delete_of_editors_works_and_is_audited(root: Client, solo: Namespace, solorev: Any) -> None:
    editors = list(User.objects.filter(username__in=["ed1", "ed2"]))
    data = {"action": "delete_selected", "_selected_action": [u.pk for u in editors], "post": "yes"}
    response = root.post("/admin/auth/user/", data, follow=True)
    assert "Successfully deleted 2" in messages_of(response)
    assert not User.objects.filter(username__in=["ed1", "ed2"]).exists()
    assert AuditRecord.objects.filter(action="membership-remove", namespace=solo).count() == 2
    still = User.objects.get(pk=solorev.pk)
    assert Membership.objects.filter(user=still, role=Role.REVIEWER).exists()
