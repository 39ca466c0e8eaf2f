"""Term dictionary as flat arrays: terms sorted by a stable 64-bit hash, found by binary search."""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

# Looked-up terms each vocabulary remembers (about 100 bytes each): topics repeat their words, and
# a lookup otherwise costs a hash, a binary search and a string unpacked from the blob.
LOOKUPS_KEPT = 20_000


def hash_term(term: str) -> int:
    """A stable 64-bit hash (Python's own `hash` changes per process, so it cannot be stored)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")


def pack_strings(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 blob plus offsets (len + 1), so a string list is two flat arrays."""
    encoded = [s.encode() for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def unpack_string(blob: np.ndarray, offsets: np.ndarray, index: int) -> str:
    return bytes(blob[offsets[index] : offsets[index + 1]]).decode()


def _hash_order(terms: Sequence[str], hashes: np.ndarray) -> list[int] | np.ndarray:
    """Hash order with the term as tie-breaker: deterministic whatever the input order. A sort of the
    hashes alone gives it when no two hashes are equal (always, in practice); else the terms decide."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    if not np.any(ordered[1:] == ordered[:-1]):
        return order
    return sorted(range(len(terms)), key=lambda i: (int(hashes[i]), terms[i]))


@dataclass(frozen=True)
class Vocabulary:
    """Terms without a Python dict: memory is two arrays and a blob, loading is zero-copy."""

    hashes: np.ndarray  # uint64, sorted
    blob: np.ndarray  # uint8
    offsets: np.ndarray  # int64, len(hashes) + 1
    _found: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def build(cls, terms: Sequence[str], *, hashes: np.ndarray | None = None) -> tuple[Vocabulary, np.ndarray]:
        """Return the vocabulary and `new_id[old_id]` for terms given in first-seen order (`hashes`:
        their hash_term values, when the caller has them already)."""
        if hashes is None:
            hashes = np.array([hash_term(t) for t in terms], dtype=np.uint64)
        order = _hash_order(terms, hashes)
        new_id = np.empty(len(terms), dtype=np.int64)
        new_id[np.array(order, dtype=np.int64)] = np.arange(len(terms), dtype=np.int64)
        blob, offsets = pack_strings([terms[i] for i in order])
        return cls(hashes[np.array(order, dtype=np.int64)], blob, offsets), new_id

    def __len__(self) -> int:
        return len(self.hashes)

    def lookup(self, term: str) -> int:
        """The term's id, or -1 when no entry contains it."""
        found = self._found.get(term)
        if found is None:
            if len(self._found) >= LOOKUPS_KEPT:
                self._found.clear()
            found = self._found[term] = self._searched(term)
        return found

    def _searched(self, term: str) -> int:
        key = hash_term(term)
        hashes = self.hashes
        left, count = int(hashes.searchsorted(np.uint64(key))), len(hashes)  # the method: no dispatch layer
        while left < count and int(hashes[left]) == key:
            if unpack_string(self.blob, self.offsets, left) == term:
                return left
            left += 1
        return -1

    def term(self, term_id: int) -> str:
        return unpack_string(self.blob, self.offsets, term_id)


@dataclass(frozen=True)
class SortedTerms:
    """The vocabulary's term ids in string order, for finding the terms that begin with a prefix."""

    vocabulary: Vocabulary
    order: np.ndarray  # int32 term ids, sorted by term

    def starting_with(self, prefix: str, *, limit: int) -> list[int]:
        """Up to `limit` term ids beginning with `prefix`, the shortest terms first (of the first 4 × limit)."""
        order, term_of = self.order, self.vocabulary.term
        start = bisect.bisect_left(range(len(order)), prefix, key=lambda i: term_of(int(order[i])))
        found: list[tuple[int, str, int]] = []
        for index in range(start, min(start + 4 * limit, len(self.order))):
            term_id = int(self.order[index])
            term = self.vocabulary.term(term_id)
            if not term.startswith(prefix):
                break
            found.append((len(term), term, term_id))
        return [term_id for _, _, term_id in sorted(found)[:limit]]
