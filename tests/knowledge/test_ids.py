"""Public IDs: allocated from the category's blocks, never reused, safe under concurrency."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from knowledge.errors import BlockFullError, InvalidInputError
from knowledge.models import Entry, IdBlock, Namespace
from knowledge.services.entries import entry_create, entry_retire
from tests.factories import content


def create(ns: Namespace, actor: Any, category: str = "fact", **kwargs: Any) -> Entry:
    version = entry_create(
        namespace=ns, category=ns.categories.get(slug=category), content=content(), actor=actor, **kwargs
    )
    return version.entry


@pytest.mark.django_db
def test_ids_come_from_the_category_block(ns_a: Namespace, editor: Any) -> None:
    assert create(ns_a, editor, "fact").public_id == "AL-000"
    assert create(ns_a, editor, "rule").public_id == "AL-200"
    assert create(ns_a, editor, "rule").public_id == "AL-201"
    assert create(ns_a, editor, "workflow").public_id == "AL-400"


@pytest.mark.django_db
def test_an_id_is_never_reused_after_retirement(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    first = create(ns_a, editor, "rule")
    second = create(ns_a, editor, "rule")
    entry_retire(entry=second, actor=reviewer, reason="Merged into the first rule.", replaced_by=first.public_id)
    third = create(ns_a, editor, "rule")
    assert third.public_id == "AL-202"
    assert Entry.objects.filter(public_id="AL-201", retired_at__isnull=False).exists()


@pytest.mark.django_db
def test_a_full_block_continues_in_the_next_block_then_refuses(ns_a: Namespace, editor: Any) -> None:
    fact = ns_a.categories.get(slug="fact")
    IdBlock.objects.filter(category=fact, start=0).update(end=1)
    IdBlock.objects.filter(category=fact, start=500).update(end=500)
    ids = [create(ns_a, editor).public_id for _ in range(3)]
    assert ids == ["AL-000", "AL-001", "AL-500"]
    with pytest.raises(BlockFullError, match="fact"):
        create(ns_a, editor)


@pytest.mark.django_db
def test_a_given_id_must_have_the_prefix_and_be_unused(ns_a: Namespace, editor: Any) -> None:
    assert create(ns_a, editor, public_id="AL-077").public_id == "AL-077"
    with pytest.raises(InvalidInputError, match="never reused"):
        create(ns_a, editor, public_id="AL-077")
    with pytest.raises(InvalidInputError, match="not an ID of this namespace"):
        create(ns_a, editor, public_id="EG-078")


@pytest.mark.django_db
def test_entries_cannot_be_deleted(ns_a: Namespace, editor: Any) -> None:
    entry = create(ns_a, editor)
    with pytest.raises(Exception, match="never deletes"):
        entry.delete()
    with pytest.raises(Exception, match="never deletes"):
        Entry.objects.filter(pk=entry.pk).delete()
    assert Entry.objects.filter(pk=entry.pk).exists()


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_postgres_refuses_raw_deletes(ns_a: Namespace, editor: Any) -> None:
    entry = create(ns_a, editor)
    with pytest.raises(Exception, match="never deletes"), connection.cursor() as cursor:
        cursor.execute("DELETE FROM knowledge_entryversion WHERE entry_id = %s", [entry.pk])


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_concurrent_creation_allocates_different_ids(ns_a: Namespace, editor: Any) -> None:
    """Two editors saving at the same moment: the namespace row lock serialises allocation."""
    barrier = threading.Barrier(4)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait()
            results.append(create(ns_a, editor).public_id)
        except BaseException as error:  # noqa: BLE001  # reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(results) == ["AL-000", "AL-001", "AL-002", "AL-003"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("given", "refusal"),
    [
        ("AL-0٥٥", "not an ID of this namespace"),  # Arabic-Indic digits: a third spelling of 55 (QA)
        ("AL-0061", "not an ID of this namespace"),  # number 61, which AL-061 lookups would never find
        ("AL-250", "outside the ID blocks of the category fact"),  # a fact in the rule block
    ],
)
def test_a_given_id_is_spelled_as_the_namespace_writes_it_inside_its_category_s_blocks(
    ns_a: Namespace, editor: Any, given: str, refusal: str
) -> None:
    with pytest.raises(InvalidInputError, match=refusal):
        create(ns_a, editor, public_id=given)
    assert not Entry.objects.filter(namespace=ns_a).exists()
    assert create(ns_a, editor, public_id="AL-055").public_id == "AL-055"
