"""A build worker's caches kept on disk, so its first build of a namespace after a restart is incremental too.

A process keeps, per namespace, the entry records, analysed terms and context.json parts of its last
build (knowledge.services.releases). They lived only in the process, so a restarted worker's first
build read, analysed and rendered every entry again (223 s at 100,000 entries). After each build the
caches are written to EVERGREEN_BUILD_CACHE_DIR, and a process without caches for a namespace reads
them first. Per namespace there is a base file (a container of arrays: every record, part and
analysis) and, beside it, a delta file written against that base (it names the base's random token):
what the process's caches hold that the base does not, and which of the base's rows still apply. A
process that wrote or read the base writes only the delta after a build (re-serialising every record
took about 7 s per publish at 100,000 entries, a fifth of the worker's CPU); the base is written again
when the delta grows past a DELTA_SHARE-th of it. Each file is written to a temporary name and
renamed, and the delta is removed after a new base is in place, so a worker killed at any point
leaves a base and either its own delta or one naming another base, which is left out (the base alone
is an older cache, still consistent). The temporary file it leaves is removed when a worker starts or
saves next (build_cache_sweep). What is read back is only ever used where it provably applies:

- entry records by their key (the live version's id, its modified_at, ID and category), as in memory;
- analysed terms by a digest of the whole document;
- context.json parts by the entry record and the namespace URL they were rendered from;
- and nothing at all when the code that makes them may have changed or the ids may mean other rows:
  the file names the digest of the retrieval engine's and the snapshot reader's source files and the
  database, and a file of other code or another database is ignored.

So a release built from a restored cache is byte-identical to a full build
(tests/knowledge/test_build_cache.py). A missing, foreign or damaged base means a full build, never a
failed one; a damaged delta, the base alone.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from django.conf import settings
from django.db import connection

from knowledge.partial_files import FOREIGN_AFTER_SECONDS, partial_path, partials_sweep, path_remove
from knowledge.retrieval.container import Run, pack_pieces, unpack_arrays
from knowledge.retrieval.render.analysis_cache import AnalysisCache, Saved
from knowledge.retrieval.render.parts import PartsCache
from knowledge.retrieval.snapshot import EntryRecord
from knowledge.selectors.snapshots import RecordKey

logger = logging.getLogger(__name__)

FORMAT = 2  # 2: a base file (with its "token") and a delta file written against it
DELTA_SHARE = 10  # a delta of more than a tenth of the base's rows means writing the base again
BASES_MAX = 8  # namespaces whose base file a process remembers (as releases.ANALYSIS_CACHES_MAX)
_CODE = ("knowledge/retrieval", "knowledge/selectors/snapshots.py", "knowledge/services/build_cache.py")
_ROOT = Path(__file__).resolve().parents[2]
_UNNAMED_PARTIAL = re.compile(r"^namespace-\d+\.(cache|delta)[a-z0-9_]{8}$")  # tempfile's, before partial_path


@cache
def code_digest() -> str:
    """A digest of the source of everything that makes what the caches hold."""
    digest = hashlib.sha256()
    for name in _CODE:
        path = _ROOT / name
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(source.relative_to(_ROOT)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def _database() -> str:
    """Which database the records come from (ids are only unique within one)."""
    db = connection.settings_dict
    return f"{db.get('HOST') or ''}:{db.get('PORT') or ''}/{db.get('NAME') or ''}"


def cache_path(namespace_id: int) -> Path:
    return settings.EVERGREEN.build_cache_dir / f"namespace-{namespace_id}.cache"


def delta_path(namespace_id: int) -> Path:
    return settings.EVERGREEN.build_cache_dir / f"namespace-{namespace_id}.delta"


@dataclass(frozen=True, slots=True)
class _Rows:
    """The rows of a base file by a 64-bit hash of their keys (Python's hash of a record key, in this
    process only; the first 8 bytes of a document digest): a few bytes a row, not a dictionary of keys.
    A collision can only leave a current entry out of the delta (a cache miss after a restart), never
    read back a wrong one: each row is read back under its own key."""

    hashes: np.ndarray  # sorted
    rows: np.ndarray  # the row of each hash

    @classmethod
    def of(cls, hashes: np.ndarray) -> _Rows:
        order = np.argsort(hashes, kind="stable")
        return cls(hashes[order], order)

    def __len__(self) -> int:
        return len(self.hashes)

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """The row of each hash, -1 where the base has none."""
        if not len(self.hashes):
            return np.full(len(hashes), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
        return np.where(self.hashes[at] == hashes, self.rows[at], -1)


def _record_hashes(keys: Iterable[RecordKey], count: int) -> np.ndarray:
    return np.fromiter((hash(key) for key in keys), dtype=np.int64, count=count)


def _digest_hashes(keys: bytes) -> np.ndarray:
    """The first 8 bytes of each 16-byte document digest of `keys` (AnalysisCache.export's "keys")."""
    return np.frombuffer(keys, dtype="<u8")[::2].copy()


@dataclass(frozen=True, slots=True)
class _Base:
    """What this process knows of the namespace's base file (the one it last wrote or read), so its
    next save writes only what is not in it: each record's row (and the URL its part was rendered
    from) and each analysed document's row."""

    token: str
    records: _Rows
    part_urls: list[str | None]
    analysis: _Rows
    config: dict[str, Any] | None


_bases: OrderedDict[int, _Base] = OrderedDict()
_bases_lock = threading.Lock()


def _base_keep(namespace_id: int, base: _Base | None) -> None:
    with _bases_lock:
        _bases.pop(namespace_id, None)
        if base is not None:
            _bases[namespace_id] = base
            while len(_bases) > BASES_MAX:
                _bases.popitem(last=False)


def build_cache_bases_clear() -> None:
    """Forget which base files this process wrote or read (as a restart does): its next saves are full."""
    with _bases_lock:
        _bases.clear()


def _identity(namespace_id: int) -> dict[str, Any]:
    return {"format": FORMAT, "code": code_digest(), "namespace": namespace_id, "database": _database()}


def _offsets(chunks: list[bytes]) -> np.ndarray:
    """Where each of `chunks` starts when they are written end to end, and where the last ends."""
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in chunks], out=offsets[1:])
    return offsets


def _json_run(values: Sequence[Any]) -> tuple[Run, np.ndarray]:
    """Each value's JSON end to end, and where each starts. The dumps are measured, let go, and made
    again as the file is written: 120 MB of JSON held whole at 100,000 entries was a full save's peak
    (issue 18 §3); dumping twice costs about 0.4 s there."""
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    lengths = np.fromiter((len(orjson.dumps(value)) for value in values), dtype=np.int64, count=len(values))
    np.cumsum(lengths, out=offsets[1:])
    return Run("|u1", int(offsets[-1]), (orjson.dumps(value) for value in values)), offsets


@dataclass(frozen=True, slots=True)
class _KeptParts:
    """The context.json part kept for each record, by its position among the records saved: the base
    URL it was rendered from and its bytes (None for both where none is kept). Two lists of references:
    a dictionary of (URL, bytes) pairs by position was 11 MB at 100,000 entries, through the whole save."""

    urls: list[str | None]
    parts: list[bytes | None]


def _parts_of(keyed: list[tuple[RecordKey, EntryRecord]], parts: PartsCache) -> _KeptParts:
    """The context.json part kept for each record of `keyed` (by its position there)."""
    position = {id(record): n for n, (_, record) in enumerate(keyed)}
    kept = _KeptParts(urls=[None] * len(keyed), parts=[None] * len(keyed))
    found = position.get
    for records, url, run in parts.kept_runs("context.json"):
        for record, part in zip(records, run, strict=True):
            n = found(id(record))
            if n is not None:
                kept.urls[n], kept.parts[n] = url, part
    return kept


def _record_arrays(
    keyed: list[tuple[RecordKey, EntryRecord]], rows: Sequence[int], kept: _KeptParts
) -> tuple[list[str], dict[str, np.ndarray | Run]]:
    """The records at `rows` of `keyed` and their parts, as the arrays of a cache file (and its URLs);
    the records' JSON and the parts as runs (pack_pieces writes them as they come, never joined)."""
    keys = orjson.dumps([keyed[n][0] for n in rows])  # the key tuples as JSON arrays, no list made of each
    records, record_offsets = _json_run([keyed[n][1] for n in rows])
    part_run = [kept.parts[n] or b"" for n in rows]
    base_urls = [kept.urls[n] for n in rows]
    urls = sorted({url for url in base_urls if url is not None})
    url_index = {url: i for i, url in enumerate(urls)}
    return urls, {
        "record_keys": np.frombuffer(keys, dtype=np.uint8),
        "record_blob": records,
        "record_offsets": record_offsets,
        "part_blob": Run.of_bytes(part_run),
        "part_offsets": _offsets(part_run),
        "part_urls": np.array([-1 if url is None else url_index[url] for url in base_urls], dtype=np.int64),
    }


def _write(path: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """Write a file under a temporary name and rename it: a reader sees the old file or the new, whole.
    The name is its writer's (knowledge.partial_files): a killed writer's is removed by build_cache_sweep."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_path(path)
    try:
        with open(partial, "wb") as file:
            for piece in pieces:
                file.write(piece)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def build_cache_sweep() -> None:
    """Remove the temporary files of writers killed before they renamed them (when a worker starts and
    before each save), and those of versions that did not name them by writer, once a day old."""
    directory: Path = settings.EVERGREEN.build_cache_dir
    try:
        partials_sweep(directory)
        cutoff = time.time() - FOREIGN_AFTER_SECONDS
        for path in directory.glob("namespace-*"):
            if _UNNAMED_PARTIAL.match(path.name) and path.stat().st_mtime < cutoff:
                path_remove(path)
    except OSError as error:
        logger.warning("What killed writers left in %s was not all removed: %s", directory, error)


def build_cache_save(
    *, namespace_id: int, records: dict[RecordKey, EntryRecord], analysis: AnalysisCache, parts: PartsCache
) -> None:
    """Keep the namespace's caches on disk; a failure is logged.

    When this process knows the base file on disk (it wrote or read it), only what is not in that file
    is written, to the namespace's delta file (replacing the last delta at once), with which of the
    base's rows still apply; once the delta would hold more than a DELTA_SHARE-th of the base's rows or
    most of those rows no longer apply, the whole base is written again and the delta removed."""
    try:
        build_cache_sweep()
        keyed = list(records.items())
        kept = _parts_of(keyed, parts)
        with _bases_lock:
            base = _bases.get(namespace_id)
        if base is None or not _delta_save(namespace_id, base, keyed, kept, analysis):
            _full_save(namespace_id, keyed, kept, analysis)
    except OSError as error:
        logger.warning("The build caches of namespace %s were not kept on disk: %s", namespace_id, error)


def _full_save(
    namespace_id: int,
    keyed: list[tuple[RecordKey, EntryRecord]],
    kept: _KeptParts,
    analysis: AnalysisCache,
) -> None:
    urls, arrays = _record_arrays(keyed, range(len(keyed)), kept)
    analysis_meta, analysis_arrays = analysis.export()
    token = os.urandom(8).hex()
    meta = {**_identity(namespace_id), "token": token, "analysis": analysis_meta, "base_urls": urls}
    arrays |= {f"analysis_{name}": array for name, array in analysis_arrays.items()}
    keys = analysis_arrays["keys"]
    assert isinstance(keys, np.ndarray)  # the documents' digests, 16 bytes each: an array, not a run
    analysis_keys = keys.tobytes()
    _base_keep(namespace_id, None)
    _write(cache_path(namespace_id), pack_pieces(meta, arrays))
    delta_path(namespace_id).unlink(missing_ok=True)  # of the replaced base (a delta names its base)
    _base_keep(
        namespace_id,
        _Base(
            token=token,
            records=_Rows.of(_record_hashes((key for key, _ in keyed), len(keyed))),
            part_urls=kept.urls,
            analysis=_Rows.of(_digest_hashes(analysis_keys)),
            config=analysis_meta["config"],
        ),
    )


def _base_token_on_disk(namespace_id: int) -> str | None:
    """The token of the namespace's base file (another process of the host may have replaced it)."""
    try:
        with cache_path(namespace_id).open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            meta, arrays = unpack_arrays(data)
            del arrays
    except (OSError, ValueError):
        return None
    token = meta.get("token")
    return token if isinstance(token, str) else None


def _delta_save(
    namespace_id: int,
    base: _Base,
    keyed: list[tuple[RecordKey, EntryRecord]],
    kept: _KeptParts,
    analysis: AnalysisCache,
) -> bool:
    """Write what is not in the base file to the delta file; False (nothing written) when the base
    file should be written again instead."""
    if analysis.config() != base.config or _base_token_on_disk(namespace_id) != base.token:
        return False
    record_live = np.zeros(len(base.part_urls), dtype=np.uint8)
    rows: list[int] = []
    found = base.records.find(_record_hashes((key for key, _ in keyed), len(keyed))).tolist()
    for n, row in enumerate(found):
        url = kept.urls[n]
        if row >= 0 and base.part_urls[row] == url:
            record_live[row] = 1
        else:
            rows.append(n)
    analysis_live = np.zeros(len(base.analysis), dtype=np.uint8)
    digests = analysis.document_keys()
    known = base.analysis.find(_digest_hashes(b"".join(digests)))
    analysis_live[known[known >= 0]] = 1
    fresh = {digest for digest, row in zip(digests, known.tolist(), strict=True) if row < 0}
    # Both against the base's records: a base written after a build that patched its index holds the
    # analyses that build made alone (AnalysisCache.building keeps only those used), and measured
    # against them one new analysis was "too many", so every such save wrote the whole base again
    # (about 1 s of CPU per one-entry publish at 100,000 entries, issue 18 §3).
    too_many = (len(rows) + len(fresh)) * DELTA_SHARE > 2 * len(base.part_urls)
    if too_many or 2 * int(record_live.sum()) < len(base.part_urls):
        return False
    urls, arrays = _record_arrays(keyed, rows, kept)
    analysis_meta, analysis_arrays = analysis.export(only=fresh)
    meta = {**_identity(namespace_id), "base": base.token, "analysis": analysis_meta, "base_urls": urls}
    arrays |= {f"analysis_{name}": array for name, array in analysis_arrays.items()}
    arrays |= {"record_live": record_live, "analysis_live": analysis_live}
    _write(delta_path(namespace_id), pack_pieces(meta, arrays))
    return True


# The string fields many records hold the same value of, and the tuples (read back as lists): one
# object per value, read back (about 0.4 KB a record otherwise, 40 MB at 100,000 entries).
_SHARED = ("category", "updated", "review_state", "sensitivity", "approved_at", "review_by", "valid_until", "layer")
_TUPLES = tuple(field.name for field in fields(EntryRecord) if str(field.type).startswith("tuple"))


def _record(data: dict[str, Any], shared: dict[Any, Any]) -> EntryRecord:
    """The record `data` holds, its repeated strings and tuples of strings taken from `shared`."""
    same = shared.setdefault
    for name in _TUPLES:
        value = data.get(name)
        if value:
            items = tuple([same(item, item) if type(item) is str else item for item in value])
            # Only tuples of strings are shared: 1 and 1.0 are equal keys, but not the same JSON.
            data[name] = same(items, items) if all(type(item) is str for item in items) else items
        elif value is not None:
            data[name] = ()
    for name in _SHARED:
        value = data.get(name)
        if type(value) is str:
            data[name] = same(value, value)
    return EntryRecord(**data)


def _mapped(path: Path) -> mmap.mmap | None:
    try:
        with path.open("rb") as file:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return None


def build_cache_load(
    *, namespace_id: int, records: dict[RecordKey, EntryRecord], analysis: AnalysisCache, parts: PartsCache
) -> bool:
    """Fill empty caches from the namespace's files, when there are ones of this code; True when used.

    The base file is mapped, not read: each part is copied out of it and its pages are then dropped
    from the process (MADV_DONTNEED; the page cache keeps them), so loading holds one part of the file
    at a time beside what it restored, not the whole file (about 300 MB at 100,000 entries). The analysed
    terms stay in the mapped files until a build compiles in full (AnalysisCache.restore_deferred): a
    one-entry build that patches the index never reads them (about 145 MiB at 100,000 entries). The delta
    file is applied when it was written against this base file, and left out (the base alone is an
    older, still consistent cache) when it was not or cannot be read."""
    _base_keep(namespace_id, None)
    try:
        mapped = _mapped(cache_path(namespace_id))
    except (OSError, ValueError) as error:
        logger.warning("The build caches of namespace %s could not be read: %s", namespace_id, error)
        return False
    if mapped is None:
        return False
    try:
        restored = _restored(namespace_id, mapped, analysis)
    except Exception as error:  # noqa: BLE001 (a damaged cache is a full build, never a failed one)
        logger.warning("The build caches of namespace %s on disk are unreadable: %s", namespace_id, error)
        return False
    # The mapping goes with its last view: the analyses' arrays, until a build takes or forgets them.
    if restored is None:
        logger.info("The build caches of namespace %s on disk are of other code: a full build", namespace_id)
        return False
    kept, kept_parts, base = restored
    records.update(kept)
    parts.restore(kept_parts)
    _base_keep(namespace_id, base)
    return True


@dataclass
class _Delta:
    """A delta file read back: its records and parts, which base rows still apply, its analysis."""

    records: dict[RecordKey, EntryRecord]
    parts: list[tuple[Hashable, bytes]]
    record_live: np.ndarray
    analysis_live: np.ndarray
    analysis_meta: dict[str, Any]
    analysis_arrays: dict[str, np.ndarray]


def _delta(namespace_id: int, token: str, config: Any, rows: tuple[int, int]) -> tuple[mmap.mmap, _Delta] | None:
    """The namespace's delta file when it was written against the base file `token` (of `rows` records
    and analysed documents) and can be read; None otherwise (the base alone applies)."""
    try:
        mapped = _mapped(delta_path(namespace_id))
        if mapped is None:
            return None
        meta, arrays = unpack_arrays(mapped)
        expected = {**_identity(namespace_id), "base": token}
        if {key: meta.get(key) for key in expected} != expected or meta["analysis"].get("config") != config:
            logger.info("The build cache delta of namespace %s is of another base: left out", namespace_id)
            return None
        record_live, analysis_live = arrays["record_live"].astype(bool), arrays["analysis_live"].astype(bool)
        if (len(record_live), len(analysis_live)) != rows:
            raise ValueError("its masks do not fit the base file")
        records, parts = _records_and_parts(meta, arrays, _keys(arrays), None)
        prefix = "analysis_"
        analysis_arrays = {name[len(prefix) :]: a for name, a in arrays.items() if name.startswith(prefix)}
        del arrays
    except Exception as error:  # noqa: BLE001 (a damaged delta leaves the base alone, an older consistent cache)
        logger.warning("The build cache delta of namespace %s is unreadable: %s", namespace_id, error)
        return None
    return mapped, _Delta(records, parts, record_live, analysis_live, meta["analysis"], analysis_arrays)


def _keys(arrays: dict[str, np.ndarray]) -> list[RecordKey]:
    return [(int(k[0]), str(k[1]), str(k[2]), str(k[3])) for k in orjson.loads(arrays["record_keys"].tobytes())]


def _key_of(key: RecordKey, record: EntryRecord, shared: dict[Any, Any]) -> RecordKey:
    """The key with the record's own ID and category strings (the same values), not copies of them."""
    version, modified, public_id, category = key
    if (public_id, category) == (record.id, record.category):
        return (version, shared.setdefault(modified, modified), record.id, record.category)
    return key


def _records_and_parts(
    meta: dict[str, Any], arrays: dict[str, np.ndarray], keys: list[RecordKey], live: np.ndarray | None
) -> tuple[dict[RecordKey, EntryRecord], list[tuple[Hashable, bytes]]]:
    """A cache file's records (those `live` marks, or all) and their parts, copied out of its arrays."""
    offsets = arrays["record_offsets"].tolist()
    taken = [True] * len(keys) if live is None else live.tolist()
    blob = memoryview(arrays["record_blob"].data)
    shared: dict[Any, Any] = {}
    restored = [
        _record(orjson.loads(blob[a:b]), shared) if take else None
        for (a, b), take in zip(pairwise(offsets), taken, strict=True)
    ]
    del blob
    part_blob, part_offsets = memoryview(arrays["part_blob"].data), arrays["part_offsets"].tolist()
    urls = meta["base_urls"]
    kept_parts: list[tuple[Hashable, bytes]] = [
        (("context.json", record, urls[url]), part_blob[part_offsets[n] : part_offsets[n + 1]].tobytes())
        for n, (record, url) in enumerate(zip(restored, arrays["part_urls"].tolist(), strict=True))
        if url >= 0 and record is not None
    ]
    del part_blob
    kept: dict[RecordKey, EntryRecord] = {}
    for n, record in enumerate(restored):
        if record is not None:
            keys[n] = _key_of(keys[n], record, shared)  # in place: the caller keeps the keys too
            kept[keys[n]] = record
    return kept, kept_parts


def _restored(
    namespace_id: int, mapped: mmap.mmap, analysis: AnalysisCache
) -> tuple[dict[RecordKey, EntryRecord], list[tuple[Hashable, bytes]], _Base] | None:
    """The records and parts of a mapped base file and its delta, their analysis restored into `analysis`;
    None when the file is of other code. Each part's pages are dropped once it is copied out
    (build_cache_load)."""
    meta, arrays = unpack_arrays(mapped)
    if {key: meta.get(key) for key in _identity(namespace_id)} != _identity(namespace_id):
        return None
    keys = _keys(arrays)
    config = meta["analysis"].get("config")
    rows = (len(keys), len(arrays["analysis_keys"]) // 16)
    found = _delta(namespace_id, str(meta["token"]), config, rows)
    delta = found[1] if found is not None else None
    kept, kept_parts = _records_and_parts(meta, arrays, keys, delta.record_live if delta is not None else None)
    mapped.madvise(mmap.MADV_DONTNEED)
    prefix = "analysis_"
    analysis_arrays = {name[len(prefix) :]: a for name, a in arrays.items() if name.startswith(prefix)}
    saved = [Saved(meta["analysis"], analysis_arrays, delta.analysis_live if delta is not None else None)]
    if delta is not None:
        kept.update(delta.records)
        kept_parts += delta.parts
        saved.append(Saved(delta.analysis_meta, delta.analysis_arrays))
    # The analyses stay in the mapped files until a build compiles in full (a patching build never
    # reads them): only their keys are read now.
    analysis.restore_deferred(saved)
    mapped.madvise(mmap.MADV_DONTNEED)
    base_urls = meta["base_urls"]
    base = _Base(
        token=str(meta["token"]),
        records=_Rows.of(_record_hashes(keys, len(keys))),
        part_urls=[base_urls[url] if url >= 0 else None for url in arrays["part_urls"].tolist()],
        analysis=_Rows.of(_digest_hashes(arrays["analysis_keys"].tobytes())),
        config=config,
    )
    return kept, kept_parts, base
