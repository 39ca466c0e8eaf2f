"""manage.py evaluate_scanner: detection and false-positive rates of the safety scanner on its corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.management.progress import Progress
from knowledge.safety.corpus import HALVES, load_corpus
from knowledge.safety.evaluation import (
    by_half,
    failures,
    format_rates,
    measure_throughput,
    scan_samples,
    target_lines,
    throughput_line,
)


class Command(BaseCommand):
    help = (
        "Scan the labelled attack and benign corpus and print detection and false-positive rates per kind and "
        "overall, for the tuning half, the held-out half and both; optionally the scanner's throughput."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=Path(settings.BASE_DIR) / "bench" / "scanner_corpus")
        parser.add_argument(
            "--demo",
            type=Path,
            default=Path(settings.BASE_DIR) / "knowledge" / "demo",
            help="Demo content read as benign.",
        )
        parser.add_argument(
            "--failures", choices=[*HALVES, "all"], help="List missed attacks and flagged benign texts."
        )
        parser.add_argument("--throughput", action="store_true", help="Also time three scans of the whole corpus.")
        parser.add_argument("--strict", action="store_true", help="Exit with an error when a half misses a target.")

    def handle(self, *args: Any, **options: Any) -> None:
        corpus_dir: Path = options["corpus"]
        if not (corpus_dir / "attacks.jsonl").is_file() or not (corpus_dir / "benign.jsonl").is_file():
            raise CommandError(f"No scanner corpus in {corpus_dir} (attacks.jsonl and benign.jsonl); pass --corpus.")
        demo = options["demo"] if (options["demo"] / "entries.jsonl").is_file() else None
        try:
            corpus = load_corpus(corpus_dir, demo=demo)
        except (ValueError, KeyError) as error:
            raise CommandError(f"Unreadable corpus: {error}") from error
        samples = [*corpus.attacks, *corpus.benign]
        outcomes = scan_samples(samples, progress=Progress("Scanning corpus"))
        report = by_half(outcomes)
        self.stdout.write(
            f"Scanner corpus {corpus_dir}: {len(corpus.attacks)} attacks, {len(corpus.benign)} benign texts"
        )
        for line in [*format_rates(report), "", *target_lines(report)]:
            self.stdout.write(line)
        if options["throughput"]:
            self.stdout.write(throughput_line(measure_throughput(corpus)))
        if options["failures"]:
            half = None if options["failures"] == "all" else options["failures"]
            for line in failures(outcomes, half=half):
                self.stdout.write(line)
        if options["strict"] and any("MISS" in line for line in target_lines(report)):
            raise CommandError("The scanner misses a target (see above).")
