"""A release build's peak memory and a one-entry build, in process, on the synthetic namespace.

The full bench (bench.publish, `publish100k`) imports 100,000 entries through PostgreSQL and builds
with a real Celery worker: about half an hour on a loaded machine. This part measures the build
itself in a fresh child process, from the synthetic snapshot (bench.synthetic) held as entry
records: a full build (render, validate, measure, cut into the chunks storage keeps) as a worker's
first build of a namespace does it, then one-entry changes built from the worker's caches, and a
one-entry change in a new process that reads the caches back from disk (a worker's first build after a
restart, knowledge.services.build_cache; the peak while reading them back, part of a worker's first
build after a restart, is reported beside it). The caches are kept on disk after each build, as a
worker does (the time and CPU of that are reported as the build's "cache save" and "its CPU", outside
its seconds and peak). Memory is
the process's resident set read from /proc/self/status: VmHWM (its peak) is reset before each
build, so each build's peak is its own; the build's Python objects, Django and the snapshot are in it.

Run: .venv/bin/python -m bench.buildmem [--size 100000] [--rounds 2]   (progress on stderr)
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.publish import PYTHON, ROOT, log

CHILD_FLAG = "--child"
STAMP_DATE = "2026-09-02"
LOGGED = frozenset({"search.index", "context.json", "llms.txt", "sitemap.xml", "llms-full/workflow.txt"})


def _status_mib(name: str) -> float:
    found = re.search(rf"^{name}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE)
    return int(found[1]) / 1024 if found else 0.0


def _peak_reset() -> None:
    """Reset VmHWM to the current resident set (Linux: 5 > /proc/self/clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


@dataclass(frozen=True)
class BuildFigures:
    kind: str  # "full" or "one entry"
    seconds: float
    before_mib: float  # resident before the build (the snapshot, Django and the caches)
    peak_mib: float  # VmHWM during the build
    after_mib: float  # resident after (the caches kept)
    phases: dict[str, float]  # seconds per step
    read_peak_mib: float = 0.0  # after a restart: VmHWM while the caches are read back (before the build)


def _snapshot(size: int, entries: Sequence[Any] | None = None) -> Any:
    """The synthetic namespace of `size` entries, or of `entries` (read back from a cache)."""
    from bench.synthetic import build_namespace
    from knowledge.retrieval.snapshot import CategoryInfo, EntryRecord, NamespaceInfo, Snapshot

    categories = ("fact", "rule", "workflow")
    namespace = NamespaceInfo(
        slug="syn",
        name="Synthetic",
        prefix="SYN",
        title="Synthetic",
        summary="The bench's synthetic namespace.",
        contact="",
        license="CC-BY-4.0",
        base_url="https://bench.example.com/t/syn",
        language="en",
        is_public=True,
        default_budget=2000,
        rules=("Cite entry IDs.",),
        categories=tuple(CategoryInfo(slug, slug.title(), "") for slug in categories),
    )
    if entries is not None:
        return Snapshot(namespace=namespace, entries=tuple(entries))
    made = tuple(
        EntryRecord(
            id=d.id,
            category=d.category if d.category in categories else "fact",
            title=d.title,
            summary=d.summary,
            body=d.body,
            tags=d.tags,
            confidence=d.confidence,
            tokens=d.tokens,
            updated=STAMP_DATE,
            version=1,
            content_hash=f"h{n}",
        )
        for n, d in enumerate(build_namespace(size))
    )
    return Snapshot(namespace=namespace, entries=made)


def _steps(snapshot: Any, stamp: Any, caches: Any) -> dict[str, float]:
    """What services.releases._build does between reading the snapshot and writing rows, step by step."""
    from knowledge.retrieval.render.release import SEARCH_INDEX, render_release
    from knowledge.selectors.pages import release_metrics_measure
    from knowledge.services.release_materialise import release_index_mapped
    from knowledge.services.release_storage import artifacts_chunked
    from knowledge.services.releases import release_validate

    phases: dict[str, float] = {}
    at = time.perf_counter()

    def step(name: str) -> None:
        nonlocal at
        now = time.perf_counter()
        phases[name] = now - at
        at = now

    def written(name: str) -> None:
        if name in LOGGED:
            log(f"buildmem:   {name} written: {_status_mib('VmRSS'):.0f} MiB resident, peak {_status_mib('VmHWM'):.0f}")

    artifacts = render_release(snapshot, stamp, analysis=caches[0], parts=caches[1], progress=written)
    step("render")
    index = release_index_mapped(next(a for a in artifacts if a.name == SEARCH_INDEX))
    release_validate(snapshot, stamp, artifacts, index=index)
    step("validate")
    release_metrics_measure(snapshot, stamp, artifacts, index=index)
    step("metrics")
    for _ in artifacts_chunked(artifacts):
        pass
    step("chunks")
    return phases


def _build(kind: str, snapshot: Any, caches: Any, sequence: int) -> BuildFigures:
    from knowledge.retrieval.snapshot import ReleaseStamp

    at = f"{STAMP_DATE}T10:00:00Z"
    stamp = ReleaseStamp(sequence=sequence, knowledge_version=f"1.{sequence}.0", revision=STAMP_DATE, generated_at=at)
    gc.collect()
    before = _status_mib("VmRSS")
    _peak_reset()
    started = time.perf_counter()
    phases = _steps(snapshot, stamp, caches)
    seconds = time.perf_counter() - started
    peak = _status_mib("VmHWM")
    gc.collect()
    return BuildFigures(kind, seconds, before, peak, _status_mib("VmRSS"), phases)


def _key(number: int, entry: Any) -> tuple[int, datetime, str, str]:
    """A stand-in for the record key a snapshot read gives (version id, modified_at, ID, category)."""
    return (entry.version * 1_000_000 + number, datetime(2026, 9, 2, tzinfo=UTC), entry.id, entry.category)


def _edited(snapshot: Any, round_: int) -> Any:
    entries = list(snapshot.entries)
    at = (round_ * 7919 + len(entries) // 2) % len(entries)
    entries[at] = replace(entries[at], body=entries[at].body + f" Edited in round {round_}.", version=2 + round_)
    return replace(snapshot, entries=tuple(entries))


def _restarted(size: int, rounds: int, records: dict[Any, Any], caches: Any) -> list[BuildFigures]:
    """A new process that takes the caches kept on disk back and builds one more one-entry change."""
    from knowledge.services.build_cache import build_cache_load

    figures = []
    gc.collect()
    _peak_reset()
    started, cpu = time.perf_counter(), time.process_time()
    build_cache_load(namespace_id=0, records=records, analysis=caches[0], parts=caches[1])
    loaded, loaded_cpu = time.perf_counter() - started, time.process_time() - cpu
    read_peak = _status_mib("VmHWM")
    log(f"buildmem: caches read back from disk in {loaded:.1f} s ({len(records)} records), peak {read_peak:.0f}")
    # As a snapshot read gives: the records read back (the last process's entries after its edits,
    # in the order of their numbers, _key), not a second copy of them made again. A worker reads only
    # the keys of unchanged entries from the database.
    kept = sorted(records.items(), key=lambda item: int(item[0][0]) % 1_000_000)
    snapshot = _snapshot(size, [record for _, record in kept])
    del kept
    if len(snapshot.entries) != size:
        raise RuntimeError(f"the caches on disk hold {len(snapshot.entries)} records, not {size}")
    figures.append(_build("restarted", _edited(snapshot, rounds), caches, 9))
    figures[-1].phases["cache read"] = loaded
    figures[-1].phases["its CPU"] = loaded_cpu
    figures[-1] = replace(figures[-1], read_peak_mib=read_peak)
    log(f"buildmem: one-entry build after a restart {figures[-1].seconds:.1f} s, peak {figures[-1].peak_mib:.0f}")
    return figures


def _child(size: int, rounds: int, cache_dir: str, restarted: bool) -> dict[str, Any]:
    """The full build and `rounds` one-entry builds, the caches then kept in `cache_dir`; or, `restarted`,
    a process that takes those caches back and builds one more one-entry change."""
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.base")
    django.setup()
    from django.conf import settings

    from knowledge.retrieval.render.release import AnalysisCache, PartsCache
    from knowledge.services.build_cache import build_cache_save
    from knowledge.services.heap import heap_mmap_threshold_set

    heap_mmap_threshold_set()  # as a Celery worker does when it starts (knowledge.tasks)
    settings.EVERGREEN = replace(settings.EVERGREEN, build_cache_dir=Path(cache_dir))
    records: dict[Any, Any] = {}
    caches = (AnalysisCache(), PartsCache())
    figures = []
    if restarted:
        return {"size": size, "builds": [f.__dict__ for f in _restarted(size, rounds, records, caches)]}
    started = time.perf_counter()
    snapshot = _snapshot(size)
    log(f"buildmem: {size} synthetic entries made in {time.perf_counter() - started:.1f} s")

    def saved(figures: BuildFigures) -> None:
        """The caches kept on disk after the build, as a worker does after each (not in its peak)."""
        records.clear()
        records.update((_key(n, e), e) for n, e in enumerate(snapshot.entries))
        started, cpu = time.perf_counter(), time.process_time()
        build_cache_save(namespace_id=0, records=records, analysis=caches[0], parts=caches[1])
        figures.phases["cache save"] = time.perf_counter() - started
        figures.phases["its CPU"] = time.process_time() - cpu
        log(f"buildmem: caches written to disk in {figures.phases['cache save']:.1f} s")

    figures.append(_build("full", snapshot, caches, 1))
    log(f"buildmem: full build {figures[-1].seconds:.1f} s, peak {figures[-1].peak_mib:.0f} MiB")
    saved(figures[-1])
    for round_ in range(rounds):
        snapshot = _edited(snapshot, round_)
        figures.append(_build("one entry", snapshot, caches, 2 + round_))
        log(f"buildmem: one-entry build {figures[-1].seconds:.1f} s, peak {figures[-1].peak_mib:.0f} MiB")
        saved(figures[-1])
    return {"size": size, "builds": [f.__dict__ for f in figures]}


def _run(size: int, rounds: int, cache_dir: str, *, restarted: bool) -> list[dict[str, Any]]:
    command = [PYTHON, "-m", "bench.buildmem", CHILD_FLAG, "--size", str(size), "--rounds", str(rounds)]
    command += ["--cache-dir", cache_dir, *(["--restarted"] if restarted else [])]
    done = subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1])["builds"])


def measure_buildmem(*, size: int, rounds: int) -> dict[str, Any]:
    """The builds in fresh processes (each one's memory is its builds' alone): a worker's first build and
    one-entry builds, then a restarted worker's first one-entry build from the caches kept on disk."""
    log(f"buildmem: building a {size}-entry synthetic namespace in a child process")
    with tempfile.TemporaryDirectory(prefix="buildmem-") as cache_dir:
        builds = _run(size, rounds, cache_dir, restarted=False)
        log("buildmem: a new process, as after a worker restart")
        builds += _run(size, rounds, cache_dir, restarted=True)
    return {"size": size, "builds": builds}


def format_buildmem(report: dict[str, Any]) -> str:
    lines = [
        f"release build in process, {report['size']} synthetic entries (bench.buildmem; peak = VmHWM of the build)",
        f"{'build':>10} {'seconds':>8} {'before MiB':>10} {'peak MiB':>9} {'after MiB':>9}  steps (s)",
    ]
    for b in report["builds"]:
        steps = ", ".join(f"{name} {seconds:.1f}" for name, seconds in b["phases"].items())
        if b.get("read_peak_mib"):
            steps += f" (peak {b['read_peak_mib']:.0f} MiB while reading)"
        lines.append(
            f"{b['kind']:>10} {b['seconds']:>8.1f} {b['before_mib']:>10.0f} {b['peak_mib']:>9.0f} "
            f"{b['after_mib']:>9.0f}  {steps}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="one-entry builds after the full one")
    parser.add_argument(CHILD_FLAG, action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    parser.add_argument("--restarted", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.size, args.rounds, args.cache_dir, args.restarted)))
        return 0
    print(format_buildmem(measure_buildmem(size=args.size, rounds=args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
