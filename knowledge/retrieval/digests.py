"""SHA-256 hex digests without OpenSSL's per-call algorithm lookup.

`hashlib.sha256(data)` asks OpenSSL 3 to fetch the algorithm on every call, which costs more than
hashing a few kilobytes (about 26,000 instructions of a cache miss's two digests, measured with
bench.missprofile --callgrind). A copy of one prepared hasher skips the lookup; the digests are the same.
"""

from __future__ import annotations

import hashlib

_SHA256 = hashlib.sha256()


def sha256_hex(data: bytes) -> str:
    """hashlib.sha256(data).hexdigest()."""
    hasher = _SHA256.copy()
    hasher.update(data)
    return hasher.hexdigest()
