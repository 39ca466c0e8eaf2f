"""A cleared tier's index loaded as a web worker did before (from its stored bytes) and does now (mapped
from the host's file, knowledge.selectors.serving._index_mapped), side by side in fresh processes.

A synthetic namespace of `--size` entries is compiled (a tier's index is the public one's entries plus
the non-public ones: the same kind of index) and stored as a release stores it; the host's copy is made
from it with SearchIndex.serve_file. Each round loads it once each way, alternately, in a new process:
the load's time (the stored bytes already read, as the database gave them) and what the process gained
in anonymous memory (its own: no other worker shares it; the stored bytes count) and in resident
memory (mapped pages too) by the load and 20 searches (the analysers a first search loads are loaded
before, by a small index's).

With --feedback the index ranks with feedback (a crowded release's): its loader makes the forward index
(feedback.py), which the host's copy holds; a third way loads a host's copy made before it held one
(the forward index transposed as the worker loads, as before).

Run: .venv/bin/python -m bench.tierload [--size 100000] [--rounds 5] [--feedback]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.publish import log
from bench.synthetic import build_namespace, sample_queries
from knowledge.retrieval.container import pack_arrays, unpack_arrays
from knowledge.retrieval.feedback import FORWARD_ARRAYS
from knowledge.retrieval.index import SearchIndex

WAYS = ("stored bytes", "mapped file")
BEFORE = "mapped before"  # --feedback: a host's copy without the forward index
_CHILD = """
import json, mmap, sys, time
from bench.synthetic import build_namespace
from knowledge.retrieval.index import SearchIndex

def memory():
    rows = dict(line.split(":", 1) for line in open("/proc/self/smaps_rollup") if ":" in line)
    return {name: int(rows[name].split()[0]) / 1024 for name in ("Rss", "Anonymous")}

way, path, topics = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
small = SearchIndex.compile(build_namespace(50))  # what any search loads first (the analysers) is not counted
for topic in topics:
    list(small.search(topic))
del small
before = memory()
data = open(path, "rb").read() if way == "stored bytes" else None  # as the database gave them, untimed
started = time.perf_counter()
if data is None:
    with open(path, "rb") as file:
        data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
index = SearchIndex.from_bytes(data).prepared()
seconds = time.perf_counter() - started
del data
for topic in topics:
    list(index.search(topic))
after = memory()
print(json.dumps({"ms": seconds * 1000, **{name: after[name] - before[name] for name in after}}))
"""


def _load(way: str, path: Path, topics: list[str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, way, str(path), json.dumps(topics)], check=True, capture_output=True, text=True
    )
    return dict(json.loads(done.stdout))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--feedback", action="store_true", help="an index ranking with feedback")
    args = parser.parse_args(argv)
    ways = (*WAYS, BEFORE) if args.feedback else WAYS
    directory = Path(tempfile.mkdtemp(prefix="bench-tierload-"))
    try:
        log(f"tierload: compiling a {args.size}-entry index")
        paths = {way: directory / f"{n}.index" for n, way in enumerate(ways)}
        index = SearchIndex.compile(build_namespace(args.size))
        if args.feedback:
            index = index.with_options(dataclasses.replace(index.options, feedback=True))
        paths[WAYS[0]].write_bytes(index.to_bytes())
        del index
        shutil.copyfile(paths[WAYS[0]], paths[WAYS[1]])
        SearchIndex.serve_file(paths[WAYS[1]])
        if args.feedback:
            meta, arrays = unpack_arrays(paths[WAYS[1]].read_bytes())
            kept = {name: array for name, array in arrays.items() if name not in FORWARD_ARRAYS}
            paths[BEFORE].write_bytes(pack_arrays(meta, kept))
        topics = sample_queries(20)
        runs: dict[str, list[dict[str, float]]] = {way: [] for way in ways}
        for round_ in range(args.rounds):
            log(f"tierload: round {round_ + 1} of {args.rounds}")
            for way in ways if round_ % 2 == 0 else ways[::-1]:
                runs[way].append(_load(way, paths[way], topics))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"a {args.size}-entry tier index loaded in a fresh process, median of {args.rounds} (MiB gained after")
    print("the load and 20 searches; anonymous memory is the process's own, resident includes mapped pages):")
    median = {way: {key: statistics.median(run[key] for run in runs[way]) for key in runs[way][0]} for way in ways}
    for way in ways:
        row = median[way]
        print(f"  {way:<13} {row['ms']:8.1f} ms  anonymous {row['Anonymous']:7.1f} MiB  resident {row['Rss']:7.1f} MiB")
    for slower in ways[:1] + ways[2:]:
        before, after = median[slower], median[WAYS[1]]
        ratios = {key: after[key] / before[key] for key in ("ms", "Anonymous")}
        print(f"  mapped / {slower}: load {ratios['ms']:.2f}x, anonymous memory {ratios['Anonymous']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
