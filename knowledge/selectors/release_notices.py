"""Release switches announced on Redis, so every web process sees a new release at once (issue 18).

A web process resolves namespaces through a cache fresh for a second (knowledge.selectors.serving):
a switch used to show only once that second was over, and then a request started loading the new
release. Now an activation, once committed, publishes the namespace's id on CHANNEL; one thread per
web process listens and hands it to `on_notice`, which reads that namespace again and starts loading
its new release in the background (the previous one serves until it is complete).

The second's freshness stays the fallback: a lost notice, a Redis outage or a host on another Redis
costs at most that second, as before. Listening starts in processes that revalidate in the background
(web workers: EVERGREEN revalidate_in_background), on their first namespace lookup; a forked child
starts its own.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

import redis
from django.conf import settings

from knowledge.resilience.redis_guard import redis_client

logger = logging.getLogger(__name__)

RETRY_SECONDS = 5.0  # after Redis failed, wait this long before subscribing again
WAIT_SECONDS = 1.0  # how often the listener checks whether it should stop


class _Listening:
    """This process's listener, if it runs (a forked child starts its own)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stopping: threading.Event | None = None  # None while no listener runs; set to stop it
        self.thread: threading.Thread | None = None

    def forget(self) -> None:
        self.stopping, self.thread = None, None


_listening = _Listening()
os.register_at_fork(after_in_child=_listening.forget)


def switch_channel(client: redis.Redis) -> str:
    """Channels are shared by every database of a Redis server: the name carries the database's number."""
    return f"evergreen:{client.connection_pool.connection_kwargs.get('db', 0)}:release-switch"


def release_switch_announce(namespace_id: int) -> None:
    """Tell every listening web process that the namespace serves another release (after the commit)."""
    if not settings.REDIS_URL:
        return
    client = redis_client(settings.REDIS_URL)
    try:
        client.publish(switch_channel(client), str(namespace_id))
    except redis.RedisError as error:
        logger.info("Release switch of namespace %s not announced (%s): seen within a second", namespace_id, error)


def release_notices_listen(on_notice: Callable[[int], None]) -> None:
    """Start this process's listener once (an attribute read on every later call): `on_notice(namespace_id)`
    runs in its thread for each announced switch."""
    if _listening.stopping is not None or not settings.REDIS_URL or not settings.EVERGREEN.revalidate_in_background:
        return
    with _listening.lock:
        if _listening.stopping is not None:
            return
        stopping = _listening.stopping = threading.Event()
        _listening.thread = threading.Thread(
            target=_listen,
            args=(settings.REDIS_URL, on_notice, stopping),
            name="evergreen-release-notices",
            daemon=True,
        )
        _listening.thread.start()


def release_notices_stop() -> None:
    """Stop listening (tests), and wait until the listener has stopped."""
    with _listening.lock:
        stopping, thread = _listening.stopping, _listening.thread
        _listening.forget()
    if stopping is not None and thread is not None:
        stopping.set()
        thread.join()


def release_notices_listening() -> bool:
    """Whether this process's listener is subscribed (tests wait for it before announcing)."""
    if not settings.REDIS_URL:
        return False
    client = redis_client(settings.REDIS_URL)
    channel = switch_channel(client)
    return any(count for name, count in client.pubsub_numsub(channel) if name in (channel, channel.encode()))


def _listen(url: str, on_notice: Callable[[int], None], stopping: threading.Event) -> None:
    while not stopping.is_set():
        try:
            client = redis.Redis.from_url(url, socket_connect_timeout=settings.EVERGREEN.redis_timeout_seconds)
            with client.pubsub(ignore_subscribe_messages=True) as subscription:
                subscription.subscribe(switch_channel(client))
                while not stopping.is_set():
                    message = subscription.get_message(timeout=WAIT_SECONDS)
                    if message is not None and message.get("type") == "message":
                        on_notice(int(message["data"]))
            return
        except (redis.RedisError, OSError) as error:
            logger.info("Not listening for release switches (%s); retrying in %g s", error, RETRY_SECONDS)
        except Exception:
            logger.exception("A release switch notice failed; listening again in %g s", RETRY_SECONDS)
        stopping.wait(RETRY_SECONDS)
