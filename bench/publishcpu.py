"""CPU time of one-entry builds in one process, on the namespace bench.publish left in the bench database.

bench.publish times a publish through Celery and gunicorn by the wall clock, which other jobs on a
loaded machine stretch several times over. This runs the same one-entry change (the import service,
one reviewed line) and `release_build` in a single process, a warm-up build first (it fills this
process's build caches: bench.publish's worker kept its own in the bench's directory, gone with it), and
prints the process's CPU seconds per build (getrusage: every thread of this process; PostgreSQL's own
work is not in it). Compare two checkouts by running
each, alternately, on the same database.

`--phases` also prints each step of the build's CPU per build (the functions releases._build calls,
wrapped) and the cyclic collector's CPU inside the builds (gc.callbacks).

Run: .venv/bin/python -m bench.publish --size 10000 --quick   (once: imports syn10k)
     .venv/bin/python -m bench.publishcpu [--builds 5] [--slug syn10k] [--phases]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import secrets
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from bench.publish import SERVICES


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _change(slug: str, number: int) -> None:
    from knowledge.models import Namespace
    from knowledge.services.imports import entries_import, entries_parse

    entry_id = f"SYN-{number:06d}"
    line = {"id": entry_id, "category": "fact", "title": f"Changed {entry_id}", "body": f"Now {secrets.token_hex(4)}."}
    items = entries_parse([json.dumps(line)])
    entries_import(namespace=Namespace.objects.get(slug=slug), items=items, actor=None, publish=True)


# What releases._build calls, each timed with --phases (the cache save after the switch included).
PHASES = (
    "_snapshot",
    "_render",
    "release_index_mapped",
    "release_validate",
    "release_metrics_measure",
    "release_files_write",
    "artifacts_store",
    "_manifest",
    "_manifest_stored",
    "_manifest_keep",
    "_latest_release",
    "visible",
    "freshness_counts",
    "release_gate_check",
    "_stamp",
    "calibration_lineage",
    "_build_caches_keep",
)


def _timed(spent: dict[str, float], name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = _cpu()
        try:
            return call(*args, **kwargs)
        finally:
            spent[name] += _cpu() - started

    return timed


def phases_measure(slug: str, builds: int) -> tuple[list[float], dict[str, float]]:
    """measure(), with the CPU of each of PHASES and of the collector inside the builds, per build."""
    from knowledge.services import releases

    spent: dict[str, float] = defaultdict(float)
    for name in PHASES:
        setattr(releases, name, _timed(spent, name, getattr(releases, name)))
    collecting = {"since": 0.0}

    def collector(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collecting["since"] = _cpu()
        elif inside["build"]:
            spent["collector"] += _cpu() - collecting["since"]

    inside = {"build": False}
    real_build = releases.release_build

    def build(**kwargs: Any) -> Any:
        inside["build"] = True
        try:
            return real_build(**kwargs)
        finally:
            inside["build"] = False

    releases.release_build = build
    gc.callbacks.append(collector)
    try:
        seconds = measure(slug, builds, warmed=spent.clear)  # the warm-up's phases are left out
    finally:
        gc.callbacks.remove(collector)
        releases.release_build = real_build
    return seconds, {name: value / builds for name, value in sorted(spent.items(), key=lambda item: -item[1])}


def measure(slug: str, builds: int, *, warmed: Callable[[], None] | None = None) -> list[float]:
    """CPU seconds of each of `builds` one-entry builds after a warm-up one (then `warmed` is called)."""
    from knowledge.models import Namespace
    from knowledge.services.releases import release_build

    namespace_id = Namespace.objects.get(slug=slug).pk
    seconds = []
    for number in range(builds + 1):
        _change(slug, 500 + number)
        started = _cpu()
        release_build(namespace_id=namespace_id)
        seconds.append(_cpu() - started)
        if number == 0 and warmed is not None:
            warmed()
    return seconds[1:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--builds", type=int, default=5)
    parser.add_argument("--slug", default="syn10k")
    parser.add_argument("--phases", action="store_true", help="also the CPU of each step of the build")
    args = parser.parse_args(argv)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base",
            "DATABASE_URL": f"{SERVICES.postgres}/{SERVICES.database}",
            "REDIS_URL": SERVICES.redis_url,
            "CELERY_BROKER_URL": "memory://",  # the import's own build request is dropped: builds run here
            "EVERGREEN_LOG_LEVEL": "WARNING",
        }
    )
    os.environ.setdefault("EVERGREEN_SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("EVERGREEN_DEBUG", "0")
    import django

    django.setup()
    from knowledge.services.heap import heap_mmap_threshold_set

    heap_mmap_threshold_set()  # as a Celery worker does when it starts (knowledge.tasks)
    phases: dict[str, float] = {}
    if args.phases:
        seconds, phases = phases_measure(args.slug, args.builds)
    else:
        seconds = measure(args.slug, args.builds)
    mean = sum(seconds) / len(seconds)
    print(f"{args.slug}: {len(seconds)} one-entry builds, CPU s each: {' '.join(f'{s:.2f}' for s in seconds)}")
    print(f"mean {mean:.3f} s CPU per build (this process; load {os.getloadavg()[0]:.1f})")
    for name, value in phases.items():
        print(f"  {name:28s} {value:.3f} s")
    if phases:
        print(f"  {'(the rest)':28s} {mean - sum(v for n, v in phases.items() if n != 'collector'):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
