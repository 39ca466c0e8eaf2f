"""A build worker's caches kept on disk, so its first build of a namespace after a restart is incremental too.

A process keeps, per namespace, the entry records, analysed terms and context.json parts of its last
build (knowledge.services.releases). They lived only in the process, so a restarted worker's first
build read, analysed and rendered every entry again (223 s at 100,000 entries). After each build the
caches are written to one file per namespace in EVERGREEN_BUILD_CACHE_DIR (a container of arrays,
written to a temporary name and renamed), and a process without caches for a namespace reads that
file first. What is read back is only ever used where it provably applies:

- entry records by their key (the live version's id, its modified_at, ID and category), as in memory;
- analysed terms by a digest of the whole document;
- context.json parts by the entry record and the namespace URL they were rendered from;
- and nothing at all when the code that makes them may have changed or the ids may mean other rows:
  the file names the digest of the retrieval engine's and the snapshot reader's source files and the
  database, and a file of other code or another database is ignored.

So a release built from a restored cache is byte-identical to a full build
(tests/knowledge/test_build_cache.py). A missing, foreign or damaged file means a full build, never a
failed one.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import tempfile
from collections.abc import Hashable, Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from django.conf import settings
from django.db import connection

from knowledge.retrieval.container import pack_pieces, unpack_arrays
from knowledge.retrieval.render.analysis_cache import AnalysisCache
from knowledge.retrieval.render.parts import PartsCache
from knowledge.retrieval.snapshot import EntryRecord
from knowledge.selectors.snapshots import RecordKey

logger = logging.getLogger(__name__)

FORMAT = 1
_CODE = ("knowledge/retrieval", "knowledge/selectors/snapshots.py", "knowledge/services/build_cache.py")
_ROOT = Path(__file__).resolve().parents[2]


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


def _blob(chunks: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in chunks], out=offsets[1:])
    return np.frombuffer(b"".join(chunks), dtype=np.uint8), offsets


def _pieces(
    namespace_id: int, records: dict[RecordKey, EntryRecord], analysis: AnalysisCache, parts: PartsCache
) -> Iterator[bytes | memoryview]:
    keyed = list(records.items())
    position = {id(record): n for n, (_, record) in enumerate(keyed)}
    by_record: dict[int, tuple[str, bytes]] = {}
    for key, part in parts.items():
        if isinstance(key, tuple) and len(key) == 3 and key[0] == "context.json" and id(key[1]) in position:
            by_record[position[id(key[1])]] = (key[2], part)
    keys = orjson.dumps([list(k) for k, _ in keyed])
    record_blob, record_offsets = _blob([orjson.dumps(record) for _, record in keyed])
    part_blob, part_offsets = _blob([by_record[n][1] if n in by_record else b"" for n in range(len(keyed))])
    base_urls = [by_record[n][0] if n in by_record else None for n in range(len(keyed))]
    analysis_meta, analysis_arrays = analysis.export()
    urls = sorted({url for url in base_urls if url is not None})
    meta = {
        "format": FORMAT,
        "code": code_digest(),
        "namespace": namespace_id,
        "database": _database(),
        "analysis": analysis_meta,
        "base_urls": urls,
    }
    url_index = {url: i for i, url in enumerate(urls)}
    arrays = {
        "record_keys": np.frombuffer(keys, dtype=np.uint8),
        "record_blob": record_blob,
        "record_offsets": record_offsets,
        "part_blob": part_blob,
        "part_offsets": part_offsets,
        "part_urls": np.array([-1 if url is None else url_index[url] for url in base_urls], dtype=np.int64),
        **{f"analysis_{name}": array for name, array in analysis_arrays.items()},
    }
    return pack_pieces(meta, arrays)


def build_cache_save(
    *, namespace_id: int, records: dict[RecordKey, EntryRecord], analysis: AnalysisCache, parts: PartsCache
) -> None:
    """Write the namespace's caches to disk (replacing the last file at once); a failure is logged."""
    path = cache_path(namespace_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name, delete=False) as file:
            try:
                for piece in _pieces(namespace_id, records, analysis, parts):
                    file.write(piece)
            except BaseException:
                os.unlink(file.name)
                raise
        os.replace(file.name, path)
    except OSError as error:
        logger.warning("The build caches of namespace %s were not kept on disk: %s", namespace_id, error)


def _record(data: dict[str, Any]) -> EntryRecord:
    fields: dict[str, Any] = {name: tuple(value) if isinstance(value, list) else value for name, value in data.items()}
    return EntryRecord(**fields)


def build_cache_load(
    *, namespace_id: int, records: dict[RecordKey, EntryRecord], analysis: AnalysisCache, parts: PartsCache
) -> bool:
    """Fill empty caches from the namespace's file, when there is one of this code; True when it was used.

    The file is mapped, not read: each part is copied out of it and its pages are then dropped from the
    process (MADV_DONTNEED; the page cache keeps them), so loading holds one part of the file at a time
    beside what it restored, not the whole file (about 300 MB at 100,000 entries)."""
    path = cache_path(namespace_id)
    try:
        file = path.open("rb")
    except FileNotFoundError:
        return False
    except OSError as error:
        logger.warning("The build caches of namespace %s could not be read: %s", namespace_id, error)
        return False
    with file:
        try:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            restored = _restored(namespace_id, mapped, analysis)
        except Exception as error:  # noqa: BLE001 (a damaged cache is a full build, never a failed one)
            logger.warning("The build caches of namespace %s on disk are unreadable: %s", namespace_id, error)
            return False
    # The mapping goes with its last view (none outlives _restored: what it returns are copies).
    if restored is None:
        logger.info("The build caches of namespace %s on disk are of other code: a full build", namespace_id)
        return False
    kept, kept_parts = restored
    records.update(kept)
    parts.restore(kept_parts)
    return True


def _restored(
    namespace_id: int, mapped: mmap.mmap, analysis: AnalysisCache
) -> tuple[dict[RecordKey, EntryRecord], list[tuple[Hashable, bytes]]] | None:
    """The records and parts of a mapped cache file, its analysis restored into `analysis`; None when
    the file is of other code. Each part's pages are dropped once it is copied out (build_cache_load)."""
    meta, arrays = unpack_arrays(mapped)
    identity = (meta.get("format"), meta.get("code"), meta.get("namespace"), meta.get("database"))
    if identity != (FORMAT, code_digest(), namespace_id, _database()):
        return None
    keys = orjson.loads(arrays["record_keys"].tobytes())
    blob, offsets = memoryview(arrays["record_blob"].data), arrays["record_offsets"].tolist()
    restored = [_record(orjson.loads(blob[a:b])) for a, b in pairwise(offsets)]
    del blob
    mapped.madvise(mmap.MADV_DONTNEED)
    kept = {(int(k[0]), str(k[1]), str(k[2]), str(k[3])): record for k, record in zip(keys, restored, strict=True)}
    part_blob, part_offsets = memoryview(arrays["part_blob"].data), arrays["part_offsets"].tolist()
    urls = meta["base_urls"]
    kept_parts: list[tuple[Hashable, bytes]] = [
        (("context.json", record, urls[url]), part_blob[part_offsets[n] : part_offsets[n + 1]].tobytes())
        for n, (record, url) in enumerate(zip(restored, arrays["part_urls"].tolist(), strict=True))
        if url >= 0
    ]
    del part_blob
    mapped.madvise(mmap.MADV_DONTNEED)
    prefix = "analysis_"
    analysis_arrays = {name[len(prefix) :]: a for name, a in arrays.items() if name.startswith(prefix)}
    analysis.restore(meta["analysis"], analysis_arrays)
    mapped.madvise(mmap.MADV_DONTNEED)
    return kept, kept_parts
