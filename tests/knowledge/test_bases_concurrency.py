"""Two lists of bases published at once cannot close a cycle that neither saw (issue 16 §1, §4).

W builds on X and Y on Z. Publishing "X on Y" and "Z on W" together would close W → X → Y → Z → W, and
no namespace is in both writes, so row locks alone would let both pass. The second publish waits for
the first (an advisory lock), then sees its link and is refused naming the chain.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections, transaction

from knowledge.errors import InvalidInputError
from knowledge.models import Namespace, NamespaceBase, TextKind
from knowledge.services.layers import LAYER_GRAPH_LOCK
from knowledge.services.texts import text_publish_as_system
from tests.factories import NamespaceFactory
from tests.servingfixtures import bases_declare
from tests.worker import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _waiting_for_the_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        return bool(cursor.fetchone()[0])


def _declare(namespace: Namespace, base: str) -> None:
    text_publish_as_system(namespace=namespace, kind=TextKind.BASES, content={"bases": [base]}, note="test")


def test_the_second_of_two_lists_published_at_once_sees_the_first_and_is_refused() -> None:
    w, x, y, z = (NamespaceFactory.create(slug=s, prefix=s.upper() * 2, name=s) for s in ("w", "x", "y", "z"))
    bases_declare(w, x)
    bases_declare(y, z)
    applied, go = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                _declare(x, "y")
                applied.set()
                go.wait()
        finally:
            connection.close()

    def second() -> None:
        try:
            _declare(z, "w")
        except InvalidInputError as error:
            outcome["refused"] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    assert applied.wait(timeout=60), "the first publish did not get its lock"
    threads[1].start()
    try:
        wait_for(_waiting_for_the_lock, what="the second publish waiting for the first")
    finally:  # the first transaction ends whatever happened, so nothing is left holding the database
        go.set()
        for thread in threads:
            thread.join(timeout=60)

    refused = outcome.get("refused")
    assert refused is not None and refused.code == "layers.cycle"
    assert "z cannot build on w" in str(refused) and "w → x → y → z" in str(refused)
    assert list(NamespaceBase.objects.filter(namespace=x).values_list("base__slug", flat=True)) == ["y"]
    assert not NamespaceBase.objects.filter(namespace=z).exists()


def test_a_list_waiting_for_another_holds_no_namespace_row() -> None:
    """QA: acme-cloud's list [acme, evergreen] and acme's [evergreen] published at once deadlocked (503).

    Publishing acme's list locked acme's row (FOR UPDATE through a join) before waiting for the list lock,
    which the other publish held while it waited for acme's row. A publish waiting for the list lock now
    holds only its own text's rows, so the one holding the list lock can always take the namespaces'.
    """
    acme, _ = (NamespaceFactory.create(slug=s, prefix=p, name=s) for s, p in (("acme", "AC"), ("ev", "EV")))
    done = threading.Event()
    errors: list[BaseException] = []

    def publish() -> None:
        try:
            _declare(acme, "ev")
        except BaseException as error:  # noqa: BLE001 (reported by the test below)
            errors.append(error)
        finally:
            connection.close()
            done.set()

    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LAYER_GRAPH_LOCK])  # the other publish's list lock
            thread = threading.Thread(target=publish)
            thread.start()
            try:
                wait_for(_waiting_for_the_lock, what="the publish waiting for the list lock")
                # What the other publish does next: lock the namespaces of its own list, acme among them.
                cursor.execute("SELECT id FROM knowledge_namespace WHERE id = %s FOR UPDATE NOWAIT", [acme.pk])
            finally:
                cursor.execute("ROLLBACK")
        assert done.wait(timeout=60), "the publish never finished"
        thread.join(timeout=60)
    finally:
        other.close()

    assert not errors, errors
    assert list(NamespaceBase.objects.filter(namespace=acme).values_list("base__slug", flat=True)) == ["ev"]
