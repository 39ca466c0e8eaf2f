"""HTTP Range requests on release files (RFC 9110 §14): one byte range per request, 206 or 416.

A client that lost a large download (llms-full.txt, context.json) asks for the rest with
`Range: bytes=<from>-` instead of starting again; `If-Range` with the file's ETag makes sure the rest
belongs to the same file. Several ranges in one request (multipart/byteranges) are answered with the
whole file, which RFC 9110 allows; so is a Range header that does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ByteRange:
    start: int
    end: int  # inclusive, as Content-Range writes it

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end}/{size}"


class RangeNotSatisfiable(Exception):  # noqa: N818 - named after the HTTP status it answers
    """The range starts past the end of the file (416, with `Content-Range: bytes */<size>`)."""


def byte_range(header: str | None, size: int, *, if_range: str | None = None, etag: str = "") -> ByteRange | None:
    """The one range asked for within a file of `size` bytes; None means the whole file.

    `If-Range` with another ETag (or a date: files carry no Last-Modified) asks for the whole file.
    """
    if not header:
        return None
    if if_range is not None and if_range.strip() != etag:
        return None
    found = _RANGE.match(header)
    if found is None or not (found[1] or found[2]):
        return None  # unparsable, or several ranges: the whole file
    if not found[1]:
        return _suffix(int(found[2]), size)
    start = int(found[1])
    if found[2] and int(found[2]) < start:
        return None  # invalid: ignored, as RFC 9110 §14.2 says
    if start >= size:
        raise RangeNotSatisfiable
    return ByteRange(start, min(int(found[2]), size - 1) if found[2] else size - 1)


def _suffix(length: int, size: int) -> ByteRange | None:
    """`bytes=-<length>`: the last `length` bytes (all of them if the file is shorter)."""
    if length == 0:
        raise RangeNotSatisfiable
    return ByteRange(max(0, size - length), size - 1) if size else None
