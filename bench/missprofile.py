"""Cache misses of /api/context measured in process: CPU or instructions per miss, and a digest of the answers.

The HTTP bench (bench.http) gives the miss's ratio to a minimal app, but on a shared machine its
absolute figures move with the load. This runs the same distinct misses as the bench (its synthetic
10,000-entry namespace, bench.http.miss_paths) through Evergreen's WSGI application in one process,
without gunicorn or a socket, and reports what each miss costs: CPU time, or with --callgrind the
instructions it executes under valgrind, which do not depend on what else the machine runs. The
digest of all answers shows whether a change kept every answer's bytes.

With --pause-ms N the child sleeps N ms after each answer, as a gunicorn worker waits for its next
request: on these VMs the same miss then costs about twice the CPU (909 -> 2,075 us with 2 ms), the
caches and the core's state gone cold while it slept, which is the cost bench.http's workers see.

With --mcp it also runs MCP `search_context` misses (stateless tools/call POSTs to the namespace's
/mcp, as bench.mcp sends them) and prints what an MCP miss costs against a REST one: the questions
are bench.mcp's (budgets 1200 and up by default), even-numbered ones to REST and odd-numbered ones
to MCP, MCP's run first (so it does not find the words REST analysed already remembered).

Run: .venv/bin/python -m bench.missprofile [--count 1500] [--budget 200] [--callgrind] [--profile] [--mcp]
                                            [--pause-ms 2]
(the bench database and Redis of bench.publish; preparing the namespace takes a few minutes)
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import hashlib
import io
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.publish import PYTHON, ROOT, bench_stack, log

CHILD_FLAG = "--in-process"
# Callgrind's client requests, compiled when valgrind's headers are there: only the misses are counted.
CALLGRIND_C = """#include <valgrind/callgrind.h>
void eg_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; }
void eg_stop(const char *name) {
    CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT(name); CALLGRIND_STOP_INSTRUMENTATION;
}
"""
MCP_BUDGET = 1200  # bench.mcp's budgets (its CYCLE): larger packs than bench.http's misses


def _environ(target: str, body: bytes | None = None) -> dict[str, object]:
    """A GET of `target`, or with `body` the MCP POST bench.mcp sends (its headers)."""
    path, _, query = target.partition("?")
    post: dict[str, object] = {}
    if body is not None:
        post = {"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body))}
        post |= {"HTTP_ACCEPT": "application/json, text/event-stream", "HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"}
    return {
        "REQUEST_METHOD": "GET" if body is None else "POST",
        "PATH_INFO": urllib.parse.unquote(path),
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "HTTP_HOST": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_ACCEPT": "*/*",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body or b""),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        **post,
    }


def _child(count: int, budget_offset: int, counting: str | None, profile: bool, mcp: bool, pause: float) -> int:
    """In the child (Django configured for the bench database): warm up, then time the misses."""
    from bench.http import SPARE_CYCLE, WARM_TARGET, miss_paths
    from bench.mcp import MCP_TARGET, search_body
    from evergreen_site.wsgi import application

    def answer(target: str, body: bytes | None = None) -> bytes:
        statuses: list[str] = []
        answered = application(_environ(target, body), lambda status, headers, *_: statuses.append(status))
        content = b"".join(answered)
        if not statuses[0].startswith("200") or (body is not None and b'"isError":false' not in content):
            raise RuntimeError(f"{target} answered {statuses[0]}: {content[:300]!r}")
        if pause:
            time.sleep(pause)  # idle like a worker between requests (process_time leaves the sleep out)
        return content

    for target in [WARM_TARGET, *miss_paths(3, cycle=SPARE_CYCLE)]:  # loads the release, learns the route
        answer(target)
    parts: list[tuple[str, Callable[[], list[bytes]]]] = []
    if mcp:
        questions = miss_paths(count * 2, cycle=budget_offset)
        calls = [search_body(p, n).encode() for n, p in enumerate(questions[1::2], start=1)]
        for call in [search_body(p, 1).encode() for p in miss_paths(3, cycle=SPARE_CYCLE + 1)]:
            answer(MCP_TARGET, call)  # the MCP route and its first-call work
        parts.append(("mcp", lambda: [answer(MCP_TARGET, call) for call in calls]))
        parts.append(("rest", lambda: [answer(target) for target in questions[0::2]]))
    else:
        targets = miss_paths(count, cycle=budget_offset)
        parts.append(("misses", lambda: [answer(target) for target in targets]))
    for name, work in parts:
        started = time.process_time()
        if counting:
            marks = ctypes.CDLL(counting)
            marks.eg_start()
            bodies = work()
            marks.eg_stop(name.encode())
        elif profile:
            profiler = cProfile.Profile()
            bodies = profiler.runcall(work)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
        else:
            bodies = work()
        seconds = time.process_time() - started
        digest = hashlib.sha256(b"\0".join(bodies)).hexdigest()[:16]
        size = sum(map(len, bodies))
        print(f"{name}: {count} misses: {seconds / count * 1e6:.0f} us CPU each; answers {digest} ({size} bytes)")
    return 0


def _dump_totals(directory: Path) -> dict[str, int]:
    """Instructions per dump (named by eg_stop) in callgrind's output files."""
    totals: dict[str, int] = {}
    for dump in directory.glob("callgrind.out.*"):
        text = dump.read_text(encoding="utf-8", errors="replace").splitlines()
        name = next((line.rsplit(" ", 1)[-1] for line in text if line.startswith("desc: Trigger:")), "misses")
        total = sum(int(line.split()[1]) for line in text if line.startswith("totals:"))
        if total:
            totals[name] = totals.get(name, 0) + total
    return totals


def _callgrind_marks(workdir: Path) -> Path | None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if shutil.which("valgrind") is None or compiler is None:
        return None
    source, library = workdir / "marks.c", workdir / "marks.so"
    source.write_text(CALLGRIND_C, encoding="utf-8")
    done = subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True, check=False
    )
    return library if done.returncode == 0 else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1500, help="distinct misses (default 1500)")
    parser.add_argument(
        "--budget", type=int, help="the first miss's budget (default 200, as bench.http; 1200 with --mcp)"
    )
    parser.add_argument("--callgrind", action="store_true", help="count instructions under valgrind instead of time")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the misses on stderr")
    parser.add_argument("--mcp", action="store_true", help="MCP search_context misses too, and their cost to REST's")
    parser.add_argument("--pause-ms", type=float, default=0.0, help="sleep this long after each answer (default 0)")
    parser.add_argument(CHILD_FLAG, action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--marks", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.budget is None:
        args.budget = MCP_BUDGET if args.mcp else 200
    cycle = args.budget - 200
    if args.in_process:
        return _child(args.count, cycle, args.marks, args.profile, args.mcp, args.pause_ms / 1000)
    with bench_stack() as stack, tempfile.TemporaryDirectory(prefix="evergreen-missprofile-") as directory:
        stack.synthetic(10_000)
        command = [PYTHON, "-m", "bench.missprofile", CHILD_FLAG, "--count", str(args.count)]
        command += ["--budget", str(args.budget)] + (["--profile"] if args.profile else [])
        command += ["--mcp"] if args.mcp else []
        command += ["--pause-ms", str(args.pause_ms)]
        if args.callgrind:
            marks = _callgrind_marks(Path(directory))
            if marks is None:
                log("missprofile: --callgrind needs valgrind, its headers (valgrind/callgrind.h) and a C compiler")
                return 2
            output = Path(directory) / "callgrind.out"
            command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no"]
            command += [f"--callgrind-out-file={output}.%p", PYTHON, "-m", "bench.missprofile", CHILD_FLAG]
            command += ["--count", str(args.count), "--budget", str(args.budget), "--marks", str(marks)]
            command += ["--mcp"] if args.mcp else []
        log(f"missprofile: {args.count} distinct misses in process" + (" under callgrind" if args.callgrind else ""))
        done = subprocess.run(command, cwd=ROOT, env=stack.env, capture_output=True, text=True, check=False)
        sys.stderr.write(done.stderr[-20_000:] if args.profile else "")
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-3000:])
            return done.returncode
        lines = done.stdout.strip().splitlines()
        print("\n".join(lines[-2:] if args.mcp else lines[-1:]))
        if args.callgrind:
            totals = _dump_totals(Path(directory))
            for name, total in totals.items():
                print(f"{name}: {total / args.count:,.0f} instructions per miss (callgrind, {args.count} misses)")
            if args.mcp:
                print(f"MCP / REST: {totals['mcp'] / totals['rest']:.2f} (instructions per miss)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
