"""Release files stream from storage a slice at a time and answer byte ranges (206, 416, If-Range)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from gateway.ranges import ByteRange, RangeNotSatisfiable, byte_range
from knowledge.selectors import serving


def body(response: Any) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else bytes(response.content)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("bytes=0-99", ByteRange(0, 99)),
        ("bytes=100-", ByteRange(100, 999)),
        ("bytes=-100", ByteRange(900, 999)),
        ("bytes=-5000", ByteRange(0, 999)),
        ("bytes=990-5000", ByteRange(990, 999)),
        ("BYTES = 5 - 9", ByteRange(5, 9)),
        ("bytes=0-1,5-9", None),  # several ranges: the whole file
        ("bytes=9-5", None),  # invalid: ignored
        ("items=0-5", None),
        ("bytes=-", None),
        (None, None),
    ],
)
def test_byte_ranges_parse_as_rfc_9110_says(header: str | None, expected: ByteRange | None) -> None:
    assert byte_range(header, 1000) == expected


@pytest.mark.parametrize("header", ["bytes=1000-", "bytes=5000-6000", "bytes=-0"])
def test_a_range_past_the_end_is_not_satisfiable(header: str) -> None:
    with pytest.raises(RangeNotSatisfiable):
        byte_range(header, 1000)


def test_if_range_with_another_etag_asks_for_the_whole_file() -> None:
    assert byte_range("bytes=0-9", 1000, if_range='"old"', etag='"new"') is None
    assert byte_range("bytes=0-9", 1000, if_range='"new"', etag='"new"') == ByteRange(0, 9)


@pytest.fixture
def streamed(demo: Any, monkeypatch: Any) -> Any:
    """The demo with every file above 1 KiB left in storage and streamed in slices of 512 bytes."""
    monkeypatch.setattr(serving, "HELD_ARTIFACT_BYTES", 1024)
    monkeypatch.setattr(serving, "STREAM_CHUNK_BYTES", 512)
    return demo


@pytest.mark.django_db
def test_a_large_file_streams_from_storage_a_slice_at_a_time(
    client: Any, streamed: Any, django_assert_num_queries: Any
) -> None:
    client.get("/robots.txt")  # loads the release
    loaded = serving._releases.held()[streamed.active_release_id]
    stored = loaded.artifacts["llms-full.txt"]
    assert stored.held is None and stored.size > 4 * 512

    with django_assert_num_queries(1 + math.ceil(stored.size / 512)):  # which blob, then one query per slice
        response = client.get("/llms-full.txt")
        content = body(response)

    assert response.status_code == 200 and response.streaming
    assert content == stored.content
    assert response["Content-Length"] == str(stored.size)
    assert response["Accept-Ranges"] == "bytes"
    assert response["ETag"] == stored.etag


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/llms-full.txt", "/context.json", "/robots.txt"])
def test_ranges_of_stored_and_held_files(client: Any, streamed: Any, path: str) -> None:
    whole = body(client.get(path))
    size = len(whole)

    middle = client.get(path, headers={"Range": "bytes=10-99"})
    tail = client.get(path, headers={"Range": f"bytes={size - 7}-"})
    last = client.get(path, headers={"Range": "bytes=-20"})

    assert (middle.status_code, body(middle), middle["Content-Range"]) == (206, whole[10:100], f"bytes 10-99/{size}")
    assert middle["Content-Length"] == "90"
    assert (tail.status_code, body(tail)) == (206, whole[-7:])
    assert (last.status_code, body(last)) == (206, whole[-20:])
    assert middle["ETag"] == client.get(path)["ETag"]


@pytest.mark.django_db
def test_a_range_past_the_end_answers_416_with_the_size(client: Any, streamed: Any) -> None:
    size = len(body(client.get("/llms-full.txt")))
    refused = client.get("/llms-full.txt", headers={"Range": f"bytes={size}-"})

    assert refused.status_code == 416
    assert refused["Content-Range"] == f"bytes */{size}"
    assert refused.json()["error"]["code"] == "range_not_satisfiable"


@pytest.mark.django_db
def test_if_range_naming_an_older_file_gets_the_whole_current_one(client: Any, streamed: Any) -> None:
    whole = body(client.get("/llms-full.txt"))
    answer = client.get("/llms-full.txt", headers={"Range": "bytes=0-9", "If-Range": '"an-older-etag"'})

    assert answer.status_code == 200 and body(answer) == whole
