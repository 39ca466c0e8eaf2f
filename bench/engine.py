"""Engine latency at 1k / 10k / 100k entries: Evergreen vs the seed's linear scan vs bm25s.

Run: .venv/bin/python -m bench.engine [--sizes 1000 10000 100000] [--queries 200]
Progress goes to stderr, the table to stdout. Absolute numbers on shared machines are unstable;
the ratios, measured in the same run on the same corpus and queries, are what count.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bench.reference import prepare_entries, score_linear
from bench.synthetic import build_namespace, sample_queries
from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text
from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.packing import BUDGET_DEFAULT, pack_to_budget

TOP = 10
# The linear scan is slow by design; cap its total time per size so the run stays short.
REFERENCE_BUDGET_SECONDS = 60.0


@dataclass(frozen=True)
class Latency:
    p50_ms: float
    p99_ms: float
    count: int


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(run: Callable[[str], object], queries: Sequence[str], budget: float = float("inf")) -> Latency:
    """Per-query wall time after a short warm-up; stops early once `budget` seconds are spent."""
    for query in queries[:3]:
        run(query)
    timings: list[float] = []
    spent = 0.0
    for query in queries:
        started = time.perf_counter()
        run(query)
        elapsed = time.perf_counter() - started
        timings.append(elapsed)
        spent += elapsed
        if spent > budget and len(timings) >= 10:
            break
    return Latency(
        p50_ms=statistics.median(timings) * 1000,
        p99_ms=float(np.percentile(timings, 99)) * 1000,
        count=len(timings),
    )


def evergreen_runner(index: SearchIndex) -> Callable[[str], object]:
    def run(topic: str) -> object:
        ranking = index.search(topic)
        return [hit for hit, _ in zip(ranking, range(TOP), strict=False)]

    return run


def evergreen_pack_runner(index: SearchIndex, documents: Sequence[Document]) -> Callable[[str], object]:
    """The engine's share of /api/context: search, pack to the default budget, hit count and cheapest
    hit (payload.context_build without rendering)."""

    def run(topic: str) -> object:
        ranking = index.search(topic)
        pack = pack_to_budget(
            ranking,
            tokens_of=lambda position: documents[position].tokens,
            budget=BUDGET_DEFAULT,
            min_tokens=ranking.min_tokens,
            relevance=ranking.relevance,
        )
        return pack, ranking.total

    return run


def bm25s_runner(documents: Sequence[Document], config: AnalyzerConfig) -> Callable[[str], object]:
    """bm25s over the same analysed terms, so only the index and scoring differ."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([analyze_text(d.title + " " + d.body, config) for d in documents], show_progress=False)

    def run(topic: str) -> object:
        terms = analyze_text(topic, config) or [""]
        return retriever.retrieve([terms], k=TOP, show_progress=False, n_threads=1)

    return run


def reference_runner(documents: Sequence[Document]) -> Callable[[str], object]:
    entries = prepare_entries(documents)
    return lambda topic: score_linear(entries, topic)[0][:TOP]


def resident_after_loading(data: bytes) -> tuple[float, float]:
    """(RSS of a fresh process after importing the engine, RSS after loading + one search), MiB."""
    with tempfile.NamedTemporaryFile(suffix=".index", delete=False) as handle:
        handle.write(data)
    script = (
        "import re\n"
        "def rss():\n"
        "    return int(re.search(r'VmRSS:\\s+(\\d+)', open('/proc/self/status').read()).group(1)) / 1024\n"
        "from knowledge.retrieval.index import SearchIndex\n"
        "before = rss()\n"
        f"index = SearchIndex.from_bytes(open({handle.name!r}, 'rb').read())\n"
        "index.search('heat transfer 预算')\n"
        "print(before, rss())\n"
    )
    try:
        output = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    finally:
        os.unlink(handle.name)
    before, after = (float(v) for v in output.stdout.split())
    return before, after


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    queries = sample_queries(args.queries)
    print(
        f"machine: {platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()}"
    )
    print("absolute numbers on shared machines are unstable; the same-run ratios are what count")
    print(f"queries: {len(queries)} dev questions (half Cranfield, half CMRC 2018), top {TOP} hits each")
    header = (
        f"{'entries':>8} {'compile s':>9} {'index MiB':>9} {'EG p50':>8} {'EG p99':>8} {'bm25s p50':>9} "
        f"{'scan p50':>9} {'bm25s/EG':>8} {'scan/EG':>8} {'pack p50':>8} {'pack p99':>8}"
    )
    rows: list[str] = []
    p50s: dict[int, float] = {}
    pack_p50s: dict[int, float] = {}
    memory = ""
    for size in args.sizes:
        log(f"[{size}] building the namespace")
        documents = build_namespace(size)
        log(f"[{size}] compiling Evergreen's index")
        started = time.perf_counter()
        compiled = SearchIndex.compile(documents, progress=lambda n: log(f"  analysed {n}") if n % 20000 == 0 else None)
        compile_seconds = time.perf_counter() - started
        data = compiled.to_bytes()
        index = SearchIndex.from_bytes(data)
        del compiled
        gc.collect()
        log(f"[{size}] Evergreen queries")
        evergreen = measure(evergreen_runner(index), queries)
        packed = measure(evergreen_pack_runner(index, documents), queries)
        log(f"[{size}] bm25s: indexing and queries")
        bm25 = measure(bm25s_runner(documents, index.analyzer), queries)
        log(f"[{size}] seed linear scan (at most {REFERENCE_BUDGET_SECONDS:.0f} s)")
        scan = measure(reference_runner(documents), queries, REFERENCE_BUDGET_SECONDS)
        p50s[size] = evergreen.p50_ms
        pack_p50s[size] = packed.p50_ms
        rows.append(
            f"{size:>8} {compile_seconds:>9.1f} {len(data) / 2**20:>9.1f} {evergreen.p50_ms:>8.3f} "
            f"{evergreen.p99_ms:>8.3f} {bm25.p50_ms:>9.3f} {scan.p50_ms:>9.1f} "
            f"{bm25.p50_ms / evergreen.p50_ms:>8.2f} {scan.p50_ms / evergreen.p50_ms:>8.0f} "
            f"{packed.p50_ms:>8.3f} {packed.p99_ms:>8.3f}"
        )
        if size == max(args.sizes):
            log(f"[{size}] resident memory of a fresh process loading the index")
            before, after = resident_after_loading(data)
            memory = f"resident memory with the {size}-entry index loaded: {after:.0f} MiB ({before:.0f} MiB before)"
        del index, documents, data
        gc.collect()
    print(header)
    print("\n".join(rows))
    print("(times in ms; ratios > 1 mean Evergreen is faster; scan p50 over at most its time budget)")
    print(f"(EG = search + the top {TOP} hits, as bm25s and the scan are timed; pack = search, pack to budget")
    print(f" {BUDGET_DEFAULT}, hit count and cheapest hit: the engine's share of /api/context)")
    if len(p50s) > 1:
        smallest, largest = min(p50s), max(p50s)
        print(
            f"p50 growth {smallest} -> {largest} entries: {p50s[largest] / p50s[smallest]:.2f}x "
            f"(pack: {pack_p50s[largest] / pack_p50s[smallest]:.2f}x)"
        )
    if memory:
        print(memory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
