"""What every rule family receives: the text, its views, where code samples are, the allowed hosts."""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from knowledge.safety.findings import Finding, Kind, Severity
from knowledge.safety.views import View, Views, build_views, fold

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")


@dataclass
class ScanContext:
    """One text under scan. Views are built lazily: a family that needs none costs nothing."""

    text: str
    field: str = "body"
    allowed_hosts: frozenset[str] = frozenset()
    findings: list[Finding] = dataclasses.field(default_factory=list)

    @cached_property
    def views(self) -> Views:
        return build_views(self.text, self.marked)

    @cached_property
    def marked(self) -> View:
        """Folded, with HTML and chat-template markup kept (role tokens live in angle brackets)."""
        return fold(self.text)

    @cached_property
    def code_spans(self) -> tuple[list[int], list[int]]:
        """Starts and ends of Markdown code (fenced blocks, inline code): samples shown, never run."""
        spans: list[tuple[int, int]] = []
        if "```" in self.text or "~~~" in self.text:
            spans.extend(m.span() for m in _FENCE.finditer(self.text))
        if "`" in self.text:
            spans.extend(m.span() for m in _INLINE_CODE.finditer(self.text) if not _inside(spans, m.start()))
        spans.sort()
        return [s for s, _ in spans], [e for _, e in spans]

    def in_code(self, start: int, end: int | None = None) -> bool:
        starts, ends = self.code_spans
        if not starts:
            return False
        index = bisect.bisect_right(starts, start) - 1
        return index >= 0 and ends[index] >= (start + 1 if end is None else end)

    def add(self, start: int, end: int, kind: Kind, severity: Severity, code: str, message: str) -> None:
        start = max(0, min(start, len(self.text)))
        end = max(start, min(end, len(self.text)))
        self.findings.append(Finding(start, end, kind, severity, code, message, self.field))

    def host_allowed(self, host: str) -> bool:
        return any(host == allowed or host.endswith("." + allowed) for allowed in self.allowed_hosts)


def _inside(spans: Iterable[tuple[int, int]], position: int) -> bool:
    return any(start <= position < end for start, end in spans)
