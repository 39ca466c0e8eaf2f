"""What an index stores and what it derives as it loads (format 2): lengths, not offsets (issue 18 §4).

Releases share their files' content-defined chunks (knowledge.retrieval.chunks), so a stored array
should change only near what changed. An array of absolute offsets does not: one term gaining a
posting moves every later term's offset, so each publish stored the whole of `post_offsets`,
`term_offsets` and `term_order` (the term ids in string order, which a new term renumbers). Format 2
stores each offsets array as the lengths it is the prefix sums of, and the string order as the terms'
hashes in that order; nor does it store each term's idf, which its document frequency gives. Loading
makes the arrays the engine reads (cumulative sums, the inverse of a sort of the order's hashes: about
2 ms at 10,000 entries, where a binary search per term took 30 and a pass over the postings for each
term's best impact or cheapest entry 10-20, so those stay stored) with the values and dtypes compile
gives them, so answers are the same. Format 1 indexes (releases built before) load as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from knowledge.retrieval.postings import bm25_idf

# Each absolute array and the stored lengths it is derived from (its first value is 0).
LENGTHS = {
    "post_offsets": "post_counts",
    "term_offsets": "term_lengths",
    "doc_id_offsets": "doc_id_lengths",
    "link_offsets": "link_counts",
}
ORDER, ORDER_HASHES = "term_order", "term_order_hashes"
IDF = "term_idf"


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # like the mapped arrays beside it
    return array


def stored_arrays(arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays a format 2 index writes, from the arrays it searches with: lengths for offsets, and the
    string order as hashes unless two terms share a hash (then the ids, as before: a hash finds no id)."""
    stored = {name: array for name, array in arrays.items() if name != IDF}
    for absolute, lengths in LENGTHS.items():
        offsets = stored.pop(absolute, None)
        if offsets is not None and lengths not in stored:
            stored[lengths] = np.diff(offsets).astype(np.int32)
    order, hashes = stored.pop(ORDER, None), stored["term_hashes"]
    if order is not None and ORDER_HASHES not in stored:
        if np.any(hashes[1:] == hashes[:-1]):
            stored[ORDER] = order
        else:
            stored[ORDER_HASHES] = hashes[order]
    return stored


def searched_arrays(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`arrays` with those a format 2 index derives (those present are kept as they are)."""
    found = dict(arrays)
    if "post_counts" not in found:
        return found  # format 1
    for absolute, lengths in LENGTHS.items():
        if absolute not in found and lengths in found:
            offsets = np.zeros(len(found[lengths]) + 1, dtype=np.int64)
            np.cumsum(found[lengths], out=offsets[1:])
            found[absolute] = _frozen(offsets)
    if ORDER not in found and ORDER_HASHES in found:
        # The hashes are sorted and unique (else the ids are stored): the k-th smallest of the order's
        # hashes is term k's, so sorting them gives each term's place in string order.
        order = np.empty(len(found[ORDER_HASHES]), dtype=np.int32)
        order[np.argsort(found[ORDER_HASHES])] = np.arange(len(order), dtype=np.int32)
        found[ORDER] = _frozen(order)
    if IDF not in found:
        doc_freq = found["post_counts"].astype(np.int64)
        found[IDF] = _frozen(bm25_idf(doc_freq, int(meta["reference"]["documents"])))
    return found
