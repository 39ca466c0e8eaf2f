"""An activation is announced on Redis: each web process reads the namespace again at once and loads its new
release in the background, without waiting for the namespace cache to go stale or for a request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.selectors import serving
from knowledge.selectors.release_notices import release_notices_listening, release_notices_stop
from knowledge.selectors.serving import namespace_state_get, release_cache_key, release_served
from tests.configure import configure
from tests.servingfixtures import alpha, clean_serving_state, publish
from tests.worker import wait_for

__all__ = ["alpha", "clean_serving_state"]  # fixtures used below

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]  # the listener has its own connection

NEW_ROW = {"id": "AL-003", "category": "fact", "title": "New", "body": "A new fact.", "updated": "2026-09-01"}


@pytest.fixture
def listening(settings: Any, monkeypatch: Any) -> Iterator[None]:
    """Production's background revalidation, with namespaces fresh for an hour: only a notice shows a switch."""
    if not settings.REDIS_URL:
        pytest.skip("needs Redis (REDIS_URL)")
    configure(settings, revalidate_in_background=True)
    monkeypatch.setattr(serving._states, "fresh_seconds", lambda: 3600.0)
    yield
    release_notices_stop()


def test_an_announced_switch_is_seen_and_loaded_before_any_request_asks(listening: None, alpha: Namespace) -> None:
    state = namespace_state_get(slug="alpha")  # this process listens from its first lookup
    assert state is not None
    served = release_served(state)  # and serves alpha
    wait_for(release_notices_listening, what="the listener's subscription")

    publish(alpha, [NEW_ROW])
    alpha.refresh_from_db()
    assert alpha.active_release is not None and alpha.active_release_id != served.release_id
    key = release_cache_key(alpha.active_release)

    wait_for(lambda: alpha.active_release_id in serving._releases.held(), what="the new release loaded by the notice")
    serving.release_switch_wait(key=key)
    state = namespace_state_get(slug="alpha")
    assert state is not None and state.release_key == key
    assert release_served(state).entry("AL-003") is not None


def test_without_a_notice_the_namespace_cache_holds_the_old_state(
    listening: None, alpha: Namespace, settings: Any
) -> None:
    before = namespace_state_get(slug="alpha")
    assert before is not None
    release_notices_stop()
    configure(settings, revalidate_in_background=False)  # no listener starts again

    publish(alpha, [NEW_ROW])
    assert namespace_state_get(slug="alpha") == before  # fresh for an hour: what the notice changes above
