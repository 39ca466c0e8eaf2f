"""What an index stores and what it derives as it loads (formats 2-4): arrays that change near a change (issue 18 §4).

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

Format 3 stores no BM25F impacts (`post_bm25f`, `term_max_bm25f`): a posting's impact is its term's
ranking idf times its `post_saturation`, and the idf follows the term's document frequency, so a
one-entry change rewrote the whole impact list of every term it added or removed (the common words'
lists are the longest: at 100,000 entries 2.9 of the 5.7 MB a one-entry publish stored, and 0.36 MB for
each term's best impact). It stores each term's best saturation instead (its best impact is the idf
times that: rounding is monotonic) and derives both as it loads, the same float32 operations compile
makes, so the values are the same bits (checked as it writes: a mismatch keeps them stored). A host's
web workers map a served copy that holds them (`served_arrays`, knowledge.selectors.release_files), so
no worker derives or holds a private copy of the impacts.

Format 4 stores the posting columns a change still touched in four places (`post_docs`,
`post_saturation`, `post_blocks`, `post_seed`: each term the edit touches changed one chunk of each)
as one array of rows, each posting's 13 bytes together (`post_rows`), so the place a term changes is
one chunk: at 10,000 entries a one-entry edit stored 1.41 MB of the four columns, and 0.43 MB of their
rows. Loading takes the columns apart (copies, like the impacts); a host's mapped copy holds the
columns, as before.

A host's copy of a release that ranks with feedback also holds its forward index (the postings
transposed by entry, feedback.FORWARD_ARRAYS): a worker otherwise transposed them as it loaded (0.53 of
its 0.72 s at 100,000 entries) and held them privately (8 bytes per posting). They are never stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from knowledge.retrieval.container import Run
from knowledge.retrieval.feedback import FORWARD_ARRAYS, ForwardIndex
from knowledge.retrieval.postings import bm25_idf, ranking_idf, term_max_impacts

# Each absolute array and the stored lengths it is derived from (its first value is 0).
LENGTHS = {
    "post_offsets": "post_counts",
    "term_offsets": "term_lengths",
    "doc_id_offsets": "doc_id_lengths",
    "link_offsets": "link_counts",
}
ORDER, ORDER_HASHES = "term_order", "term_order_hashes"
IDF = "term_idf"
IMPACTS, MAX_IMPACTS = "post_bm25f", "term_max_bm25f"  # derived from these in format 3:
SATURATION, MAX_SATURATION = "post_saturation", "term_max_saturation"
# Format 4: each posting's columns as one row of bytes, in this order (little-endian).
ROWS = "post_rows"
ROW_COLUMNS = (("post_docs", "<i4"), (SATURATION, "<f4"), ("post_blocks", "<u4"), ("post_seed", "|u1"))
ROW_BYTES = sum(np.dtype(dtype).itemsize for _, dtype in ROW_COLUMNS)
# What a host's copy holds beside the stored arrays, named in its file's name (release_files.index_file_name):
# a copy made by code before the forward index, the offsets and the string order is not reused (each
# worker would derive them as it loads: the order alone, an argsort of every term, took 0.09 s at 100,000
# entries, and all of them were a private copy per worker).
SERVED_LAYOUT = "served-derived"
BLOCK_ROWS = 1 << 16  # rows taken apart at a time (_columns): 832 KiB of them


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # like the mapped arrays beside it
    return array


def _ranking_idf(meta: Mapping[str, Any], doc_freq: np.ndarray) -> np.ndarray:
    """Each term's idf as compile gives its impacts (postings.assemble_postings)."""
    floor = (meta.get("params") or {}).get("idf_floor")
    return ranking_idf(doc_freq.astype(np.int64), int(meta["reference"]["documents"]), floor)


def _impacts(meta: Mapping[str, Any], doc_freq: np.ndarray, saturation: np.ndarray) -> np.ndarray:
    impacts = np.repeat(_ranking_idf(meta, doc_freq), doc_freq)
    impacts *= saturation  # as compile does: float32 times float32, in place
    return impacts


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def _without_impacts(meta: Mapping[str, Any], stored: dict[str, np.ndarray], offsets: np.ndarray) -> None:
    """Format 3: drop the impacts (and each term's best) that the saturations give back bit for bit."""
    counts, saturation = stored.get("post_counts"), stored.get(SATURATION)
    if counts is None or saturation is None or IMPACTS not in stored or "reference" not in meta:
        return
    if not _same_bits(_impacts(meta, counts, saturation), stored[IMPACTS]):
        return
    del stored[IMPACTS]
    if MAX_IMPACTS in stored:
        best = stored.get(MAX_SATURATION)
        best = term_max_impacts(offsets, saturation) if best is None else best
        if _same_bits(_ranking_idf(meta, counts) * best, stored[MAX_IMPACTS]):
            del stored[MAX_IMPACTS]
            stored[MAX_SATURATION] = best


def _row_columns(stored: Mapping[str, np.ndarray]) -> list[np.ndarray] | None:
    """The posting columns format 4 stores as rows, when each has the dtype the rows give it."""
    if ROWS in stored or any(name not in stored for name, _ in ROW_COLUMNS):
        return None
    columns = [np.ascontiguousarray(stored[name]) for name, _ in ROW_COLUMNS]
    count = len(columns[0])
    if any(c.dtype.str != dtype or c.shape != (count,) for c, (_, dtype) in zip(columns, ROW_COLUMNS, strict=True)):
        return None
    return columns


def _row_block(columns: Sequence[np.ndarray], start: int) -> np.ndarray:
    """Rows start to start + BLOCK_ROWS as records: filled a field at a time (each copied whole, not its
    bytes one by one) while the block is in the cache, several times faster than row by row (0.25-0.45 ->
    0.07 s for the 14 M rows of 100,000 entries; every build writes them, issue 18 §3)."""
    block = np.empty(min(BLOCK_ROWS, len(columns[0]) - start), dtype=_record_dtype())
    for column, (name, _) in zip(columns, ROW_COLUMNS, strict=True):
        block[name] = column[start : start + BLOCK_ROWS]
    return block


def _rows(stored: dict[str, np.ndarray]) -> None:
    """Format 4: the posting columns as one array of rows."""
    columns = _row_columns(stored)
    if columns is None:
        return
    count = len(columns[0])
    records = np.empty(count, dtype=_record_dtype())
    for start in range(0, count, BLOCK_ROWS):
        records[start : start + BLOCK_ROWS] = _row_block(columns, start)
    for name, _ in ROW_COLUMNS:
        del stored[name]
    stored[ROWS] = records.view(np.uint8).reshape(count, ROW_BYTES)


def written_arrays(arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> dict[str, np.ndarray | Run]:
    """stored_arrays as a writer takes them (container.pack_pieces): format 4's rows as a Run made a block
    at a time as it is written, never whole (13 bytes per posting: 103 MB held at 100,000 entries, a
    peak of each build), the same bytes."""
    stored = stored_arrays(arrays, meta, rows=False)
    written: dict[str, np.ndarray | Run] = {**stored}
    columns = _row_columns(stored) if int(meta.get("format", 2)) >= 4 else None
    if columns is None:
        return written
    for name, _ in ROW_COLUMNS:
        del written[name]
    count = len(columns[0])
    blocks = (_row_block(columns, start).view(np.uint8).data for start in range(0, count, BLOCK_ROWS))
    written[ROWS] = Run("|u1", count * ROW_BYTES, blocks, shape=(count, ROW_BYTES))
    return written


def _record_dtype() -> np.dtype:
    """Format 4's row as a record of its columns."""
    return np.dtype(
        {
            "names": [column for column, _ in ROW_COLUMNS],
            "formats": [dtype for _, dtype in ROW_COLUMNS],
            "offsets": list(np.cumsum([0] + [np.dtype(dtype).itemsize for _, dtype in ROW_COLUMNS[:-1]])),
            "itemsize": ROW_BYTES,
        }
    )


def _column(rows: np.ndarray, name: str, release: Callable[[], None] | None = None) -> np.ndarray:
    """One posting column of format 4's rows (a contiguous copy, as compile made it): the rows seen as
    records, the field copied out (a copy of byte slices takes several times as long); with `release`,
    BLOCK_ROWS rows at a time, as _columns does."""
    records = np.ascontiguousarray(rows).reshape(-1).view(_record_dtype())
    column = np.empty(len(records), dtype=dict(ROW_COLUMNS)[name])
    if release is None:
        column[...] = records[name]
        return _frozen(column)
    for start in range(0, len(records), BLOCK_ROWS):
        column[start : start + BLOCK_ROWS] = records[start : start + BLOCK_ROWS][name]
        release()
    return _frozen(column)


def _columns(rows: np.ndarray, release: Callable[[], None] | None = None) -> dict[str, np.ndarray]:
    """Every posting column of format 4's rows (as _column makes each), BLOCK_ROWS rows at a time, with
    `release` called after each block: rows mapped from a file (a build reading its spooled index)
    then hold no more than a block's pages resident, not the whole array beside its columns."""
    records = np.ascontiguousarray(rows).reshape(-1).view(_record_dtype())
    columns = {name: np.empty(len(records), dtype=dtype) for name, dtype in ROW_COLUMNS}
    for start in range(0, len(records), BLOCK_ROWS):
        block = records[start : start + BLOCK_ROWS]
        for name, column in columns.items():
            column[start : start + len(block)] = block[name]
        if release is not None:
            release()
    return {name: _frozen(column) for name, column in columns.items()}


Lazy = tuple[str, tuple[int, ...], Callable[[], np.ndarray]]  # dtype, shape, what makes the array


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """The offsets `lengths` are the differences of (first 0), as searched_arrays makes them."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _order(hashes: np.ndarray) -> np.ndarray:
    """The term ids in string order, from their hashes in that order (stored_arrays). The hashes are
    sorted and unique (else the ids are stored): the k-th smallest of the order's hashes is term k's,
    so sorting them gives each term's place in string order."""
    order = np.empty(len(hashes), dtype=np.int32)
    order[np.argsort(hashes)] = np.arange(len(order), dtype=np.int32)
    return order


def served_forward(meta: Mapping[str, Any]) -> bool:
    """Whether a host's copy of the index holds its forward index: it ranks with feedback (format 2 on)."""
    return meta.get("format") != 1 and bool((meta.get("options") or {}).get("feedback"))


def _forward_lazily(meta: Mapping[str, Any], found: dict[str, Lazy], offsets: Callable[[], np.ndarray]) -> None:
    """FORWARD_ARRAYS added to served_lazily's `found`: transposed once, on the first one's call, and each
    let go as it is taken (they are written one after another: their names sort together)."""
    made: dict[str, np.ndarray] = {}

    def take(name: str) -> np.ndarray:
        if not made:
            made.update(
                ForwardIndex.transposed(
                    offsets=offsets(),
                    docs=found["post_docs"][2](),
                    impacts=found[IMPACTS][2](),
                    count=int(meta["count"]),
                ).arrays()
            )
        return made.pop(name)

    postings = found["post_docs"][1]
    shapes = {"forward_impacts": (found[IMPACTS][0], postings), "forward_terms": ("<i4", postings)}
    shapes["forward_offsets"] = ("<i8", (int(meta["count"]) + 1,))
    for name in FORWARD_ARRAYS:
        found[name] = (*shapes[name], partial(take, name))


def served_lazily(
    meta: Mapping[str, Any], stored: Mapping[str, np.ndarray], release: Callable[[], None] | None = None
) -> dict[str, Lazy]:
    """served_arrays of a stored index's arrays, each made only when called: a host's copy is written
    an array at a time (SearchIndex.serve_file), so no more than one derived array is held at once;
    `release` is called as the posting columns are taken out of the rows (mapped ones: _columns)."""
    found: dict[str, Lazy] = {
        name: (array.dtype.str, array.shape, partial(lambda array: array, array))
        for name, array in stored.items()
        if name != ROWS
    }
    rows = stored.get(ROWS)
    if rows is not None:
        found.update(
            {name: (dtype, (len(rows),), partial(_column, rows, name, release)) for name, dtype in ROW_COLUMNS}
        )
    counts = stored.get("post_counts")
    if SATURATION in found and counts is not None:
        dtype, shape, saturation = found[SATURATION]
        if IMPACTS not in found:
            found[IMPACTS] = (dtype, shape, lambda: _impacts(meta, counts, saturation()))
        best = stored.get(MAX_SATURATION)
        if MAX_IMPACTS not in found and best is not None:
            found[MAX_IMPACTS] = (best.dtype.str, best.shape, lambda: _ranking_idf(meta, counts) * best)
    if served_forward(meta) and counts is not None and IMPACTS in found and FORWARD_ARRAYS[0] not in found:
        _forward_lazily(meta, found, partial(_offsets, counts))
    if not _served_derived(meta):
        return found
    for absolute, lengths in LENGTHS.items():
        if absolute not in found and lengths in stored:
            found[absolute] = ("<i8", (len(stored[lengths]) + 1,), partial(_offsets, stored[lengths]))
    hashes = stored.get(ORDER_HASHES)
    if ORDER not in found and hashes is not None:
        found[ORDER] = ("<i4", hashes.shape, partial(_order, hashes))
    return found


def _served_derived(meta: Mapping[str, Any]) -> bool:
    """Whether a host's copy holds the offsets and string order (format 3 on: a format 2 index's copy
    is its stored bytes, unless it ranks with feedback, as before)."""
    return int(meta.get("format", 2)) >= 3


def stored_arrays(
    arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any] | None = None, *, rows: bool = True
) -> dict[str, np.ndarray]:
    """The arrays a format 2, 3 or 4 index (`meta`'s format; 2 without it) writes, from the arrays it
    searches with: lengths for offsets, and the string order as hashes unless two terms share a hash
    (then the ids, as before: a hash finds no id); format 3 without the impacts, format 4 with the
    posting columns as rows (see the module) unless `rows` is false (a host's copy holds the columns)."""
    stored = {name: array for name, array in arrays.items() if name != IDF and name not in FORWARD_ARRAYS}
    post_offsets = stored.get("post_offsets")
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
    if meta is not None and int(meta.get("format", 2)) >= 3 and post_offsets is not None:
        _without_impacts(meta, stored, post_offsets)
    if rows and meta is not None and int(meta.get("format", 2)) >= 4:
        _rows(stored)
    return stored


def served_arrays(meta: Mapping[str, Any], searched: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What a host's mapped copy of an index holds: what it stores, with the impacts format 3 derives,
    the posting columns format 4 stores as rows (not the rows), and from format 3 on the offsets and
    string order format 2 derives."""
    served = stored_arrays(searched, meta, rows=False)  # the rows were 17 bytes per posting, made to be dropped
    derived = (*LENGTHS, ORDER) if _served_derived(meta) else ()
    for name in (IMPACTS, MAX_IMPACTS, *(name for name, _ in ROW_COLUMNS), *derived):
        if name in searched:
            served[name] = searched[name]
    if served_forward(meta):
        if all(name in searched for name in FORWARD_ARRAYS):
            served.update({name: searched[name] for name in FORWARD_ARRAYS})
        else:
            forward = ForwardIndex.transposed(
                offsets=searched["post_offsets"],
                docs=searched["post_docs"],
                impacts=searched[IMPACTS],
                count=int(meta["count"]),
            )
            served.update(forward.arrays())
    return served


def searched_arrays(
    meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray], release: Callable[[], None] | None = None
) -> dict[str, np.ndarray]:
    """`arrays` with those a format 2 index derives (those present are kept as they are); `release` is
    called as format 4's rows are taken apart (_columns)."""
    found = dict(arrays)
    if "post_counts" not in found:
        return found  # format 1
    if ROWS in found and SATURATION not in found:
        found.update(_columns(found.pop(ROWS), release))
    for absolute, lengths in LENGTHS.items():
        if absolute not in found and lengths in found:
            found[absolute] = _frozen(_offsets(found[lengths]))
    if ORDER not in found and ORDER_HASHES in found:
        found[ORDER] = _frozen(_order(found[ORDER_HASHES]))
    if IDF not in found:
        doc_freq = found["post_counts"].astype(np.int64)
        found[IDF] = _frozen(bm25_idf(doc_freq, int(meta["reference"]["documents"])))
    if IMPACTS not in found and SATURATION in found:
        found[IMPACTS] = _frozen(_impacts(meta, found["post_counts"], found[SATURATION]))
    if MAX_IMPACTS not in found and MAX_SATURATION in found:
        found[MAX_IMPACTS] = _frozen(_ranking_idf(meta, found["post_counts"]) * found[MAX_SATURATION])
    return found
