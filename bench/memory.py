"""Resident memory of one gunicorn worker serving a 100,000-entry release, and import/build times.

The namespace is imported through `manage.py import_entries` and its release built (bench.publish.
BenchStack, which also imports the 10,000-entry namespace for the smaller times). One gunicorn worker
then answers /healthz (Django loaded, no release) and /t/<namespace>/api/context (the release loaded
and a few topics ranked); VmRSS and VmHWM come from /proc/<worker>/status.

Run: .venv/bin/python -m bench.memory [--quick]   (--quick: 10,000 entries instead of 100,000)
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.publish import BenchStack, NamespaceTimes, bench_stack, exit_on_sigterm, log, slug_for

FULL_SIZE = 100_000
QUICK_SIZE = 10_000
TOPICS = ("heat transfer in a boundary layer", "token 预算", "战国无双的开发商是谁", "supersonic wing flutter")


@dataclass(frozen=True)
class MemoryReport:
    entries: int
    idle_mib: float  # the worker after /healthz: Django and the engine imported, no release
    loaded_mib: float  # after the release was loaded and the topics answered
    peak_mib: float  # VmHWM: the most the worker ever held, loading included
    load_seconds: float  # the first /api/context of the namespace (loads the release)
    times: list[NamespaceTimes]


def memory_of(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()

    def field(name: str) -> float:
        match = re.search(rf"^{name}:\s+(\d+) kB", status, re.MULTILINE)
        assert match is not None, name
        return int(match[1]) / 1024

    return field("VmRSS"), field("VmHWM")


def _ask(port: int, slug: str, topic: str) -> None:
    from bench.http import fetch

    status = fetch(port, f"/t/{slug}/api/context?" + urllib.parse.urlencode({"topic": topic}))[0]
    if status != 200:
        raise RuntimeError(f"/t/{slug}/api/context answered {status}")


def measure_memory(stack: BenchStack, *, size: int) -> MemoryReport:
    from bench.http import fetch, gunicorn

    times = [stack.synthetic(s) for s in sorted({QUICK_SIZE, size})]
    slug = slug_for(size)
    with gunicorn(stack, "evergreen_site.wsgi", workers=1, log="memory") as server:
        (pid,) = server.worker_pids()
        fetch(server.port, "/healthz")
        idle, _ = memory_of(pid)
        log(f"memory: loading the {size}-entry release in one worker")
        started = time.perf_counter()
        _ask(server.port, slug, TOPICS[0])
        load_seconds = time.perf_counter() - started
        for topic in TOPICS[1:]:
            _ask(server.port, slug, topic)
        loaded, peak = memory_of(pid)
    return MemoryReport(
        entries=size, idle_mib=idle, loaded_mib=loaded, peak_mib=peak, load_seconds=load_seconds, times=times
    )


def format_memory(report: MemoryReport) -> str:
    lines = [
        f"one gunicorn worker, {report.entries}-entry release: {report.loaded_mib:.0f} MiB resident "
        f"({report.idle_mib:.0f} MiB before loading it; peak {report.peak_mib:.0f} MiB while loading); "
        f"first request {report.load_seconds:.1f} s (loads the release)",
        "",
        f"{'entries':>8} {'import_entries s':>16} {'build s':>8}",
    ]
    lines += [f"{t.entries:>8} {t.import_seconds:>16.1f} {t.build_seconds:>8.1f}" for t in report.times]
    lines.append("(import: the whole command, process start included; build: release_build in a fresh process)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZE} entries instead of {FULL_SIZE}")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    with bench_stack() as stack:
        print(format_memory(measure_memory(stack, size=QUICK_SIZE if args.quick else FULL_SIZE)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
