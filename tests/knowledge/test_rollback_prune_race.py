"""A rollback and a prune at once (QA, HIGH): the release that serves afterwards always has its files.

Real concurrency on PostgreSQL: each service runs in its own thread (its own connection) and the steps
are ordered by events and by seeing a backend wait for a row lock, never by sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection, transaction

from knowledge.models import ArtifactPart, Namespace, Release
from knowledge.services.release_storage import PruneReport, releases_prune
from knowledge.services.releases import release_build
from knowledge.services.rollback import RollbackOutcome, release_rollback
from tests.configure import configure
from tests.knowledge.test_release_storage import age_everything, change, release
from tests.servingfixtures import BUILT_AT, alpha_rows, clean_serving_state, publish
from tests.worker import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
__all__ = ["clean_serving_state"]  # autouse: fresh serving caches per test


@pytest.fixture
def alpha(ns_a: Namespace, settings: Any) -> Namespace:
    """Releases 1 to 3 of alpha, 3 active; none served within the retention window (a day)."""
    configure(settings, release_retention_days=1)
    publish(ns_a, alpha_rows())
    change(ns_a, "Alpha ships every Wednesday now.")
    change(ns_a, "Alpha ships every Thursday now.")
    age_everything(ns_a)
    ns_a.refresh_from_db()
    assert ns_a.active_release_id == release(ns_a, 3).pk
    return ns_a


def waiting_for_a_row_lock() -> bool:
    """Another backend of this database waits for a lock (a row another transaction holds)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return bool(cursor.fetchone()[0])


def in_thread(work: Callable[[], Any], results: dict[str, Any], name: str) -> threading.Thread:
    """Run `work` on its own connection; its result (or the error it raised) lands in `results[name]`."""

    def run() -> None:
        try:
            results[name] = work()
        except Exception as error:  # noqa: BLE001 — the test asserts on it
            results[name] = error
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.fixture
def go() -> Iterator[threading.Event]:
    """Lets the transaction a test holds open end; set whatever happens, so no lock outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def serves_with_files(namespace: Namespace) -> Release:
    namespace.refresh_from_db()
    active = namespace.active_release
    assert active is not None
    assert active.files_pruned_at is None, f"release #{active.sequence} serves with its files pruned"
    assert ArtifactPart.objects.filter(artifact__release=active).exists()
    return active


def test_a_prune_while_the_rollback_waits_for_the_entries_never_leaves_it_serving_pruned_files(
    alpha: Namespace, reviewer: Any, go: threading.Event
) -> None:
    target = release(alpha, 1)  # loaded before the rollback takes its locks, as the view does
    held = threading.Event()
    results: dict[str, Any] = {}

    def hold_the_entries() -> None:  # as a running publish or retire does
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT id FROM knowledge_entry WHERE namespace_id = %s FOR UPDATE", [alpha.pk])
            held.set()
            go.wait(timeout=120)

    holder = in_thread(hold_the_entries, results, "holder")
    assert held.wait(timeout=60), "the entries were not locked"
    rollback = in_thread(lambda: release_rollback(namespace=alpha, release=target, actor=reviewer), results, "rb")
    wait_for(waiting_for_a_row_lock, what="the rollback waiting for the entries")

    report = releases_prune(namespace=alpha, keep=1, actor=reviewer)
    go.set()
    for thread in (holder, rollback):
        thread.join(timeout=60)

    assert report.pruned == [1, 2]  # nothing was being activated yet: release 1 was fair game
    outcome = results["rb"]
    assert isinstance(outcome, RollbackOutcome), outcome
    assert not outcome.activated  # its files went while it waited: it queued a build to render them first
    # The queued build (eager in tests, on the rollback's commit) rendered release 1 again and serves it.
    assert serves_with_files(alpha).sequence == 1
    assert release_build(namespace_id=alpha.pk, now=BUILT_AT).release.sequence == 1


def test_a_prune_during_a_rollback_waits_for_it_and_keeps_the_release_it_activated(
    alpha: Namespace, reviewer: Any, go: threading.Event
) -> None:
    target = release(alpha, 1)
    rolled = threading.Event()
    results: dict[str, Any] = {}

    def roll_back_and_hold() -> RollbackOutcome:
        with transaction.atomic():  # the rollback's locks stay held until the test lets it commit
            outcome = release_rollback(namespace=alpha, release=target, actor=reviewer)
            rolled.set()
            go.wait(timeout=120)
        return outcome

    rollback = in_thread(roll_back_and_hold, results, "rb")
    assert rolled.wait(timeout=60), "the rollback did not run"
    prune = in_thread(lambda: releases_prune(namespace=alpha, keep=1, actor=reviewer), results, "prune")
    wait_for(lambda: "prune" in results or waiting_for_a_row_lock(), what="the prune to end or to wait")
    pruned_meanwhile = "prune" in results
    go.set()
    for thread in (rollback, prune):
        thread.join(timeout=60)

    assert not pruned_meanwhile, "the prune did not wait for the rollback's locks"
    outcome, report = results["rb"], results["prune"]
    assert isinstance(outcome, RollbackOutcome) and outcome.activated, outcome
    assert isinstance(report, PruneReport) and report.pruned == [2], report
    assert serves_with_files(alpha).sequence == 1
