"""Admin pages ask the database a bounded number of questions, and the user's roles only once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from knowledge.models import EntryVersion, Namespace, Role
from knowledge.services.entries import entry_create
from knowledge.services.versions import version_submit
from tests.factories import NamespaceFactory, UserFactory, content, membership
from tests.knowledge.adminforms import as_user

pytestmark = pytest.mark.django_db

ENTRIES = 12


@pytest.fixture
def desk(ns_a: Namespace, ns_b: Namespace) -> dict[str, Any]:
    """A person who edits, reviews and administers across three namespaces, with a dozen entries in each."""
    gamma = NamespaceFactory.create(slug="gamma", prefix="GA")
    person: Any = UserFactory(username="pat")
    membership(person, ns_a, Role.EDITOR, Role.REVIEWER)
    membership(person, ns_b, Role.ADMIN)
    membership(person, gamma, Role.EDITOR)
    author = membership(UserFactory(username="amy"), ns_a, Role.EDITOR)
    membership(author, ns_b, Role.EDITOR)
    versions: list[EntryVersion] = []
    for namespace in (ns_a, ns_b, gamma):
        for n in range(ENTRIES):
            version = entry_create(
                namespace=namespace,
                category=namespace.categories.get(slug="fact"),
                content=content(title=f"Entry {n} of {namespace.slug}"),
                actor=author if namespace != gamma else person,
            )
            if n % 2 and namespace != gamma:
                version_submit(version=version, actor=author)
            versions.append(version)
    return {"person": person, "version": versions[0], "entry": versions[0].entry, "namespace": ns_b}


PAGES: dict[str, Callable[[dict[str, Any]], str]] = {
    "index": lambda d: reverse("admin:index"),
    "entry list": lambda d: reverse("admin:knowledge_entry_changelist"),
    "version list": lambda d: reverse("admin:knowledge_entryversion_changelist"),
    "review queue": lambda d: reverse("admin:knowledge_reviewitem_changelist"),
    "entry page": lambda d: reverse("admin:knowledge_entry_change", args=[d["entry"].pk]),
    "version page": lambda d: reverse("admin:knowledge_entryversion_change", args=[d["version"].pk]),
    "namespace list": lambda d: reverse("admin:knowledge_namespace_changelist"),
    "namespace page": lambda d: reverse("admin:knowledge_namespace_change", args=[d["namespace"].pk]),
    "audit trail": lambda d: reverse("admin:knowledge_auditrecord_changelist"),
}


# Pages render in a bounded number of queries whatever the rows (36 entries here; 118 queries before).
MAX_QUERIES = 16
ROLES_QUERY = 'SELECT "knowledge_membership"."namespace_id" AS "namespace_id", "knowledge_membership"."role'


@pytest.mark.parametrize("page", PAGES)
def test_each_page_reads_the_roles_once_and_stays_within_its_query_budget(
    desk: dict[str, Any], page: str, django_assert_max_num_queries: Any
) -> None:
    client = as_user(desk["person"])
    url = PAGES[page](desk)
    client.get(url)  # warm the session and the content-type cache
    with CaptureQueriesContext(connection) as queries, django_assert_max_num_queries(MAX_QUERIES):
        response = client.get(url)
    assert response.status_code == 200
    assert sum(q["sql"].startswith(ROLES_QUERY) for q in queries) == 1  # 55-100 before
