"""HTTP throughput and latency of Evergreen under gunicorn, as ratios against a minimal WSGI app.

Evergreen runs with production-like settings (PostgreSQL, Redis, DEBUG off, the rate limiter on; see
bench.publish.BenchStack). Its answers are recorded, and bench/baseline_app.py replays them byte for
byte under the same gunicorn configuration, so the ratio is what Evergreen's own work costs on top
of gunicorn, the socket and the bytes. Load comes from wrk in a separate process; Evergreen and
the baseline alternate run by run (A B, B A, ...) and the ratio is the median of the rounds' ratios.

Scenarios: /api/context answered from the response cache (the same URL every time), the same URL
with If-None-Match (304), cache misses (a distinct topic and budget per request, over the 10,000-entry
synthetic namespace: ranking, packing and serialization every time), and /llms.txt.

Run: .venv/bin/python -m bench.http [--quick]   (progress on stderr, the table on stdout)
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.publish import (
    BENCH_RATE_LIMIT,
    ROOT,
    BenchStack,
    bench_stack,
    exit_on_sigterm,
    log,
    slug_for,
    stop_process_group,
    wait_for,
)
from bench.redisdb import redis_flush_owned

WRK = "wrk"
WRK_DIR = Path(__file__).resolve().with_name("wrk")
FULL_ROUNDS = (5, 5.0)  # (alternated rounds, seconds per wrk run)
QUICK_ROUNDS = (2, 3.0)
WORKERS = 2  # one per core; the same for Evergreen and the baseline
CONNECTIONS = 4
MISS_SIZE = 10_000
HIT_TARGET = "/api/context?" + urllib.parse.urlencode({"topic": "token 预算", "budget": 2000})
LLMS_TARGET = "/llms.txt"
MAX_TOPIC = 200
MAX_BUDGET = 8000  # /api/context clamps budgets to [200, 8000] (seed §4)
# Budget cycles of the miss paths (see miss_paths) that only checks and the calibration use.
SPARE_CYCLE = 7000
CALIBRATION_CYCLE = 7500
WARM_TARGET = f"/t/{slug_for(MISS_SIZE)}/api/context?topic=warmup"
Answer = tuple[int, str, list[tuple[str, str]], bytes]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def fetch(port: int, target: str, headers: dict[str, str] | None = None) -> Answer:
    """(status, reason, headers in order, body) of one GET."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        connection.request("GET", target, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.reason, response.getheaders(), response.read()
    finally:
        connection.close()


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        return [int(pid) for pid in children.split()]

    def cpu_seconds(self) -> float:
        """User + system CPU time its workers have used so far (/proc/<pid>/stat)."""
        ticks = 0
        for pid in self.worker_pids():
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")


def _answers(port: int, probe: str) -> bool:
    try:
        status = fetch(port, probe)[0]
    except OSError:
        return False
    return status < 500


@contextmanager
def gunicorn(
    stack: BenchStack,
    app: str,
    *,
    workers: int,
    log: str,
    env: dict[str, str] | None = None,
    probe: str = "/healthz",
    options: Sequence[str] = (),
) -> Iterator[Server]:
    """gunicorn with the configuration both apps share (sync workers as in docker-compose, no access log);
    `options` come last, so they override (bench.serving runs docker-compose's config and timeout)."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", app, "--bind", f"127.0.0.1:{port}", "--workers", str(workers)]
    command += ["--worker-class", "sync", "--timeout", "300", "--graceful-timeout", "5", "--log-level", "warning"]
    command += options
    with (stack.workdir / f"{log}.log").open("ab") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**stack.env, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: process.poll() is not None or _answers(port, probe), timeout=60, what=f"gunicorn {app}")
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn {app} exited; see {stack.workdir / log}.log")
        yield Server(port=port, process=process)
    finally:
        stop_process_group(process)


@dataclass(frozen=True)
class WrkRun:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    bytes_per_request: float
    errors: int
    wrapped: bool  # a cache-miss run asked for more paths than its pool holds
    cpu_us: float = 0.0  # the server's worker CPU time per answer (steadier than req/s on a busy machine)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def wrk(
    port: int,
    target: str,
    *,
    seconds: float,
    headers: Sequence[str] = (),
    paths: Path | None = None,
    post: bool = False,
) -> WrkRun:
    """One wrk run; `paths`: a file of distinct paths to GET in turn, or with `post` of bodies to POST to `target`."""
    script = WRK_DIR / ("post.lua" if post else "miss.lua" if paths else "report.lua")
    command = [WRK, "-t1", f"-c{CONNECTIONS}", f"-d{seconds:g}s", "--timeout", "10s", "-s", str(script)]
    for header in headers:
        command += ["-H", header]
    command.append(f"http://127.0.0.1:{port}{target}")
    env = {"BENCH_WRK_DIR": str(WRK_DIR), "BENCH_PATHS": str(paths or ""), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    line = next(line for line in done.stdout.splitlines() if line.startswith("BENCH "))
    data = json.loads(line.removeprefix("BENCH "))
    requests = max(int(data["requests"]), 1)
    return WrkRun(
        requests=requests,
        seconds=data["duration_us"] / 1e6,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        bytes_per_request=data["bytes"] / requests,
        errors=int(data["errors"]),
        wrapped=int(data.get("sent", 0)) > int(data.get("pool", 0)) > 0,
    )


@dataclass
class Scenario:
    name: str
    target: str
    headers: dict[str, str] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)  # cache misses: distinct paths, each asked once per run
    evergreen: list[WrkRun] = field(default_factory=list)
    baseline: list[WrkRun] = field(default_factory=list)

    def ratios(self) -> list[float]:
        return [a.rps / b.rps for a, b in zip(self.evergreen, self.baseline, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios())


def miss_paths(count: int, *, cycle: int = 0) -> list[str]:
    """`count` distinct /api/context paths on the synthetic namespace: each dev question with budget
    200 + cycle, then each with the next budget, ... (budgets stay inside the clamp, so every path
    has its own cache key)."""
    from bench.synthetic import sample_queries

    topics = [t for t in sample_queries(600) if len(t) <= MAX_TOPIC and t.isprintable()]
    paths = []
    for i in range(cycle * len(topics), cycle * len(topics) + count):
        budget = 200 + i // len(topics)
        if budget > MAX_BUDGET:
            raise ValueError(f"miss path {i} would need a budget above {MAX_BUDGET}")
        query = {"topic": topics[i % len(topics)], "budget": budget}
        paths.append(f"/t/{slug_for(MISS_SIZE)}/api/context?" + urllib.parse.urlencode(query))
    return paths


class Recorder:
    """Evergreen's answers, fetched once each (four at a time), for the baseline to replay."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answers: dict[tuple[str, str], Answer] = {}

    def record(self, targets: Sequence[str], headers: dict[str, str] | None = None) -> float:
        """Fetch the targets; returns Evergreen's rate while doing so (requests per second)."""
        started = time.perf_counter()
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            answers = list(pool.map(lambda target: fetch(self.port, target, headers), targets))
        for target, answer in zip(targets, answers, strict=True):
            if answer[0] not in (200, 304):
                raise RuntimeError(f"Evergreen answered {answer[0]} to {target}: {answer[3][:300]!r}")
            self.answers[(target, (headers or {}).get("If-None-Match", ""))] = answer
        return len(targets) / (time.perf_counter() - started)

    def write(self, path: Path) -> None:
        items = [
            {
                "target": target,
                "if_none_match": inm or None,
                "status": f"{status} {reason}",
                "headers": headers,
                "body": base64.b64encode(body).decode(),
            }
            for (target, inm), (status, reason, headers, body) in self.answers.items()
        ]
        path.write_text(json.dumps(items), encoding="utf-8")


def _comparable(answer: Answer) -> Answer:
    """Status, headers but the per-request ones (in any order: distinct fields have no order in HTTP), bytes.

    Per request: Date, X-Request-ID and the limiter's RateLimit (what is left of the window); the
    baseline replays recorded values of the same length.
    """
    status, reason, headers, body = answer
    per_request = {"date", "x-request-id", "ratelimit"}
    return status, reason, sorted((k, v) for k, v in headers if k.lower() not in per_request), body


def check_same_answers(evergreen: int, baseline: int, targets: Sequence[tuple[str, dict[str, str]]]) -> None:
    """Both apps give the same status, headers (but Date) and bytes; a recomputed miss matches too."""
    for target, headers in targets:
        a, b = fetch(evergreen, target, headers), fetch(baseline, target, headers)
        if _comparable(a) != _comparable(b):
            raise RuntimeError(f"the baseline does not answer {target} {headers} like Evergreen:\n{a[:3]}\n{b[:3]}")


def _flush_cache(stack: BenchStack) -> None:
    redis_flush_owned(stack.env["REDIS_URL"])


def prepare_scenarios(stack: BenchStack, *, seconds: float, recording: Path) -> list[Scenario]:
    """Record every answer the runs will ask for, from an Evergreen that is then thrown away."""
    with gunicorn(stack, "evergreen_site.wsgi", workers=WORKERS, log="evergreen-record") as server:
        recorder = Recorder(server.port)
        recorder.record([HIT_TARGET, LLMS_TARGET, *miss_paths(3, cycle=SPARE_CYCLE)])
        etag = dict(recorder.answers[(HIT_TARGET, "")][2])["ETag"]
        recorder.record([HIT_TARGET], {"If-None-Match": etag})
        # How many distinct paths a miss run needs: a short run on paths nobody asks for later.
        calibration = stack.workdir / "calibration.txt"
        calibration.write_text("\n".join(miss_paths(5000, cycle=CALIBRATION_CYCLE)) + "\n", encoding="utf-8")
        rate = wrk(server.port, HIT_TARGET, seconds=2, paths=calibration).rps
        pool = miss_paths(int(rate * seconds * 1.6) + 100)
        log(f"http: {rate:.0f} misses/s in calibration; recording {len(pool)} cache-miss answers")
        recorder.record(pool)
        recorder.write(recording)
    return [
        Scenario("context, cached", HIT_TARGET),
        Scenario("context, 304", HIT_TARGET, headers={"If-None-Match": etag}),
        Scenario("llms.txt", LLMS_TARGET),
        Scenario("context, miss", HIT_TARGET, paths=pool),
    ]


def _run(server: Server, scenario: Scenario, seconds: float, workdir: Path) -> WrkRun:
    headers = [f"{name}: {value}" for name, value in scenario.headers.items()]
    paths = None
    if scenario.paths:
        paths = workdir / "miss.txt"
        paths.write_text("\n".join(scenario.paths) + "\n", encoding="utf-8")
    cpu = server.cpu_seconds()
    run = wrk(server.port, scenario.target, seconds=seconds, headers=headers, paths=paths)
    return replace(run, cpu_us=(server.cpu_seconds() - cpu) / run.requests * 1e6)


@contextmanager
def fresh_evergreen(stack: BenchStack) -> Iterator[Server]:
    """Evergreen with empty response caches (a new gunicorn, the Redis database flushed), warmed up:
    every worker has loaded both releases, and the cached scenarios' answers are cached."""
    _flush_cache(stack)
    with gunicorn(stack, "evergreen_site.wsgi", workers=WORKERS, log="evergreen") as server:
        for target in (HIT_TARGET, LLMS_TARGET, WARM_TARGET):
            wrk(server.port, target, seconds=1)
        yield server


def measure_http(stack: BenchStack, *, rounds: int, seconds: float) -> list[Scenario]:
    stack.synthetic(MISS_SIZE)
    recording = stack.workdir / "answers.json"
    scenarios = prepare_scenarios(stack, seconds=seconds, recording=recording)
    baseline_env = {"BENCH_RECORDING": str(recording)}
    with gunicorn(stack, "bench.baseline_app:create_app()", workers=WORKERS, log="baseline", env=baseline_env) as base:
        for target in (HIT_TARGET, LLMS_TARGET):
            wrk(base.port, target, seconds=1)
        for round_ in range(rounds):
            # A new Evergreen per round, so the same miss paths miss again: A B, then B A, ...
            with fresh_evergreen(stack) as evergreen:
                if round_ == 0:
                    checks = [(s.target, s.headers) for s in scenarios] + [
                        (p, {}) for p in miss_paths(3, cycle=SPARE_CYCLE)
                    ]
                    check_same_answers(evergreen.port, base.port, checks)
                order = [(evergreen, "evergreen"), (base, "baseline")]
                if round_ % 2:
                    order.reverse()
                for scenario in scenarios:
                    log(f"http: round {round_ + 1}/{rounds}: {scenario.name}")
                    for server, side in order:
                        getattr(scenario, side).append(_run(server, scenario, seconds, stack.workdir))
    return scenarios


def median_of(runs: Sequence[WrkRun], name: str) -> float:
    """The median of one measure (rps, p50_ms, cpu_us …) over a side's alternated runs."""
    return statistics.median(getattr(run, name) for run in runs)


def format_http(scenarios: Sequence[Scenario]) -> str:
    lines = [
        f"{'scenario':16} {'EG req/s':>9} {'p50':>6} {'p99':>6} {'CPU us':>6}   {'base req/s':>10} {'p50':>6} "
        f"{'p99':>6} {'CPU us':>6}   {'ratio':>5} {'spread':>9} {'bytes':>6}"
    ]
    warnings = []
    for s in scenarios:
        eg, base, ratios = s.evergreen, s.baseline, s.ratios()
        lines.append(
            f"{s.name:16} {median_of(eg, 'rps'):>9.0f} {median_of(eg, 'p50_ms'):>6.2f} {median_of(eg, 'p99_ms'):>6.2f} "
            f"{median_of(eg, 'cpu_us'):>6.0f}   {median_of(base, 'rps'):>10.0f} {median_of(base, 'p50_ms'):>6.2f} "
            f"{median_of(base, 'p99_ms'):>6.2f} {median_of(base, 'cpu_us'):>6.0f}   {s.ratio:>5.2f} "
            f"{min(ratios):>4.2f}-{max(ratios):<4.2f} {median_of(eg, 'bytes_per_request'):>6.0f}"
        )
        if any(run.errors for run in eg + base):
            warnings.append(f"{s.name}: {sum(r.errors for r in eg + base)} errors (timeouts, 4xx/5xx, resets)")
        if any(run.wrapped for run in eg):
            warnings.append(f"{s.name}: a run used up its pool of distinct paths, so some requests were hits")
        eg_bytes, base_bytes = median_of(eg, "bytes_per_request"), median_of(base, "bytes_per_request")
        if not s.paths and abs(eg_bytes - base_bytes) > 0.02 * eg_bytes:
            warnings.append(f"{s.name}: the two apps sent different amounts of bytes per answer")
    lines.append(
        f"(rate limiter on: EVERGREEN_RATE_LIMIT={BENCH_RATE_LIMIT} per client, shared through Redis, never tripped; "
        f"p50/p99 in ms; CPU us = the gunicorn workers' CPU time per answer; ratio = Evergreen req/s / baseline "
        f"req/s, median of {len(scenarios[0].evergreen)} alternated rounds, spread = min-max; gunicorn sync "
        f"x{WORKERS}, wrk -t1 -c{CONNECTIONS}; bytes = per answer on the wire)"
    )
    return "\n".join(lines + [f"WARNING {w}" for w in warnings])


def run_part(
    argv: Sequence[str] | None, description: str | None, report: Callable[[BenchStack, int, float], str]
) -> int:
    """The command line of a side-by-side HTTP part: `--quick` picks the rounds, `report` measures and formats."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="2 rounds of 3 s runs instead of 5 of 5 s")
    args = parser.parse_args(argv)
    rounds, seconds = QUICK_ROUNDS if args.quick else FULL_ROUNDS
    exit_on_sigterm()
    with bench_stack() as stack:
        print(report(stack, rounds, seconds))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_part(
        argv, __doc__, lambda stack, rounds, seconds: format_http(measure_http(stack, rounds=rounds, seconds=seconds))
    )


if __name__ == "__main__":
    sys.exit(main())
