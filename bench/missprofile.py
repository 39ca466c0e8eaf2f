"""Cache misses of /api/context measured in process: CPU or instructions per miss, and a digest of the answers.

The HTTP bench (bench.http) gives the miss's ratio to a minimal app, but on a shared machine its
absolute figures move with the load. This runs the same distinct misses as the bench (its synthetic
10,000-entry namespace, bench.http.miss_paths) through Evergreen's WSGI application in one process,
without gunicorn or a socket, and reports what each miss costs: CPU time, or with --callgrind the
instructions it executes under valgrind, which do not depend on what else the machine runs. The
digest of all answers shows whether a change kept every answer's bytes.

Run: .venv/bin/python -m bench.missprofile [--count 1500] [--budget 200] [--callgrind] [--profile]
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
void eg_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT("misses"); CALLGRIND_STOP_INSTRUMENTATION; }
"""


def _environ(target: str) -> dict[str, object]:
    path, _, query = target.partition("?")
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": urllib.parse.unquote(path),
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "HTTP_HOST": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_ACCEPT": "*/*",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def _child(count: int, budget_offset: int, counting: str | None, profile: bool) -> int:
    """In the child (Django configured for the bench database): warm up, then time the misses."""
    from bench.http import SPARE_CYCLE, WARM_TARGET, miss_paths
    from evergreen_site.wsgi import application

    def get(target: str) -> bytes:
        statuses: list[str] = []
        body = b"".join(application(_environ(target), lambda status, headers, *_: statuses.append(status)))
        if not statuses[0].startswith("200"):
            raise RuntimeError(f"{target} answered {statuses[0]}: {body[:300]!r}")
        return body

    for target in [WARM_TARGET, *miss_paths(3, cycle=SPARE_CYCLE)]:  # loads the release, learns the route
        get(target)
    targets = miss_paths(count, cycle=budget_offset)
    work: Callable[[], list[bytes]] = lambda: [get(target) for target in targets]  # noqa: E731
    started = time.process_time()
    if counting:
        marks = ctypes.CDLL(counting)
        marks.eg_start()
        bodies = work()
        marks.eg_stop()
    elif profile:
        profiler = cProfile.Profile()
        bodies = profiler.runcall(work)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    else:
        bodies = work()
    seconds = time.process_time() - started
    digest = hashlib.sha256(b"\0".join(bodies)).hexdigest()[:16]
    size = sum(map(len, bodies))
    print(f"{count} misses: {seconds / count * 1e6:.0f} us CPU each; answers {digest} ({size} bytes)")
    return 0


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
    parser.add_argument("--budget", type=int, default=200, help="the first miss's budget (bench.http asks 200 and up)")
    parser.add_argument("--callgrind", action="store_true", help="count instructions under valgrind instead of time")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the misses on stderr")
    parser.add_argument(CHILD_FLAG, action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--marks", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cycle = args.budget - 200
    if args.in_process:
        return _child(args.count, cycle, args.marks, args.profile)
    with bench_stack() as stack, tempfile.TemporaryDirectory(prefix="evergreen-missprofile-") as directory:
        stack.synthetic(10_000)
        command = [PYTHON, "-m", "bench.missprofile", CHILD_FLAG, "--count", str(args.count)]
        command += ["--budget", str(args.budget)] + (["--profile"] if args.profile else [])
        if args.callgrind:
            marks = _callgrind_marks(Path(directory))
            if marks is None:
                log("missprofile: --callgrind needs valgrind, its headers (valgrind/callgrind.h) and a C compiler")
                return 2
            output = Path(directory) / "callgrind.out"
            command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no"]
            command += [f"--callgrind-out-file={output}.%p", PYTHON, "-m", "bench.missprofile", CHILD_FLAG]
            command += ["--count", str(args.count), "--budget", str(args.budget), "--marks", str(marks)]
        log(f"missprofile: {args.count} distinct misses in process" + (" under callgrind" if args.callgrind else ""))
        done = subprocess.run(command, cwd=ROOT, env=stack.env, capture_output=True, text=True, check=False)
        sys.stderr.write(done.stderr[-20_000:] if args.profile else "")
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-3000:])
            return done.returncode
        print(done.stdout.strip().splitlines()[-1])
        if args.callgrind:
            total = sum(
                int(line.split()[1])
                for dump in Path(directory).glob("callgrind.out.*")
                for line in dump.read_text(encoding="utf-8", errors="replace").splitlines()
                if line.startswith("totals:")
            )
            print(f"{total / args.count:,.0f} instructions per miss (callgrind, {args.count} misses)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
