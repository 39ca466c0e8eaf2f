"""A release notice counts what its changesUrl answers a public reader: a change of visibility is a change."""

from __future__ import annotations

import pytest
from django.test import Client

from knowledge.models import Namespace, Release, ReleaseActivation, Role
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.rollback import release_rollback
from knowledge.services.webhooks import activation_payload
from tests.factories import UserFactory, membership
from tests.observe.releases import SECOND_BUILT
from tests.servingfixtures import alpha_rows, publish

pytestmark = pytest.mark.django_db


def internal_release(alpha: Namespace) -> Namespace:
    """Release 2: AL-001 turned internal, nothing else changed."""
    rows = alpha_rows()
    rows[0] = {**rows[0], "sensitivity": "internal"}
    publish(alpha, rows, now=SECOND_BUILT)
    serving_caches_clear()
    return alpha


def notice_counts() -> dict[str, int]:
    activation = ReleaseActivation.objects.select_related("namespace", "release", "previous").latest("pk")
    return activation_payload(activation)["data"]["changes"]


def feed_counts(since: int) -> dict[str, int]:
    serving_caches_clear()
    response = Client().get(f"/t/alpha/api/changes?since={since}")
    assert response.status_code == 200, response.content
    return response.json()["counts"]


def test_a_rollback_that_shows_an_entry_to_public_readers_again_counts_it_as_the_feed_does(alpha: Namespace) -> None:
    internal_release(alpha)
    reviewer = membership(UserFactory(username="rolf"), alpha, Role.REVIEWER)

    release_rollback(namespace=alpha, release=Release.objects.get(namespace=alpha, sequence=1), actor=reviewer)

    counts = notice_counts()
    assert counts == {"added": 1, "changed": 0, "retired": 0, "restored": 0, "removed": 0}
    assert counts == feed_counts(since=2)


def test_an_entry_turned_internal_leaves_the_public_count_as_the_feed_says(alpha: Namespace) -> None:
    internal_release(alpha)

    counts = notice_counts()
    assert counts == {"added": 0, "changed": 0, "retired": 0, "restored": 0, "removed": 1}
    assert counts == feed_counts(since=1)
