"""What the request log costs cached /api/context: Evergreen with the log on vs off, side by side (issue 14).

Both runs are the same gunicorn configuration as bench.http (two sync workers, wrk -c4) on the same
URL, so every answer after each worker's first is replayed from memory (gateway.replay) — the cheapest
path, where a per-request cost shows most. "On" logs every request (sample 1.0): the record is
appended to the process buffer and the flusher thread ships batches to Redis (no Celery worker drains
them during the run; the list is capped). The runs alternate (on off, off on, ...) and the ratio is the
median of the rounds' ratios. The records that reached Redis are counted, to show the log really ran.

Run: .venv/bin/python -m bench.requestlog [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from bench.http import CONNECTIONS, HIT_TARGET, WORKERS, WrkRun, _run, gunicorn, run_part
from bench.http import Scenario as HttpScenario
from bench.publish import BenchStack, log

QUEUE_KEY = "evergreen:request-log"
ON = {"EVERGREEN_REQUEST_LOG": "1", "EVERGREEN_REQUEST_LOG_SAMPLE": "1", "EVERGREEN_REQUEST_LOG_QUEUE_MAX": "400"}
OFF = {"EVERGREEN_REQUEST_LOG": "0"}
TARGET_RATIO = 0.90
FLUSH_WAIT = 2.5  # seconds: the flusher thread ships once a second


@dataclass
class RequestLogCost:
    on: list[WrkRun] = field(default_factory=list)
    off: list[WrkRun] = field(default_factory=list)
    shipped: list[tuple[int, int]] = field(default_factory=list)  # (records in Redis, requests answered)

    def ratios(self) -> list[float]:
        return [a.rps / b.rps for a, b in zip(self.on, self.off, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios())


def _redis(stack: BenchStack) -> Any:
    import redis

    return redis.Redis.from_url(stack.env["REDIS_URL"])


def _records_queued(stack: BenchStack) -> int:
    return sum(len(orjson.loads(batch)) for batch in _redis(stack).lrange(QUEUE_KEY, 0, -1))


def _side(stack: BenchStack, name: str, env: dict[str, str], seconds: float, cost: RequestLogCost) -> None:
    _redis(stack).delete(QUEUE_KEY)
    with gunicorn(stack, "evergreen_site.wsgi", workers=WORKERS, log=f"requestlog-{name}", env=env) as server:
        _run(server, HttpScenario("warm-up", HIT_TARGET), 1.0, stack.workdir)
        if name == "on":
            time.sleep(FLUSH_WAIT)  # the warm-up's records are shipped, then forgotten
        _redis(stack).delete(QUEUE_KEY)
        run = _run(server, HttpScenario(name, HIT_TARGET), seconds, stack.workdir)
        if name == "on":
            time.sleep(FLUSH_WAIT)
            cost.shipped.append((_records_queued(stack), run.requests))
    getattr(cost, name).append(run)


def measure_request_log(stack: BenchStack, *, rounds: int, seconds: float) -> RequestLogCost:
    stack.prepare()
    cost = RequestLogCost()
    for round_ in range(rounds):
        order = [("on", ON), ("off", OFF)]
        if round_ % 2:
            order.reverse()
        for name, env in order:
            log(f"requestlog: round {round_ + 1}/{rounds}: log {name}")
            _side(stack, name, env, seconds, cost)
    return cost


def format_request_log(cost: RequestLogCost) -> str:
    def median(runs: Sequence[WrkRun], attribute: str) -> float:
        return statistics.median(getattr(run, attribute) for run in runs)

    ratios = cost.ratios()
    shipped = sum(records for records, _ in cost.shipped)
    answered = sum(requests for _, requests in cost.shipped)
    lines = [
        f"{'log':5} {'req/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'CPU us':>7}",
        *(
            f"{name:5} {median(runs, 'rps'):>9.0f} {median(runs, 'p50_ms'):>7.2f} {median(runs, 'p99_ms'):>7.2f} "
            f"{median(runs, 'cpu_us'):>7.0f}"
            for name, runs in (("on", cost.on), ("off", cost.off))
        ),
        f"ratio on/off (req/s): {cost.ratio:.3f} (median of {len(ratios)} alternated rounds, "
        f"spread {min(ratios):.3f}-{max(ratios):.3f})",
        f"records shipped to Redis while on: {shipped} for {answered} requests answered (every one is logged)",
        f"(gunicorn sync x{WORKERS}, wrk -t1 -c{CONNECTIONS}, GET {HIT_TARGET}, every request logged)",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return run_part(
        argv,
        __doc__,
        lambda stack, rounds, seconds: format_request_log(measure_request_log(stack, rounds=rounds, seconds=seconds)),
    )


if __name__ == "__main__":
    sys.exit(main())
