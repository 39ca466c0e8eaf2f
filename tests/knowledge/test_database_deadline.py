"""A client-side deadline cuts PostgreSQL work that does not return (knowledge.resilience.deadline)."""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection

from knowledge.resilience.deadline import _WATCHDOG, database_deadline

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the deadline bounds PostgreSQL connections"),
]


def test_a_query_past_its_deadline_is_cut_and_the_next_one_reconnects() -> None:
    with pytest.raises(OperationalError), database_deadline(0.2), connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(60)")  # would wait a minute; the cut ends it

    connection.close_if_unusable_or_obsolete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_work_that_returns_in_time_leaves_nothing_armed() -> None:
    with database_deadline(60), connection.cursor() as cursor:
        cursor.execute("SELECT 1")

    assert not _WATCHDOG._armed
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")
        assert cursor.fetchone() == (2,)
