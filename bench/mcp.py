"""MCP `search_context` against the same /api/context cache miss, on one Evergreen, side by side.

Both sides ask questions nobody asked before (distinct topic and budget per request, the same mix of
topics and budgets on both: even-numbered questions go to REST, odd-numbered ones to MCP), through
gunicorn under wrk, alternating which goes first. The cost ratio is REST req/s / MCP req/s per round
(the median is reported): how much more an MCP answer costs than the REST answer with the same pack.
MCP calls are stateless `tools/call` requests (Streamable HTTP, JSON answers), as agents send them.

Run: .venv/bin/python -m bench.mcp [--quick]   (progress on stderr, the table on stdout)
"""

from __future__ import annotations

import json
import statistics
import sys
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.http import (
    CONNECTIONS,
    MISS_SIZE,
    WORKERS,
    Server,
    WrkRun,
    fresh_evergreen,
    miss_paths,
    run_part,
    wrk,
)
from bench.publish import BenchStack, log, slug_for

MCP_TARGET = f"/t/{slug_for(MISS_SIZE)}/mcp"
MCP_HEADERS = (
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    "MCP-Protocol-Version: 2025-11-25",
)
CYCLE = 1000  # budgets of 1200 tokens and up: questions no other part of the bench asks
TARGET_RATIO = 1.5


@dataclass
class McpCost:
    rest: list[WrkRun] = field(default_factory=list)
    mcp: list[WrkRun] = field(default_factory=list)

    def ratios(self) -> list[float]:
        return [r.rps / m.rps for r, m in zip(self.rest, self.mcp, strict=True)]

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios())

    @property
    def cpu_ratio(self) -> float:
        return statistics.median(m.cpu_us / r.cpu_us for r, m in zip(self.rest, self.mcp, strict=True))


def search_body(path: str, number: int) -> str:
    """The MCP tools/call of search_context asking what `path` asks /api/context."""
    asked = dict(urllib.parse.parse_qsl(path.split("?", 1)[1]))
    arguments = {"query": asked["topic"], "budget": int(asked["budget"])}
    call = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "search_context"}}
    call["params"]["arguments"] = arguments  # type: ignore[index]
    return json.dumps(call, ensure_ascii=False)


def _measured(server: Server, run: WrkRun, cpu_before: float) -> WrkRun:
    return replace(run, cpu_us=(server.cpu_seconds() - cpu_before) / run.requests * 1e6)


def measure_mcp(stack: BenchStack, *, rounds: int, seconds: float, rate: float) -> McpCost:
    """`rate`: misses per second seen so far, to size the pools of distinct questions."""
    stack.synthetic(MISS_SIZE)
    per_round = int(rate * seconds * 1.6) + 100
    questions = miss_paths(per_round * 2 * rounds, cycle=CYCLE)
    cost = McpCost()
    for round_ in range(rounds):
        chunk = questions[round_ * per_round * 2 : (round_ + 1) * per_round * 2]
        rest_file, mcp_file = stack.workdir / "mcp-rest.txt", stack.workdir / "mcp-calls.txt"
        rest_file.write_text("\n".join(chunk[0::2]) + "\n", encoding="utf-8")
        mcp_file.write_text(
            "\n".join(search_body(path, n) for n, path in enumerate(chunk[1::2], start=1)) + "\n", encoding="utf-8"
        )
        with fresh_evergreen(stack) as server:
            wrk(server.port, MCP_TARGET, seconds=1, headers=MCP_HEADERS, paths=_warm_calls(stack.workdir), post=True)
            sides = ["rest", "mcp"] if round_ % 2 == 0 else ["mcp", "rest"]
            for side in sides:
                log(f"mcp: round {round_ + 1}/{rounds}: {side}")
                before = server.cpu_seconds()
                if side == "rest":
                    run = wrk(server.port, "/", seconds=seconds, paths=rest_file)
                else:
                    run = wrk(server.port, MCP_TARGET, seconds=seconds, headers=MCP_HEADERS, paths=mcp_file, post=True)
                getattr(cost, side).append(_measured(server, run, before))
    return cost


def _warm_calls(workdir: Path) -> Path:
    """A few calls every run repeats (answered from the cache after the first), to load the release first."""
    path = workdir / "mcp-warm.txt"
    path.write_text("\n".join(search_body(p, 1) for p in miss_paths(3, cycle=CYCLE - 1)) + "\n", encoding="utf-8")
    return path


def format_mcp(cost: McpCost) -> str:
    def median(runs: Sequence[WrkRun], name: str) -> float:
        return statistics.median(getattr(run, name) for run in runs)

    lines = [f"{'cache miss':24} {'req/s':>7} {'p50':>6} {'p99':>6} {'CPU us':>7}"]
    for name, runs in (("GET /api/context", cost.rest), ("MCP search_context", cost.mcp)):
        lines.append(
            f"{name:24} {median(runs, 'rps'):>7.0f} {median(runs, 'p50_ms'):>6.2f} {median(runs, 'p99_ms'):>6.2f} "
            f"{median(runs, 'cpu_us'):>7.0f}"
        )
    ratios = cost.ratios()
    lines.append(
        f"MCP cost / REST cost: {cost.ratio:.2f} (req/s, spread {min(ratios):.2f}-{max(ratios):.2f}), "
        f"{cost.cpu_ratio:.2f} (worker CPU per answer); median of {len(ratios)} alternated rounds, "
        f"gunicorn sync x{WORKERS}, wrk -t1 -c{CONNECTIONS}"
    )
    errors = sum(run.errors for run in cost.rest + cost.mcp)
    if errors:
        lines.append(f"WARNING {errors} errors (timeouts, 4xx/5xx, resets)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return run_part(
        argv,
        __doc__,
        lambda stack, rounds, seconds: format_mcp(measure_mcp(stack, rounds=rounds, seconds=seconds, rate=1500)),
    )


if __name__ == "__main__":
    sys.exit(main())
