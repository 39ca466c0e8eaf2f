"""A base's internal and restricted entries reach a namespace built on it only through its own editors.

QA's attack: an editor of another tenant declared a public namespace as their base (any public
namespace may be a base), their reviewer approved, and their namespace admin's internal key then read
the base's internal entries through their own namespace. Now a link hands over a base's non-public
entries only when every writer of the list is an editor of the base, as a private base requires.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.test import Client

from knowledge.models import BuildRequest, Membership, Namespace, NamespaceBase, Role, TextKind
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.api_keys import api_key_create
from knowledge.services.memberships import membership_remove
from knowledge.services.releases import release_build
from knowledge.services.texts import text_approve, text_draft, text_publish, text_save, text_submit
from tests.factories import NamespaceFactory, UserFactory, membership
from tests.servingfixtures import bases_declare, publish

pytestmark = pytest.mark.django_db

FACT = {"category": "fact", "confidence": 0.9, "updated": "2026-08-01"}
PUBLIC_ROW = {**FACT, "id": "CO-101", "title": "Support hours", "summary": "Weekdays.", "body": "Weekdays only."}
INTERNAL_ROW = {
    **FACT,
    "id": "CO-102",
    "title": "Pricing discount floor",
    "summary": "The internal discount floor.",
    "body": "Sales may discount down to 35 percent, never below.",
    "sensitivity": "internal",
}
COMPANY_BASE = {"bases": ["company"]}


@pytest.fixture
def company(db: Any) -> Namespace:
    """A public namespace with one public and one internal entry."""
    return publish(NamespaceFactory.create(slug="company", prefix="CO", name="Company"), [PUBLIC_ROW, INTERNAL_ROW])


@pytest.fixture
def outsider_ns(db: Any) -> Namespace:
    """Another tenant's private namespace, with its own people."""
    namespace = NamespaceFactory.create(slug="rival", prefix="RV", name="Rival", is_public=False)
    return publish(namespace, [{**FACT, "id": "RV-001", "title": "Rival fact", "summary": "R.", "body": "Rival."}])


def declare(namespace: Namespace, *writers: Any, approver: Any) -> None:
    """The reviewed path: `writers` save the company as the base in turn, the last submits, `approver`
    approves and publishes."""
    draft = text_draft(namespace=namespace, kind=TextKind.BASES, actor=writers[0])
    for writer in writers:
        draft = text_save(version=draft, content=COMPANY_BASE, expected_lock_version=draft.lock_version, actor=writer)
    version = text_submit(version=draft, actor=writers[-1])
    text_approve(version=version, actor=approver)
    text_publish(version=version, actor=approver)


def internal_read(namespace: Namespace, entry_id: str) -> int:
    release_build(namespace_id=namespace.pk)
    serving_caches_clear()
    _, key = api_key_create(namespace=namespace, name="in", actor=None, clearance="internal", check_permission=False)
    answer = Client().get(f"/t/{namespace.slug}/api/entries/{entry_id}", headers={"Authorization": f"Bearer {key}"})
    return answer.status_code


def test_another_tenant_building_on_a_public_namespace_gets_only_its_public_entries(
    company: Namespace, outsider_ns: Namespace
) -> None:
    writer = membership(UserFactory(username="mallory"), outsider_ns, Role.EDITOR)
    approver = membership(UserFactory(username="trent"), outsider_ns, Role.REVIEWER)

    declare(outsider_ns, writer, approver=approver)

    assert NamespaceBase.objects.get(namespace=outsider_ns).shares_protected is False
    assert internal_read(outsider_ns, "CO-101") == 200
    assert internal_read(outsider_ns, "CO-102") == 404  # was 200: the base's internal entry
    release_build(namespace_id=outsider_ns.pk)
    knowledge = Client().get(f"/t/{outsider_ns.slug}/api/context?topic=discount%20floor").content
    assert b"35 percent" not in knowledge


def test_a_list_written_by_editors_of_the_base_hands_its_internal_entries_over(
    company: Namespace, outsider_ns: Namespace
) -> None:
    writer = membership(UserFactory(username="sam"), outsider_ns, Role.EDITOR)
    membership(writer, company, Role.EDITOR)
    approver = membership(UserFactory(username="trent"), outsider_ns, Role.REVIEWER)

    declare(outsider_ns, writer, approver=approver)

    assert NamespaceBase.objects.get(namespace=outsider_ns).shares_protected is True
    assert internal_read(outsider_ns, "CO-102") == 200


def test_one_writer_who_is_no_editor_of_the_base_keeps_the_internal_entries_out(
    company: Namespace, outsider_ns: Namespace
) -> None:
    first = membership(UserFactory(username="sam"), outsider_ns, Role.EDITOR)
    membership(first, company, Role.EDITOR)
    second = membership(UserFactory(username="mallory"), outsider_ns, Role.EDITOR)
    approver = membership(UserFactory(username="trent"), outsider_ns, Role.REVIEWER)

    declare(outsider_ns, first, second, approver=approver)

    assert NamespaceBase.objects.get(namespace=outsider_ns).shares_protected is False
    assert internal_read(outsider_ns, "CO-102") == 404


@pytest.fixture
def shared_by(company: Namespace, outsider_ns: Namespace) -> Any:
    """The writer of the rival's list, an editor of the company too: the company's internal entries come."""
    writer = membership(UserFactory(username="sam"), outsider_ns, Role.EDITOR)
    membership(writer, company, Role.EDITOR)
    approver = membership(UserFactory(username="trent"), outsider_ns, Role.REVIEWER)
    declare(outsider_ns, writer, approver=approver)
    assert internal_read(outsider_ns, "CO-102") == 200
    return writer


def test_a_writer_who_stops_being_an_editor_of_the_base_stops_the_internal_entries(
    company: Namespace, outsider_ns: Namespace, shared_by: Any
) -> None:
    """QA: the decision was taken once, at publish; a writer removed from the base later kept its
    internal entries (new ones too) flowing into their namespace. Every build checks it again."""
    Membership.objects.filter(user=shared_by, namespace=company).delete()
    publish(company, [{**INTERNAL_ROW, "id": "CO-103", "title": "New floor", "body": "Never below 30 percent."}])

    assert internal_read(outsider_ns, "CO-103") == 404
    assert internal_read(outsider_ns, "CO-102") == 404
    assert internal_read(outsider_ns, "CO-101") == 200  # what the company serves publicly still comes


def test_removing_the_writer_from_the_base_rebuilds_the_namespace_without_its_internal_entries(
    company: Namespace, outsider_ns: Namespace, shared_by: Any
) -> None:
    boss: Any = UserFactory(username="boss", is_superuser=True, is_staff=True)
    queued = BuildRequest.objects.filter(namespace=outsider_ns, reason="base-release", built_at=None)
    assert not queued.exists()

    membership_remove(membership=Membership.objects.get(user=shared_by, namespace=company), actor=boss)

    assert queued.exists()  # nobody has to publish in the company for the rival to drop them
    assert internal_read(outsider_ns, "CO-102") == 404


def test_a_list_set_up_from_files_shares_the_internal_entries(company: Namespace, outsider_ns: Namespace) -> None:
    bases_declare(outsider_ns, company)

    assert internal_read(outsider_ns, "CO-102") == 200


def test_the_migration_keeps_internal_entries_only_where_the_writers_could_read_them(
    company: Namespace, outsider_ns: Namespace
) -> None:
    writer = membership(UserFactory(username="mallory"), outsider_ns, Role.EDITOR)
    approver = membership(UserFactory(username="trent"), outsider_ns, Role.REVIEWER)
    declare(outsider_ns, writer, approver=approver)
    system_set_up = publish(NamespaceFactory.create(slug="sister", prefix="SI", name="Sister"), [])
    bases_declare(system_set_up, company)
    NamespaceBase.objects.update(shares_protected=False)  # as the field's default left every existing link

    importlib.import_module("knowledge.migrations.0030_namespacebase_shares_protected").forwards(apps, None)

    shares = dict(NamespaceBase.objects.values_list("namespace__slug", "shares_protected"))
    assert shares == {"rival": False, "sister": True}
