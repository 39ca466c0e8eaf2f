"""Split a field's text into plain and flagged segments, so a page can mark each finding's span."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from knowledge.safety.findings import Finding, Severity


@dataclass(frozen=True)
class Segment:
    """A run of the text; `findings` are those whose span covers all of it (empty: plain text)."""

    text: str
    findings: tuple[Finding, ...] = ()

    @property
    def severity(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)


def segments(text: str, findings: Iterable[Finding]) -> list[Segment]:
    """The text cut at every finding boundary; overlapping findings share the segments they cover.
    Empty spans (a finding about a position) are widened to one character when there is one."""
    spans = [_widened(f, len(text)) for f in findings]
    cuts = sorted({0, len(text), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    pieces = []
    for start, end in pairwise(cuts):
        if start >= end:
            continue
        covering = tuple(f for s, e, f in spans if s <= start and end <= e)
        pieces.append(Segment(text[start:end], covering))
    return _merged(pieces)


def _widened(finding: Finding, length: int) -> tuple[int, int, Finding]:
    start, end = max(0, min(finding.start, length)), max(0, min(finding.end, length))
    if start == end and start < length:
        end = start + 1
    return start, end, finding


def _merged(pieces: Sequence[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for piece in pieces:
        if merged and merged[-1].findings == piece.findings:
            merged[-1] = Segment(merged[-1].text + piece.text, piece.findings)
        else:
            merged.append(piece)
    return merged
