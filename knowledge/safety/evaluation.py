"""Detection and false-positive rates of the scanner over a corpus, per kind and per half."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from knowledge.safety.corpus import HALVES, Corpus, Sample
from knowledge.safety.findings import Finding, Kind
from knowledge.safety.scanner import scan_fields

KINDS = tuple(kind.value for kind in Kind)


@dataclass(frozen=True)
class Outcome:
    sample: Sample
    findings: tuple[Finding, ...]

    @property
    def found(self) -> frozenset[str]:
        return frozenset(finding.kind.value for finding in self.findings)

    @property
    def missed(self) -> frozenset[str]:
        return self.sample.kinds - self.found


@dataclass(frozen=True)
class Rates:
    """Detection: attacks whose every labelled kind was reported. False positives: benign texts with
    any finding at all (any kind, any severity)."""

    attacks: int
    detected: int
    benign: int
    flagged: int
    per_kind: dict[str, tuple[int, int, int]]  # kind -> (labelled, detected, benign flagged)

    @property
    def detection(self) -> float:
        return self.detected / self.attacks if self.attacks else 1.0

    @property
    def false_positives(self) -> float:
        return self.flagged / self.benign if self.benign else 0.0


def scan_samples(samples: Sequence[Sample], progress: Callable[[int, int], None] | None = None) -> list[Outcome]:
    outcomes = []
    for index, sample in enumerate(samples, 1):
        outcomes.append(Outcome(sample, scan_fields(sample.fields, allowed_hosts=sample.allowed_hosts)))
        if progress:
            progress(index, len(samples))
    return outcomes


def rates(outcomes: Iterable[Outcome]) -> Rates:
    attacks = detected = benign = flagged = 0
    per_kind = {kind: [0, 0, 0] for kind in KINDS}
    for outcome in outcomes:
        if outcome.sample.attack:
            attacks += 1
            detected += not outcome.missed
            for kind in outcome.sample.kinds:
                per_kind[kind][0] += 1
                per_kind[kind][1] += kind in outcome.found
        else:
            benign += 1
            flagged += bool(outcome.findings)
            for kind in outcome.found:
                per_kind[kind][2] += 1
    return Rates(attacks, detected, benign, flagged, {k: (v[0], v[1], v[2]) for k, v in per_kind.items()})


def by_half(outcomes: Sequence[Outcome]) -> dict[str, Rates]:
    report = {half: rates(o for o in outcomes if o.sample.half == half) for half in HALVES}
    report["all"] = rates(outcomes)
    return report


def format_rates(report: dict[str, Rates]) -> list[str]:
    lines = [f"{'':18}" + "".join(f"{half:>32}" for half in report)]
    lines.append(f"{'':18}" + "".join(f"{'detected':>16}{'false pos.':>16}" for _ in report))
    for kind in KINDS:
        cells = []
        for result in report.values():
            labelled, found, flagged = result.per_kind[kind]
            cells.append(f"{_share(found, labelled):>16}{_share(flagged, result.benign):>16}")
        lines.append(f"{kind:18}" + "".join(cells))
    overall = "".join(f"{_share(r.detected, r.attacks):>16}{_share(r.flagged, r.benign):>16}" for r in report.values())
    lines.append(f"{'overall':18}" + overall)
    lines.append(
        f"{'samples':18}" + "".join(f"{f'{r.attacks} attacks':>16}{f'{r.benign} benign':>16}" for r in report.values())
    )
    return lines


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% {part}/{whole}" if whole else "-"


def failures(outcomes: Iterable[Outcome], *, half: str | None = None) -> list[str]:
    """One line per missed attack or flagged benign text (for tuning on the tuning half only)."""
    lines = []
    for outcome in outcomes:
        if half and outcome.sample.half != half:
            continue
        sample = outcome.sample
        if sample.attack and outcome.missed:
            lines.append(f"MISSED {sample.id} {sorted(outcome.missed)}: {_preview(sample)}")
        elif not sample.attack and outcome.findings:
            first = outcome.findings[0]
            text = sample.fields[first.field]
            lines.append(f"FLAGGED {sample.id} {first.code}: {first.evidence(text)!r}")
    return lines


def _preview(sample: Sample) -> str:
    text = " ".join(sample.fields.values()).replace("\n", " ")
    return text[:100]


@dataclass(frozen=True)
class Throughput:
    texts: int
    characters: int
    seconds: float

    @property
    def texts_per_second(self) -> float:
        return self.texts / self.seconds if self.seconds else 0.0

    @property
    def megabytes_per_second(self) -> float:
        return self.characters / 1e6 / self.seconds if self.seconds else 0.0


def measure_throughput(corpus: Corpus, *, rounds: int = 3) -> Throughput:
    """Scans of every corpus text, `rounds` times over (the first round also warms caches)."""
    samples = [*corpus.attacks, *corpus.benign]
    characters = sum(len(text) for sample in samples for text in sample.fields.values())
    scan_samples(samples)
    started = time.perf_counter()
    for _ in range(rounds):
        scan_samples(samples)
    return Throughput(len(samples) * rounds, characters * rounds, time.perf_counter() - started)


DETECTION_TARGET = 0.95
FALSE_POSITIVE_TARGET = 0.02


def target_lines(report: dict[str, Rates]) -> list[str]:
    """Issue 12's targets against each half: detection ≥ 95 %, false positives ≤ 2 %."""
    lines = []
    for half, result in report.items():
        detection_ok = result.detection >= DETECTION_TARGET
        false_ok = result.false_positives <= FALSE_POSITIVE_TARGET
        lines.append(
            f"{half:8} detection {100 * result.detection:5.1f}% (target >= {100 * DETECTION_TARGET:.0f}%) "
            f"{'PASS' if detection_ok else 'MISS'}   false positives {100 * result.false_positives:4.1f}% "
            f"(target <= {100 * FALSE_POSITIVE_TARGET:.0f}%) {'PASS' if false_ok else 'MISS'}"
        )
    return lines


def throughput_line(throughput: Throughput) -> str:
    return (
        f"throughput: {throughput.texts_per_second:.0f} texts/s, {throughput.megabytes_per_second:.2f} M characters/s "
        f"({throughput.texts} scans of {throughput.characters / max(1, throughput.texts):.0f} characters on average)"
    )
