"""/api/context as the plain view (production) and as a DRF APIView (bench.drf_context), side by side.

Two gunicorns with the same settings (bench.http's: 2 sync workers, PostgreSQL, Redis, DEBUG off, the
rate limiter on) but for the URLconf of /api/context, under wrk, alternating which goes first, with
the same requests:

- cached: the same URL every time, and miss: a distinct topic and budget per request over the
  10,000-entry synthetic namespace — both as deployed, behind gateway.replay (which answers a repeat
  from memory, and a miss of a route Django has answered before itself, in front of Django);
- the same two through Django: with a Cookie header, which the replay layer always hands to Django
  (as it does every request with a key, every private namespace and every route's first answer), so
  each answer pays the view, its parameter validation and Django's request handling.

The ratio is DRF req/s / plain req/s per round (the median is reported), and CPU is the workers' CPU
time per answer. A second table splits the difference: validating the cached case's query string in
this process, with the declared parsers (gateway.params) and with the DRF serializer.

Run: .venv/bin/python -m bench.drf [--quick]   (progress on stderr, the table on stdout)
"""

from __future__ import annotations

import os
import statistics
import sys
import timeit
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.http import (
    CONNECTIONS,
    HIT_TARGET,
    MISS_SIZE,
    WARM_TARGET,
    WORKERS,
    Server,
    WrkRun,
    fetch,
    gunicorn,
    median_of,
    miss_paths,
    run_part,
    wrk,
)
from bench.publish import BENCH_RATE_LIMIT, BenchStack, log
from bench.redisdb import redis_flush_owned

DRF_SETTINGS = "bench.drf_context_settings"
# The replay layer hands every request with a cookie to Django (gateway.replay.replay_key).
COOKIE = {"Cookie": "bench=1"}
CYCLE = 3000  # budgets of 3,200 tokens and up: questions no other part of the bench asks
SIDES = ("plain", "drf")


@dataclass
class Case:
    name: str
    headers: dict[str, str]
    miss: bool
    runs: dict[str, list[WrkRun]] = field(default_factory=lambda: {side: [] for side in SIDES})

    def ratios(self) -> list[float]:
        return [d.rps / p.rps for p, d in zip(self.runs["plain"], self.runs["drf"], strict=True)]

    def cpu_ratios(self) -> list[float]:
        return [d.cpu_us / p.cpu_us for p, d in zip(self.runs["plain"], self.runs["drf"], strict=True)]


def cases() -> list[Case]:
    return [
        Case("cached", {}, miss=False),
        Case("miss", {}, miss=True),
        Case("cached, via Django", COOKIE, miss=False),
        Case("miss, via Django", COOKIE, miss=True),
    ]


def _warm(server: Server) -> None:
    """Load both releases in every worker, cache the cached case's answer and teach the miss route's shape."""
    for target in (HIT_TARGET, WARM_TARGET):
        wrk(server.port, target, seconds=1)
        wrk(server.port, target, seconds=1, headers=[f"{k}: {v}" for k, v in COOKIE.items()])


def _same_answers(plain: Server, drf: Server) -> None:
    """Both variants answer the bench's requests with the same status and bytes."""
    for target in (HIT_TARGET, *miss_paths(3, cycle=CYCLE - 1)):
        a, b = fetch(plain.port, target), fetch(drf.port, target)
        if (a[0], a[3]) != (b[0], b[3]):
            raise RuntimeError(f"the DRF variant answers {target} unlike the plain view: {a[0]} vs {b[0]}")


def _pools(count: int, chunks: int) -> Iterator[list[str]]:
    """`chunks` lists of `count` distinct miss paths each, none shared."""
    every = miss_paths(count * chunks, cycle=CYCLE)
    for chunk in range(chunks):
        yield every[chunk * count : (chunk + 1) * count]


def _run(server: Server, case: Case, seconds: float, paths: Path | None) -> WrkRun:
    cpu = server.cpu_seconds()
    headers = [f"{name}: {value}" for name, value in case.headers.items()]
    run = wrk(server.port, HIT_TARGET, seconds=seconds, headers=headers, paths=paths)
    return replace(run, cpu_us=(server.cpu_seconds() - cpu) / run.requests * 1e6)


def measure_drf(stack: BenchStack, *, rounds: int, seconds: float, rate: float) -> list[Case]:
    """`rate`: misses per second to expect, to size the pools of distinct questions."""
    stack.synthetic(MISS_SIZE)
    redis_flush_owned(stack.env["REDIS_URL"])
    measured = cases()
    per_run = int(rate * seconds * 1.6) + 100
    misses = sum(case.miss for case in measured)
    pools = _pools(per_run, rounds * misses * len(SIDES))
    with ExitStack() as servers:
        plain = servers.enter_context(gunicorn(stack, "evergreen_site.wsgi", workers=WORKERS, log="drf-plain"))
        drf_env = {"DJANGO_SETTINGS_MODULE": DRF_SETTINGS}
        drf = servers.enter_context(gunicorn(stack, "evergreen_site.wsgi", workers=WORKERS, log="drf", env=drf_env))
        by_side = {"plain": plain, "drf": drf}
        for server in (plain, drf):
            _warm(server)
        _same_answers(plain, drf)
        for round_ in range(rounds):
            order = SIDES if round_ % 2 == 0 else SIDES[::-1]
            for case in measured:
                log(f"drf: round {round_ + 1}/{rounds}: {case.name}")
                for side in order:
                    paths = None
                    if case.miss:
                        paths = stack.workdir / "drf-miss.txt"
                        paths.write_text("\n".join(next(pools)) + "\n", encoding="utf-8")
                    case.runs[side].append(_run(by_side[side], case, seconds, paths))
    return measured


def format_drf(measured: Sequence[Case]) -> str:
    lines = [
        f"{'/api/context':20} {'plain req/s':>11} {'p50':>6} {'CPU us':>6}   {'DRF req/s':>9} {'p50':>6} "
        f"{'CPU us':>6}   {'ratio':>5} {'spread':>9} {'CPU ratio':>9}"
    ]
    warnings = []
    for case in measured:
        plain, drf, ratios = case.runs["plain"], case.runs["drf"], case.ratios()
        lines.append(
            f"{case.name:20} {median_of(plain, 'rps'):>11.0f} {median_of(plain, 'p50_ms'):>6.2f} "
            f"{median_of(plain, 'cpu_us'):>6.0f}   {median_of(drf, 'rps'):>9.0f} {median_of(drf, 'p50_ms'):>6.2f} "
            f"{median_of(drf, 'cpu_us'):>6.0f}   {statistics.median(ratios):>5.2f} "
            f"{min(ratios):>4.2f}-{max(ratios):<4.2f} {statistics.median(case.cpu_ratios()):>9.2f}"
        )
        if any(run.errors for run in plain + drf):
            warnings.append(f"{case.name}: {sum(r.errors for r in plain + drf)} errors (timeouts, 4xx/5xx, resets)")
        if any(run.wrapped for run in plain + drf):
            warnings.append(f"{case.name}: a run used up its pool of distinct paths, so some requests were hits")
    lines.append(
        f"(rate limiter on: EVERGREEN_RATE_LIMIT={BENCH_RATE_LIMIT}; ratio = DRF req/s / plain req/s, median of "
        f"{len(measured[0].runs['plain'])} alternated rounds, spread = min-max; CPU ratio = DRF / plain worker CPU "
        f"per answer; via Django = with a Cookie header, which the replay layer hands to Django; gunicorn sync "
        f"x{WORKERS}, wrk -t1 -c{CONNECTIONS})"
    )
    return "\n".join(lines + [f"WARNING {w}" for w in warnings])


def measure_validation(*, number: int = 2000, repeat: int = 5) -> dict[str, float]:
    """Microseconds per validation of HIT_TARGET's query string (the fastest of `repeat`, sides alternated)."""
    import django  # the serializer needs configured settings, which the HTTP parts do not

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", DRF_SETTINGS)
    django.setup()
    from django.http import QueryDict

    from bench.drf_context import ContextParameters
    from gateway.params import context_query_from_string

    query = urllib.parse.urlsplit(HIT_TARGET).query
    categories = ["fact", "protocol", "rule", "principle", "workflow"]
    context = {"categories": categories, "default_budget": 2000}

    def declared() -> object:
        return context_query_from_string(query, categories=categories, default_budget=2000)

    def serializer() -> object:
        parameters = ContextParameters(data=QueryDict(query), context=context)
        parameters.is_valid(raise_exception=True)
        return parameters.validated_data

    best = {"declared parsers": float("inf"), "DRF serializer": float("inf")}
    for _ in range(repeat):
        for name, function in (("declared parsers", declared), ("DRF serializer", serializer)):
            best[name] = min(best[name], timeit.timeit(function, number=number) / number * 1e6)
    return best


def format_validation(costs: dict[str, float]) -> str:
    lines = [f"{'validating one /api/context query':36} {'us':>7}"]
    lines += [f"{name:36} {cost:>7.1f}" for name, cost in costs.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    def report(stack: BenchStack, rounds: int, seconds: float) -> str:
        return format_drf(measure_drf(stack, rounds=rounds, seconds=seconds, rate=2500))

    run_part(argv, __doc__, report)
    print(format_validation(measure_validation()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
