"""The in-process caches of the serving selectors stay bounded whatever names clients send."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Release
from knowledge.resilience.stale import StaleCache
from knowledge.selectors import serving
from knowledge.selectors.serving import release_cache_key
from tests.configure import configure

pytestmark = pytest.mark.django_db


def test_unknown_namespace_names_do_not_grow_the_cache_without_bound(
    client: Any, monkeypatch: Any, settings: Any
) -> None:
    configure(settings, rate_limit="0")
    monkeypatch.setattr(serving, "_states", StaleCache(fresh_seconds=lambda: 1.0, size=5))

    for n in range(20):
        assert client.get(f"/t/nope-{n}/llms.txt").status_code == 404

    assert len(serving._states._items) <= 5


def test_a_loaded_release_is_shared_by_requests(client: Any, demo: Any) -> None:
    client.get("/llms.txt")
    loaded = serving._releases.held()
    client.get("/api/context?topic=token")

    assert list(serving._releases.held()) == list(loaded) == [demo.active_release_id]
    assert serving._releases.held()[demo.active_release_id] is loaded[demo.active_release_id]


def test_large_artifacts_are_served_from_the_database_and_304_from_memory(
    client: Any, demo: Any, monkeypatch: Any, django_assert_num_queries: Any
) -> None:
    monkeypatch.setattr(serving, "HELD_ARTIFACT_BYTES", 1024)
    full = client.get("/llms-full.txt")  # loads the release; llms-full.txt is above 1 KiB, so not held
    content = b"".join(full.streaming_content)
    loaded = serving._releases.held()[demo.active_release_id]

    assert loaded.artifacts["llms-full.txt"].held is None
    with django_assert_num_queries(2):  # which stored file, then its bytes (one slice: it is under 1 MiB)
        assert b"".join(client.get("/llms-full.txt").streaming_content) == content
    with django_assert_num_queries(0):
        assert client.get("/llms-full.txt", headers={"If-None-Match": full["ETag"]}).status_code == 304
        head = client.head("/llms-full.txt")
    assert (head["Content-Length"], head["ETag"]) == (full["Content-Length"], full["ETag"])


@pytest.mark.django_db(transaction=True)  # the new release loads in a thread of its own, on its own connection
def test_a_new_release_replaces_the_namespaces_previous_one_in_memory(
    client: Any, alpha: Any, beta: Any, monkeypatch: Any
) -> None:
    from tests.servingfixtures import publish

    client.get("/t/alpha/llms.txt")
    client.get("/t/beta/llms.txt")
    before = alpha.active_release_id
    publish(
        alpha, [{"id": "AL-003", "category": "fact", "title": "New", "body": "A new fact.", "updated": "2026-09-01"}]
    )
    serving._states.clear()
    alpha.refresh_from_db()
    assert alpha.active_release_id != before

    # The switch: the previous release answers while the new one loads in the background.
    assert client.get("/t/alpha/context.json").json()["releaseId"] == Release.objects.get(pk=before).sequence
    assert alpha.active_release is not None
    serving.release_switch_wait(key=release_cache_key(alpha.active_release))
    assert "AL-003" in client.get("/t/alpha/llms.txt").content.decode()
    assert set(serving._releases.held()) == {alpha.active_release_id, beta.active_release_id}


def test_a_cache_outage_is_a_miss_not_an_error(client: Any, demo: Any, settings: Any) -> None:
    dead = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    settings.CACHES = {"default": dead, "replies": dead}
    first = client.get("/api/context", {"topic": "token 预算"})

    assert first.status_code == 200
    assert client.get("/api/context", {"topic": "token 预算"}).content == first.content
