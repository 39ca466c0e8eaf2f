"""Decoders for text that hides in plain sight: base64 runs and invisible Unicode tag characters."""

from __future__ import annotations

import base64
import binascii
import re

BASE64_RUN = re.compile(
    r"(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{20,}={0,2}|[A-Za-z0-9_-]{20,}={0,2})(?![A-Za-z0-9+/=_-])"
)
_WORDISH = re.compile(r"[A-Za-z]{3,}|[\u3400-\u9fff]{2,}")


def decode_base64(run: str) -> str | None:
    """The text a base64 (or URL-safe base64) run encodes, if it is readable text; otherwise None."""
    padded = run.rstrip("=")
    if len(padded) < 16 or len(padded) % 4 == 1:
        return None
    padded += "=" * (-len(padded) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in decoded)
    if printable < 0.95 * len(decoded) or len(_WORDISH.findall(decoded)) < 2:
        return None
    return decoded


def decode_tags(run: str) -> str:
    """Unicode tag characters (U+E0020–U+E007E) mirror ASCII; agents' tokenizers read them as text."""
    return "".join(chr(ord(ch) - 0xE0000) for ch in run if 0xE0020 <= ord(ch) <= 0xE007E)
