"""A streamed answer tells gunicorn's arbiter its worker is alive after each slice the client took."""

from __future__ import annotations

from collections.abc import Iterator

from knowledge import heartbeat


def test_each_slice_sent_is_one_beat() -> None:
    beats: list[int] = []
    sent: list[bytes] = []
    heartbeat.heartbeat_install(lambda: beats.append(len(sent)))
    try:
        for chunk in heartbeat.beating(iter([b"a", b"b", b"c"])):
            sent.append(chunk)
    finally:
        heartbeat.heartbeat_install(heartbeat._nothing)
    assert sent == [b"a", b"b", b"c"]
    assert beats == [1, 2, 3]  # after each slice was taken, never before the first


def test_a_slice_the_client_never_takes_is_no_beat() -> None:
    beats: list[str] = []
    heartbeat.heartbeat_install(lambda: beats.append("beat"))
    try:
        answer: Iterator[bytes] = heartbeat.beating(iter([b"a", b"b"]))
        next(answer)
    finally:
        heartbeat.heartbeat_install(heartbeat._nothing)
    assert beats == []
