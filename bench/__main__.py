"""`make bench`: every benchmark of issues 6 and 12 in one run, with its targets and PASS/MISS beside each ratio.

Run: .venv/bin/python -m bench [engine datasets quality scanner http memory scaling publish publish100k
serving] [--quick]
Without part names it runs them all. Progress goes to stderr, the report to stdout. --quick runs
smaller sizes and shorter rounds (1k/10k entries instead of up to 100k; memory on 10k) in a few
minutes; its numbers are for checking the harness, the full run's for the README.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import engine, evaluate_datasets, quality
from bench.buildmem import format_buildmem, measure_buildmem
from bench.datasets import COLLECTIONS
from bench.http import FULL_ROUNDS, QUICK_ROUNDS, format_http, measure_http
from bench.mcp import TARGET_RATIO as MCP_TARGET_RATIO
from bench.mcp import format_mcp, measure_mcp
from bench.memory import FULL_SIZE, QUICK_SIZE, format_memory, measure_memory
from bench.publish import (
    BENCH_REDIS,
    POSTGRES,
    PUBLISH_SIZE,
    BenchStack,
    PublishReport,
    bench_stack,
    exit_on_sigterm,
    format_publish,
    log,
    measure_publish,
)
from bench.requestlog import TARGET_RATIO, format_request_log, measure_request_log
from bench.scanner import measure_scanner
from bench.serving import ONE_WORKER_BEFORE_MIB, SWITCH_STALL_MS, format_serving, measure_serving

# The HTTP parts load the server with wrk; `make bench` installs it with apt-get when it can.
WRK_PARTS = frozenset({"http", "requestlog", "serving"})
WRK_MISSING = (
    "wrk is not installed (apt-get install wrk; `make bench` does it when apt-get is there): skipping {parts}."
)
PARTS = (
    "engine",
    "datasets",
    "quality",
    "scanner",
    "http",
    "requestlog",
    "memory",
    "scaling",
    "publish",
    "publish100k",
    "buildmem",
    "serving",
)
UNSTABLE = (
    "Absolute numbers on a shared machine are unstable (other jobs share its cores); "
    "the ratios, measured side by side in the same run, are what count."
)
MEMORY_TARGET_MIB = 1024
BUILD_TARGET_SECONDS = 30  # "well under a minute": at most half of one
# Issue 18 §3 and §4: a one-entry publish visible within 2 s at 10k entries and 10 s at 100k, a build's peak
# memory under 1 GB at 100k, one-entry builds growing far slower than the namespace (here: under half as
# fast, 10x the entries at most 5x the time), and a publish storing little of the release again.
LARGE_SIZE = 100_000
VISIBLE_TARGET_SECONDS = {10_000: 2.0, 100_000: 10.0}
BUILD_MEMORY_TARGET_MIB = 1024
ONE_ENTRY_GROWTH_TARGET = 5.0
STORED_SHARE_TARGET = 0.10


@dataclass(frozen=True)
class Check:
    """One target of issue 6 and what this run measured for it."""

    part: str
    what: str
    measured: float | None  # None: the part did not produce the number
    target: str
    passed: Callable[[float], bool]
    unit: str = "x"

    def verdict(self) -> str:
        if self.measured is None:
            return "n/a"
        return "PASS" if self.passed(self.measured) else "MISS"

    def line(self) -> str:
        value = "n/a" if self.measured is None else f"{self.measured:.2f}{self.unit}"
        return f"{self.what:52} {value:>12} {self.target:>12}  {self.verdict()}"


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    def section(self, title: str, body: str, checks: Sequence[Check] = ()) -> None:
        print(f"\n== {title} " + "=" * max(0, 96 - len(title)))
        print(body.rstrip())
        if checks:
            print()
            for check in checks:
                print(check.line())
        self.checks.extend(checks)
        sys.stdout.flush()


def machine_facts() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        found = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.MULTILINE)
        cpu = found[1] if found else cpu
    memory = re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.MULTILINE)
    ram = f"{int(memory[1]) / 2**20:.1f} GiB RAM" if memory else "RAM unknown"
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    return "\n".join(
        [
            f"machine: {cpu}, {os.cpu_count()} cores, {ram}, {platform.system()} {platform.release()}",
            f"software: Python {platform.python_version()}, {_postgres_version()}, {_redis_version()}, "
            f"{_wrk_version()}",
            f"load average at start: {load} (1, 5, 15 min); started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
            UNSTABLE,
        ]
    )


def _postgres_version() -> str:
    try:
        import psycopg

        with psycopg.connect(f"{POSTGRES}/postgres", connect_timeout=5) as connection:
            return "PostgreSQL " + str(connection.execute("SHOW server_version").fetchone()[0]).split()[0]  # type: ignore[index]
    except Exception as error:  # noqa: BLE001  # reported as a fact, the parts that need it fail loudly
        return f"PostgreSQL unreachable ({type(error).__name__})"


def _redis_version() -> str:
    try:
        import redis

        return "Redis " + str(redis.Redis.from_url(BENCH_REDIS, socket_timeout=5).info("server")["redis_version"])
    except Exception as error:  # noqa: BLE001
        return f"Redis unreachable ({type(error).__name__})"


def _wrk_version() -> str:
    import subprocess

    if shutil.which("wrk") is None:
        return "wrk not found"
    done = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
    return " ".join((done.stdout or done.stderr).split()[:2]) or "wrk (version unknown)"


def captured(run: Callable[[], object]) -> str:
    """What a bench module's main prints on stdout (its progress still goes to stderr)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run()
    return out.getvalue()


def table_rows(text: str, first: str = "entries") -> list[dict[str, str]]:
    """The rows of a right-aligned table whose header starts with `first`, as {column: cell}."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.split()[:1] == [first]), None)
    if start is None:
        return []
    header, rows = lines[start], []
    for line in lines[start + 1 :]:
        cells = list(re.finditer(r"\S+", line))
        if not cells or not cells[0][0].isdigit():
            break
        row, begin = {}, 0
        for cell in cells:
            row[header[begin : cell.end()].strip()] = cell[0]
            begin = cell.end()
        rows.append(row)
    return rows


def _number(row: dict[str, str] | None, column: str) -> float | None:
    try:
        return float(row[column]) if row else None
    except (KeyError, ValueError):
        return None


def run_engine(*, quick: bool) -> tuple[str, dict[int, dict[str, str]]]:
    """bench.engine's report and its rows by namespace size."""
    sizes = ["1000", "10000"] if quick else ["1000", "10000", "100000"]
    log(f"== engine ({', '.join(sizes)} entries)")
    text = captured(lambda: engine.main(["--sizes", *sizes, "--queries", "60" if quick else "200"]))
    return text, {int(row["entries"]): row for row in table_rows(text)}


def engine_section(report: Report, text: str, rows: dict[int, dict[str, str]]) -> None:
    largest = rows[max(rows)] if rows else None
    label = f"{max(rows)} entries" if rows else "the largest size"
    report.section(
        "Engine: query latency, Evergreen vs bm25s vs the seed's linear scan (bench.engine)",
        text,
        [
            Check("engine", f"p50 vs bm25s at {label} (bm25s / EG)", _number(largest, "bm25s/EG"), ">= 1", _ge(1)),
            Check(
                "engine",
                f"p50 vs the linear scan at {label} (scan / EG)",
                _number(largest, "scan/EG"),
                ">= 50",
                _ge(50),
            ),
        ],
    )


def scaling_section(report: Report, rows: dict[int, dict[str, str]]) -> None:
    """p50 by size from the engine rows; the pack column (search + packing) is shown when present."""
    p50 = {size: _number(row, "EG p50") for size, row in sorted(rows.items())}
    lines = []
    for size, row in sorted(rows.items()):
        pack = row.get("pack p50")
        lines.append(f"{size:>8} entries: p50 {row.get('EG p50', '?')} ms" + (f" (pack p50 {pack} ms)" if pack else ""))
    known = [value for value in p50.values() if value]
    growth = known[-1] / known[0] if len(known) > 1 else None
    span = f"{min(rows)} -> {max(rows)}" if rows else "1k -> 100k"
    report.section(
        "Scaling: engine p50 by namespace size (from the engine part)",
        "\n".join(lines) or "(no engine rows)",
        [Check("scaling", f"p50 growth {span} entries", growth, "< 3", lambda v: v < 3)],
    )


def _ge(limit: float) -> Callable[[float], bool]:
    return lambda value: value >= limit


def run_datasets(report: Report) -> None:
    log("== dataset quality")
    text = captured(lambda: evaluate_datasets.main([]))
    report.section(
        "Dataset quality: dev splits, Evergreen vs bm25s (bench.evaluate_datasets)",
        text + "(issue 6 sets no quality target; the retrieval-quality issue does)",
    )


def run_quality(report: Report, *, quick: bool) -> None:
    """Leave-one-collection-out (issue 11): defaults chosen on some collections, measured on another."""
    log("== retrieval quality, leave one collection out")
    text, folds = quality.run(COLLECTIONS, quick=quick)
    checks = []
    for fold in folds:
        numbers, name = fold.numbers, fold.held_out
        checks.append(Check("quality", f"{name}: nDCG@10 / bm25s, held out", fold.ratio, ">= 1.05", _ge(1.05)))
        matched = numbers["matched"]
        checks.append(Check("quality", f"{name}: matched on covered, automatic", matched, ">= 0.90", _ge(0.9)))
        if numbers["refused"] is not None:
            refused = numbers["refused"]
            checks.append(Check("quality", f"{name}: refused not covered, automatic", refused, ">= 0.80", _ge(0.8)))
        if numbers["filler"] is not None and numbers["filler_filled"]:
            reduction = 1 - numbers["filler"] / numbers["filler_filled"]
            checks.append(Check("quality", f"{name}: filler cut vs filling the budget", reduction, ">= 0.30", _ge(0.3)))
    report.section("Retrieval quality: leave one collection out, dev splits (bench.quality, issue 11)", text, checks)


def run_scanner(report: Report, *, quick: bool) -> None:
    log("== safety scanner")
    result = measure_scanner(rounds=1 if quick else 3)
    holdout = result.report["holdout"]
    report.section(
        "Safety scanner: labelled corpus, tuning and held-out halves, and throughput (bench.scanner, issue 12)",
        result.text(),
        [
            Check("scanner", "detection, held-out half", 100 * holdout.detection, ">= 95 %", _ge(95), unit=" %"),
            Check(
                "scanner",
                "false positives, held-out half",
                100 * holdout.false_positives,
                "<= 2 %",
                lambda v: v <= 2,
                unit=" %",
            ),
        ],
    )


def run_buildmem(report: Report, *, quick: bool) -> None:
    """Issue 18: a build's peak memory and one-entry builds, in process (no database, no worker)."""
    size = PUBLISH_SIZE if quick else LARGE_SIZE
    log(f"== release build in process, {size} entries")
    result = measure_buildmem(size=size, rounds=1)
    full = next(b for b in result["builds"] if b["kind"] == "full")
    restarted = next(b for b in result["builds"] if b["kind"] == "restarted")
    report.section(
        f"Release build in process: {size} synthetic entries (bench.buildmem --size {size})",
        format_buildmem(result),
        [
            Check(
                "buildmem",
                f"full build peak memory, {size} entries (MiB)",
                full["peak_mib"],
                f"< {MEMORY_TARGET_MIB}",
                lambda v: v < MEMORY_TARGET_MIB,
                unit="",
            ),
            Check(
                "buildmem",
                "first build after a restart / a full build",
                restarted["seconds"] / full["seconds"],
                "—",
                lambda v: v < 1,
            ),
        ],
    )


def run_http(report: Report, stack: BenchStack, *, quick: bool) -> None:
    log("== HTTP")
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    scenarios = {s.name: s for s in measure_http(stack, rounds=rounds, seconds=seconds)}
    miss = scenarios["context, miss"]
    log("== MCP search_context vs /api/context, cache misses")
    rate = statistics.median(run.rps for run in miss.evergreen)
    mcp = measure_mcp(stack, rounds=rounds, seconds=seconds, rate=rate)
    report.section(
        "HTTP: Evergreen under gunicorn vs a minimal WSGI app serving the same bytes (bench.http, bench.mcp)",
        format_http(list(scenarios.values())) + "\n\n" + format_mcp(mcp),
        [
            Check(
                "http",
                "cached /api/context req/s (EG / minimal app)",
                scenarios["context, cached"].ratio,
                ">= 0.5",
                _ge(0.5),
            ),
            Check("http", "304 req/s (EG / minimal app)", scenarios["context, 304"].ratio, ">= 0.6", _ge(0.6)),
            Check("http", "cache-miss req/s (EG / minimal app; stretch 0.5)", miss.ratio, ">= 0.35", _ge(0.35)),
            Check(
                "http",
                "MCP search_context cost / the same /api/context miss",
                mcp.ratio,
                f"<= {MCP_TARGET_RATIO}",
                lambda v: v <= MCP_TARGET_RATIO,
            ),
        ],
    )


def run_request_log(report: Report, stack: BenchStack, *, quick: bool) -> None:
    log("== request log")
    rounds, seconds = QUICK_ROUNDS if quick else FULL_ROUNDS
    cost = measure_request_log(stack, rounds=rounds, seconds=seconds)
    report.section(
        "Request log: cached /api/context with every request logged vs the log off (bench.requestlog, issue 14)",
        format_request_log(cost),
        [
            Check(
                "requestlog",
                "cached /api/context req/s (log on / log off)",
                cost.ratio,
                f">= {TARGET_RATIO:.2f}",
                _ge(TARGET_RATIO),
            )
        ],
    )


def run_memory(report: Report, stack: BenchStack, *, quick: bool) -> None:
    size = QUICK_SIZE if quick else FULL_SIZE
    log(f"== memory ({size} entries)")
    result = measure_memory(stack, size=size)
    report.section(
        "Memory: one gunicorn worker with the release loaded (bench.memory)",
        format_memory(result),
        [
            Check(
                "memory",
                f"resident memory, one worker, {size}-entry release",
                result.loaded_mib,
                f"< {MEMORY_TARGET_MIB} MiB",
                lambda v: v < MEMORY_TARGET_MIB,
                unit=" MiB",
            )
        ],
    )


def _publish_checks(result: PublishReport) -> list[Check]:
    size = result.build.entries
    # What a publish adds to the database (its new chunks, and its part rows, manifest and metrics), of its files.
    growth = statistics.median(sum(sample.table_growth.values()) / sample.files_bytes for sample in result.samples)
    visible_target = VISIBLE_TARGET_SECONDS.get(size)
    checks = [
        Check(
            "publish",
            f"one-entry publish -> visible, {size} entries (median)",
            result.median("to_visible"),
            f"< {visible_target:g} s" if visible_target else "-",
            (lambda v: v < visible_target) if visible_target else (lambda v: True),
            unit=" s",
        ),
        Check(
            "publish",
            f"storage growth per one-entry publish (the release tables on disk), {size} entries",
            growth * 100,
            f"< {STORED_SHARE_TARGET:.0%}",
            lambda v: v < STORED_SHARE_TARGET * 100,
            unit=" %",
        ),
    ]
    if size >= 100_000:
        checks.append(
            Check(
                "publish",
                f"peak build memory, {size} entries",
                result.peak_build_mib,
                f"< {BUILD_MEMORY_TARGET_MIB} MiB",
                lambda v: v < BUILD_MEMORY_TARGET_MIB,
                unit=" MiB",
            )
        )
    return checks


def run_publish(report: Report, stack: BenchStack, *, quick: bool, results: dict[int, PublishReport]) -> None:
    log("== publishing (10k entries)")
    result = results[PUBLISH_SIZE] = measure_publish(stack, rounds=3 if quick else 6)
    report.section(
        "Publishing: 10k release build, one-entry publish to visible on /api/context (bench.publish)",
        format_publish(result),
        [
            Check(
                "publish",
                f"full release build, {result.build.entries} entries",
                result.build.build_seconds,
                f"< {BUILD_TARGET_SECONDS} s",
                lambda v: v < BUILD_TARGET_SECONDS,
                unit=" s",
            ),
            *_publish_checks(result),
        ],
    )


def run_serving(report: Report, stack: BenchStack, *, quick: bool) -> None:
    size = QUICK_SIZE if quick else FULL_SIZE
    log(f"== serving ({size} entries)")
    result = measure_serving(stack, size=size)
    four = result.memory[4].pss_total
    report.section(
        "Serving at scale: memory per worker, a release switch under load, a slow client (bench.serving)",
        format_serving(result),
        [
            Check(
                "serving",
                f"4 workers' memory (PSS) / 4 x {ONE_WORKER_BEFORE_MIB} MiB (one before)",
                four / (4 * ONE_WORKER_BEFORE_MIB),
                "<= 0.50",
                lambda v: v <= 0.5,
            ),
            Check(
                "serving",
                "p99 during a release switch, switched namespace",
                result.switch.switch_p99_ms[0],
                f"< {SWITCH_STALL_MS} ms",
                lambda v: v < SWITCH_STALL_MS,
                unit=" ms",
            ),
            Check(
                "serving",
                "share of context.json a 2 MB/s client received",
                result.slow.received / result.slow.size,
                "= 1.00",
                lambda v: v == 1.0 and result.slow.worker_survived,
            ),
        ],
    )


def run_publish_100k(report: Report, stack: BenchStack, *, quick: bool, results: dict[int, PublishReport]) -> None:
    """The 100,000-entry scenario: import, full build, one-entry publishes to visible (minutes on 2 cores)."""
    log(f"== publishing ({LARGE_SIZE} entries: import, full build, one-entry publishes; several minutes)")
    result = results[LARGE_SIZE] = measure_publish(stack, rounds=2 if quick else 4, size=LARGE_SIZE)
    checks = _publish_checks(result)
    small = results.get(PUBLISH_SIZE)
    body = format_publish(result)
    if small is not None:
        growth = result.one_entry_build / small.one_entry_build
        body += (
            f"\none-entry build, {LARGE_SIZE} / {PUBLISH_SIZE} entries: {result.one_entry_build:.2f} s / "
            f"{small.one_entry_build:.2f} s = {growth:.1f}x for {LARGE_SIZE // PUBLISH_SIZE}x the entries"
        )
        checks.append(
            Check(
                "publish",
                f"one-entry build growth, {PUBLISH_SIZE} -> {LARGE_SIZE} entries",
                growth,
                f"< {ONE_ENTRY_GROWTH_TARGET:g}x",
                lambda v: v < ONE_ENTRY_GROWTH_TARGET,
            )
        )
    report.section(f"Publishing at scale: {LARGE_SIZE} entries (bench.publish --size {LARGE_SIZE})", body, checks)


def run_stack_parts(report: Report, parts: set[str], *, quick: bool, engine_rows: dict[int, dict[str, str]]) -> None:
    """The parts that run on the bench's own PostgreSQL, Redis, gunicorn and Celery worker."""
    with bench_stack() as stack:
        if "http" in parts:
            run_http(report, stack, quick=quick)
        if "requestlog" in parts:
            run_request_log(report, stack, quick=quick)
        if "memory" in parts:
            run_memory(report, stack, quick=quick)
        if "scaling" in parts:
            scaling_section(report, engine_rows)
        published: dict[int, PublishReport] = {}
        if "publish" in parts:
            run_publish(report, stack, quick=quick, results=published)
        if "publish100k" in parts:
            run_publish_100k(report, stack, quick=quick, results=published)
        if "serving" in parts:
            run_serving(report, stack, quick=quick)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("parts", nargs="*", metavar="part", help=f"any of: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes and shorter runs (a few minutes)")
    args = parser.parse_args(argv)
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s) {', '.join(sorted(unknown))}; choose from {', '.join(PARTS)}")
    parts = set(args.parts or PARTS)
    if parts & WRK_PARTS and shutil.which("wrk") is None:
        print(WRK_MISSING.format(parts=", ".join(sorted(parts & WRK_PARTS))), file=sys.stderr)
        parts -= WRK_PARTS
    exit_on_sigterm()
    started = time.monotonic()
    print("Evergreen benchmarks" + (" (--quick: smaller sizes, shorter rounds)" if args.quick else ""))
    print(machine_facts())
    report = Report()
    engine_text, engine_rows = run_engine(quick=args.quick) if parts & {"engine", "scaling"} else ("", {})
    if "engine" in parts:
        engine_section(report, engine_text, engine_rows)
    if "datasets" in parts:
        run_datasets(report)
    if "quality" in parts:
        run_quality(report, quick=args.quick)
    if "scanner" in parts:
        run_scanner(report, quick=args.quick)
    if "buildmem" in parts:
        run_buildmem(report, quick=args.quick)
    run_stack_parts(report, parts, quick=args.quick, engine_rows=engine_rows)
    print("\n== Targets (issues 6, 11, 12, 14 and 18) " + "=" * 56)
    print(f"{'target':52} {'measured':>12} {'wanted':>12}  verdict")
    for check in report.checks:
        print(check.line())
    print(f"\n{UNSTABLE}\n(total {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
