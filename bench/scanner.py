"""The safety scanner on its labelled corpus: detection, false positives and throughput.

Run: .venv/bin/python -m bench.scanner  (progress on stderr, the report on stdout)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.publish import log
from knowledge.safety.corpus import load_corpus
from knowledge.safety.evaluation import (
    Rates,
    Throughput,
    by_half,
    format_rates,
    measure_throughput,
    scan_samples,
    target_lines,
    throughput_line,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "scanner_corpus"
DEMO = ROOT / "knowledge" / "demo"


@dataclass(frozen=True)
class ScannerResult:
    report: dict[str, Rates]
    throughput: Throughput

    def text(self) -> str:
        return "\n".join([*format_rates(self.report), "", *target_lines(self.report), throughput_line(self.throughput)])


def measure_scanner(*, rounds: int = 3) -> ScannerResult:
    corpus = load_corpus(CORPUS, demo=DEMO)
    samples = [*corpus.attacks, *corpus.benign]
    log(f"scanning {len(corpus.attacks)} attacks and {len(corpus.benign)} benign texts")
    report = by_half(scan_samples(samples))
    log(f"timing {rounds} rounds")
    return ScannerResult(report, measure_throughput(corpus, rounds=rounds))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scanner", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the corpus")
    args = parser.parse_args(argv)
    print(measure_scanner(rounds=args.rounds).text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
