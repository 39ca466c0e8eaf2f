"""The safety scan on the review page: each finding listed, and its span marked in the field's text."""

from __future__ import annotations

from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from knowledge.models import EntryVersion, Namespace, TextVersion
from knowledge.safety import Finding
from knowledge.safety.highlight import segments
from knowledge.services.safety import version_scan

NONE_FOUND = "The safety scan finds nothing in this version."


def _field_text(version: EntryVersion | TextVersion, path: str) -> str:
    """The scanned text a finding's field names (`body`, `tags`, `rules.2`, `faq.0.answer`)."""
    if isinstance(version, EntryVersion):
        value = getattr(version, path, "")
        return ", ".join(value) if isinstance(value, list) else str(value)
    node: Any = version.content
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.get(part, "")
        else:
            return ""
    return node if isinstance(node, str) else ""


def _marked(text: str, findings: list[Finding]) -> SafeString:
    parts = [
        format_html(
            '<mark class="evergreen-finding-{}" title="{}">{}</mark>',
            piece.severity,
            piece.findings[0].code,
            piece.text,
        )
        if piece.findings and piece.severity
        else format_html("{}", piece.text)
        for piece in segments(text, findings)
    ]
    return format_html('<pre class="evergreen-marked">{}</pre>', SafeString("".join(parts)))


def findings_html(version: EntryVersion | TextVersion, namespace: Namespace) -> SafeString:
    """A fresh scan of the version as it stands (the approval runs the same one)."""
    findings = list(version_scan(version=version, namespace=namespace))
    if not findings:
        return format_html("<p>{}</p>", NONE_FOUND)
    rows = format_html_join(
        "",
        '<li class="evergreen-finding-{}"><strong>{}</strong> {} in <code>{}</code>: {} <q>{}</q></li>',
        (
            (f.severity, f.severity, f.code, f.field, f.message, f.evidence(_field_text(version, f.field)))
            for f in findings
        ),
    )
    by_field: dict[str, list[Finding]] = {}
    for finding in findings:
        by_field.setdefault(finding.field, []).append(finding)
    marked = format_html_join(
        "", "<h4>{}</h4>{}", ((field, _marked(_field_text(version, field), found)) for field, found in by_field.items())
    )
    blocked = any(f.severity == "high" for f in findings)
    verdict = (
        "High-severity findings block approval: the text must change."
        if blocked
        else "Warnings: approving needs your written acknowledgement (kept in the audit trail)."
    )
    return format_html('<p><strong>{}</strong></p><ul class="evergreen-findings">{}</ul>{}', verdict, rows, marked)
