"""Shared helpers for the scanner's pure tests: scan and describe findings as (code, severity, evidence)."""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.safety import Finding, scan_text

HOSTS = ("evergreen.example.com",)


def scan(text: str, *, hosts: Iterable[str] = HOSTS, field: str = "body") -> tuple[Finding, ...]:
    return scan_text(text, field=field, allowed_hosts=hosts)


def described(text: str, **options: object) -> list[tuple[str, str, str]]:
    """Each finding as (code, severity, the exact flagged text)."""
    return [(f.code, f.severity.value, text[f.start : f.end]) for f in scan(text, **options)]  # type: ignore[arg-type]


def codes(text: str, **options: object) -> set[str]:
    return {f.code for f in scan(text, **options)}  # type: ignore[arg-type]


def kinds(text: str, **options: object) -> set[str]:
    return {f.kind.value for f in scan(text, **options)}  # type: ignore[arg-type]
