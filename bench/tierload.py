"""A cleared tier's index loaded as a web worker did before (from its stored bytes) and does now (mapped
from the host's file, knowledge.selectors.serving._index_mapped), side by side in fresh processes.

A synthetic namespace of `--size` entries is compiled (a tier's index is the public one's entries plus
the non-public ones: the same kind of index) and stored as a release stores it; the host's copy is made
from it with SearchIndex.serve_file. Each round loads it once each way, alternately, in a new process:
the load's time (the stored bytes already read, as the database gave them) and what the process gained
in anonymous memory (its own: no other worker shares it; the stored bytes count) and in resident
memory (mapped pages too) by the load and 20 searches (the analysers a first search loads are loaded
before, by a small index's).

Run: .venv/bin/python -m bench.tierload [--size 100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
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
from knowledge.retrieval.index import SearchIndex

WAYS = ("stored bytes", "mapped file")
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
    args = parser.parse_args(argv)
    directory = Path(tempfile.mkdtemp(prefix="bench-tierload-"))
    try:
        log(f"tierload: compiling a {args.size}-entry index")
        stored, served = directory / "stored.index", directory / "served.index"
        stored.write_bytes(SearchIndex.compile(build_namespace(args.size)).to_bytes())
        shutil.copyfile(stored, served)
        SearchIndex.serve_file(served)
        topics = sample_queries(20)
        runs: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
        for round_ in range(args.rounds):
            log(f"tierload: round {round_ + 1} of {args.rounds}")
            for way in WAYS if round_ % 2 == 0 else WAYS[::-1]:
                runs[way].append(_load(way, stored if way == WAYS[0] else served, topics))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"a {args.size}-entry tier index loaded in a fresh process, median of {args.rounds} (MiB gained after")
    print("the load and 20 searches; anonymous memory is the process's own, resident includes mapped pages):")
    median = {way: {key: statistics.median(run[key] for run in runs[way]) for key in runs[way][0]} for way in WAYS}
    for way in WAYS:
        row = median[way]
        print(f"  {way:<13} {row['ms']:8.1f} ms  anonymous {row['Anonymous']:7.1f} MiB  resident {row['Rss']:7.1f} MiB")
    before, after = median[WAYS[0]], median[WAYS[1]]
    ratios = {key: after[key] / before[key] for key in ("ms", "Anonymous")}
    print(f"  mapped / stored: load {ratios['ms']:.2f}x, anonymous memory {ratios['Anonymous']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
