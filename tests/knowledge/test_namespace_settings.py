"""A namespace's settings, hosts and members: changed by its own admins only, every change audited."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from knowledge.errors import NotAllowedError
from knowledge.models import AuditRecord, Membership, Namespace, NamespaceHost, Role
from knowledge.services.memberships import membership_add, membership_change, membership_remove
from knowledge.services.namespace_settings import namespace_update
from tests.factories import UserFactory, membership
from tests.knowledge.adminforms import FormData, admin_form, as_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def keeper(ns_a: Namespace) -> Any:
    """The namespace admin of alpha."""
    return membership(UserFactory(username="kim"), ns_a, Role.ADMIN)


@pytest.fixture
def root(db: Any) -> Any:
    return UserFactory(username="root", is_superuser=True)


def _namespace_page(ns: Namespace) -> str:
    return reverse("admin:knowledge_namespace_change", args=[ns.pk])


def _row(data: FormData, prefix: str, pk: int) -> str:
    """The form prefix ("memberships-2") of the inline row holding object pk."""
    for key, value in data.items():
        if key.startswith(prefix) and key.endswith("-id") and value == [str(pk)]:
            return key.removesuffix("-id")
    raise AssertionError(f"no {prefix} row for {pk}")


def _add_row(data: FormData, prefix: str, **fields: str) -> None:
    total = int(data[f"{prefix}-TOTAL_FORMS"][0])
    for name, value in fields.items():
        data[f"{prefix}-{total}-{name}"] = [value]
    data[f"{prefix}-TOTAL_FORMS"] = [str(total + 1)]


def test_a_namespace_admin_opens_up_their_namespace_and_each_field_is_audited(
    ns_a: Namespace, keeper: Any, reviewer: Any
) -> None:
    ns_a.is_public, ns_a.rate_limit = False, "60/min"
    ns_a.save(update_fields=["is_public", "rate_limit"])
    client = as_user(keeper)
    data = admin_form(client, _namespace_page(ns_a))
    data.update(is_public=["on"], allow_self_approval=["on"], rate_limit=["0"], base_url=["https://alpha.example.org"])

    response = client.post(_namespace_page(ns_a), data)

    assert response.status_code == 302
    ns_a.refresh_from_db()
    assert (ns_a.is_public, ns_a.allow_self_approval, ns_a.rate_limit) == (True, True, "0")
    trail = {
        r.field: (r.actor, r.old_value, r.new_value) for r in AuditRecord.objects.filter(action="namespace-setting")
    }
    assert trail == {
        "is_public": (keeper, False, True),
        "allow_self_approval": (keeper, False, True),
        "rate_limit": (keeper, "60/min", "0"),
        "base_url": (keeper, "https://alpha.example.com", "https://alpha.example.org"),
    }


def test_the_service_refuses_settings_from_an_admin_of_another_namespace(
    ns_a: Namespace, ns_b: Namespace, editor: Any
) -> None:
    membership(editor, ns_b, Role.ADMIN)

    with pytest.raises(NotAllowedError, match="not a namespace admin of the namespace “alpha”"):
        namespace_update(namespace=ns_a, actor=editor, changes={"is_public": False})


def test_host_names_change_through_the_namespace_page_and_are_audited(ns_a: Namespace, keeper: Any) -> None:
    old = NamespaceHost.objects.create(namespace=ns_a, host="old.alpha.example")
    client = as_user(keeper)
    data = admin_form(client, _namespace_page(ns_a))
    data[_row(data, "hosts-", old.pk) + "-DELETE"] = ["on"]
    _add_row(data, "hosts", host="Docs.Alpha.Example")

    assert client.post(_namespace_page(ns_a), data).status_code == 302

    assert list(ns_a.hosts.values_list("host", flat=True)) == ["docs.alpha.example"]
    trail = AuditRecord.objects.filter(field="hosts").order_by("id")
    assert [(r.action, r.old_value, r.new_value, r.actor) for r in trail] == [
        ("namespace-host-remove", "old.alpha.example", None, keeper),
        ("namespace-host-add", None, "docs.alpha.example", keeper),
    ]


def test_removing_the_only_reviewer_is_refused_with_a_reason(
    ns_a: Namespace, keeper: Any, reviewer: Any, root: Any
) -> None:
    Membership.objects.filter(user=keeper).update(role=Role.EDITOR)  # now rita alone can review
    rita = Membership.objects.get(user=reviewer)
    client = as_user(root)

    deleted = client.post(reverse("admin:knowledge_membership_delete", args=[rita.pk]), {"post": "yes"}, follow=True)
    data = admin_form(client, _namespace_page(ns_a))
    data[_row(data, "memberships-", rita.pk) + "-DELETE"] = ["on"]
    inline = client.post(_namespace_page(ns_a), data)

    assert "“rita” is the last person who can review in “alpha”" in deleted.text
    assert inline.status_code == 200
    assert "Keep at least one reviewer or namespace admin" in inline.text
    with pytest.raises(NotAllowedError, match="last person who can review"):
        membership_change(membership=rita, role=Role.EDITOR, actor=root)
    assert Membership.objects.filter(pk=rita.pk, role=Role.REVIEWER).exists()


def test_a_hand_over_adds_the_new_reviewer_before_removing_the_old_one(
    ns_a: Namespace, keeper: Any, reviewer: Any, root: Any
) -> None:
    UserFactory(username="rex")
    Membership.objects.filter(user=keeper).update(role=Role.EDITOR)
    client = as_user(root)
    rita = Membership.objects.get(user=reviewer)
    data = admin_form(client, _namespace_page(ns_a))
    data[_row(data, "memberships-", rita.pk) + "-DELETE"] = ["on"]
    _add_row(data, "memberships", username="rex", role=Role.REVIEWER)

    assert client.post(_namespace_page(ns_a), data).status_code == 302

    assert list(
        Membership.objects.filter(namespace=ns_a, role=Role.REVIEWER).values_list("user__username", flat=True)
    ) == ["rex"]
    trail = AuditRecord.objects.filter(field="role").order_by("id")
    assert [(r.action, r.old_value, r.new_value) for r in trail] == [
        ("membership-add", None, {"user": "rex", "role": "reviewer"}),
        ("membership-remove", {"user": "rita", "role": "reviewer"}, None),
    ]


def test_nobody_gives_themselves_a_role(ns_a: Namespace, keeper: Any) -> None:
    with pytest.raises(NotAllowedError, match="cannot give or change your own roles"):
        membership_add(namespace=ns_a, user=keeper, role=Role.REVIEWER, actor=keeper)
    with pytest.raises(NotAllowedError, match="cannot give or change your own roles"):
        membership_change(membership=Membership.objects.get(user=keeper), role=Role.EDITOR, actor=keeper)


def test_memberships_are_granted_only_by_admins_of_that_namespace(
    ns_a: Namespace, ns_b: Namespace, editor: Any, outsider: Any
) -> None:
    admin_of_beta = membership(UserFactory(username="bo"), ns_b, Role.ADMIN)
    membership(admin_of_beta, ns_a, Role.EDITOR)

    with pytest.raises(NotAllowedError, match="not a namespace admin"):
        membership_add(namespace=ns_a, user=outsider, role=Role.ADMIN, actor=admin_of_beta)
    with pytest.raises(NotAllowedError, match="not a namespace admin"):
        membership_remove(membership=Membership.objects.get(user=editor), actor=admin_of_beta)
    response = as_user(admin_of_beta).post(
        reverse("admin:knowledge_membership_add"), {"username": "bo", "namespace": ns_a.pk, "role": Role.ADMIN}
    )
    assert response.status_code == 200  # the form refuses: alpha is not among the choices
    assert "Select a valid choice" in response.text
    assert not Membership.objects.filter(user=admin_of_beta, namespace=ns_a, role=Role.ADMIN).exists()


def test_only_superusers_create_namespaces_and_the_creation_is_audited(keeper: Any, root: Any) -> None:
    add = reverse("admin:knowledge_namespace_add")
    assert as_user(keeper).get(add).status_code == 403
    client = as_user(root)
    data = admin_form(client, add)
    data.update(
        slug=["gamma"],
        name=["Gamma"],
        prefix=["GA"],
        title=["Gamma"],
        summary=["Gamma facts."],
        base_url=["https://g.example"],
    )
    _add_row(data, "memberships", username="kim", role=Role.REVIEWER)

    response = client.post(add, data)

    assert response.status_code == 302, response.text[-2000:]
    gamma = Namespace.objects.get(slug="gamma")
    assert Membership.objects.filter(namespace=gamma, user=keeper, role=Role.REVIEWER).exists()
    assert AuditRecord.objects.filter(namespace=gamma, action="namespace-create", actor=root).exists()


def test_members_of_a_namespace_see_its_settings_read_only_and_not_its_people(
    ns_a: Namespace, editor: Any, reviewer: Any, keeper: Any
) -> None:
    NamespaceHost.objects.create(namespace=ns_a, host="alpha.example.org")

    page = as_user(editor).get(_namespace_page(ns_a)).text
    admin_page = as_user(keeper).get(_namespace_page(ns_a)).text

    assert 'name="_save"' not in page
    assert "alpha.example.org" in page  # hosts are public routing, shown read-only
    assert 'name="hosts-0-host"' not in page
    assert "rita" not in page and "memberships-group" not in page
    assert 'name="hosts-0-host"' in admin_page and "memberships-group" in admin_page
