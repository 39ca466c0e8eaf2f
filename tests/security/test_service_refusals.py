"""Issue 9: a write a service refuses for who the person is becomes a security event, whatever path called it."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from knowledge.errors import NotAllowedError
from knowledge.models import Category, Membership, Namespace, Role
from knowledge.security_events import PERMISSION_DENIED, repeats
from knowledge.services.entries import entry_create
from knowledge.services.memberships import membership_add, membership_remove
from knowledge.services.namespace_settings import namespace_update
from knowledge.services.versions import version_approve, version_submit
from tests.factories import UserFactory, content, membership
from tests.knowledge.adminforms import admin_form, as_user
from tests.security.events import security_records

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    repeats.clear()
    caplog.set_level("WARNING", logger="evergreen.security")


def _only(caplog: pytest.LogCaptureFixture) -> dict[str, Any]:
    records = security_records(caplog, PERMISSION_DENIED)
    assert len(records) == 1, records
    return records[0]


def test_a_missing_role_is_logged_with_the_person_and_namespace(
    ns_a: Namespace, editor: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(NotAllowedError):
        namespace_update(namespace=ns_a, actor=editor, changes={"is_public": False})
    record = _only(caplog)
    assert (record["reason"], record["namespace"], record["role"]) == ("missing_role", "alpha", Role.ADMIN)
    assert record["user_id"] == editor.pk and record["source"] == "service"


def test_a_four_eyes_refusal_is_logged(ns_a: Namespace, fact: Category, caplog: pytest.LogCaptureFixture) -> None:
    both = membership(UserFactory(username="bo"), ns_a, Role.EDITOR, Role.REVIEWER)
    version = version_submit(
        version=entry_create(namespace=ns_a, category=fact, content=content(), actor=both), actor=both
    )
    with pytest.raises(NotAllowedError):
        version_approve(version=version, actor=both)
    assert _only(caplog)["reason"] == "four_eyes"


def test_granting_oneself_a_role_and_removing_the_last_reviewer_are_logged(
    ns_a: Namespace, reviewer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    chief = membership(UserFactory(username="chief"), ns_a, Role.ADMIN)
    with pytest.raises(NotAllowedError):
        membership_add(namespace=ns_a, user=chief, role=Role.EDITOR, actor=chief)
    Membership.objects.filter(user=chief).delete()  # leave rita as the only one who can review
    root: Any = UserFactory(username="root", is_superuser=True)
    with pytest.raises(NotAllowedError):
        membership_remove(membership=Membership.objects.get(user=reviewer), actor=root)
    reasons = [record["reason"] for record in security_records(caplog, PERMISSION_DENIED)]
    assert reasons == ["self_grant", "last_reviewer"]


def test_adding_a_member_does_not_say_whether_a_username_exists(ns_a: Namespace, ns_b: Namespace) -> None:
    chief = membership(UserFactory(username="chief"), ns_a, Role.ADMIN)
    UserFactory(username="sleeper", is_active=False)
    membership(UserFactory(username="rival"), ns_b, Role.EDITOR)
    browser = as_user(chief)
    url = reverse("admin:knowledge_membership_add")
    form = admin_form(browser, url)
    answers = {}
    for username in ("no-such-person", "sleeper", "evergreen-system"):
        response = browser.post(url, {**form, "username": [username], "namespace": [str(ns_a.pk)], "role": ["editor"]})
        assert response.status_code == 200
        errors = response.context["adminform"].form.errors["username"]
        answers[username] = tuple(error.replace(username, "…") for error in errors)
    assert len(set(answers.values())) == 1
    assert not Membership.objects.filter(namespace=ns_a, user__username__in=list(answers)).exists()
