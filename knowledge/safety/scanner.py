"""The scan: every rule family over shared views of one text, findings sorted by position."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from knowledge.safety.context import ScanContext
from knowledge.safety.encoded import BASE64_RUN, decode_base64, decode_tags
from knowledge.safety.findings import Finding, Kind, Severity
from knowledge.safety.hidden import find_hidden
from knowledge.safety.html import find_executable_html
from knowledge.safety.injection import find_injection
from knowledge.safety.links import find_links
from knowledge.safety.mimicry import find_mimicry
from knowledge.safety.personal import find_personal_data
from knowledge.safety.secrets import find_secrets

Family = Callable[[ScanContext], None]
FAMILIES: tuple[Family, ...] = (
    find_injection,
    find_mimicry,
    find_hidden,
    find_secrets,
    find_personal_data,
    find_links,
    find_executable_html,
)
# What text decoded from base64 or tag characters is scanned for (its own links and personal data
# are reported through the instruction that carries them, if any).
DECODED_FAMILIES: tuple[Family, ...] = (find_injection, find_mimicry, find_executable_html, find_secrets)


def scan_text(text: str, *, field: str = "body", allowed_hosts: Iterable[str] = ()) -> tuple[Finding, ...]:
    """Findings in `text`, each spanning the exact offsets of its evidence, sorted by position.

    `allowed_hosts` are the namespace's own hosts (a host also allows its subdomains); links,
    images and e-mail addresses on them are not reported.
    """
    hosts = frozenset(host.strip().lower().rstrip(".") for host in allowed_hosts if host and host.strip())
    context = ScanContext(text, field=field, allowed_hosts=hosts)
    for family in FAMILIES:
        family(context)
    _encoded(context)
    return _distinct(context.findings)


def scan_fields(fields: Mapping[str, str], *, allowed_hosts: Iterable[str] = ()) -> tuple[Finding, ...]:
    """Findings of several fields of one version (title, summary, body, tags …), field by field."""
    hosts = tuple(allowed_hosts)
    return tuple(
        finding for name, value in fields.items() for finding in scan_text(value or "", field=name, allowed_hosts=hosts)
    )


def scan_json(content: object, *, allowed_hosts: Iterable[str] = (), prefix: str = "") -> tuple[Finding, ...]:
    """Findings in every string of a JSON value; each finding's field is the string's path
    (`rules.2`, `faq.0.answer`), so structured texts (a namespace profile, a FAQ) are scanned whole."""
    hosts = tuple(allowed_hosts)
    if isinstance(content, str):
        return scan_text(content, field=prefix or "text", allowed_hosts=hosts)
    if isinstance(content, dict):
        items = ((f"{prefix}.{key}" if prefix else str(key), value) for key, value in content.items())
    elif isinstance(content, list | tuple):
        items = ((f"{prefix}.{index}" if prefix else str(index), value) for index, value in enumerate(content))
    else:
        return ()
    return tuple(finding for path, value in items for finding in scan_json(value, allowed_hosts=hosts, prefix=path))


_ENCODED_MESSAGE = "Base64-encoded text hides its content from reviewers: it decodes to {preview!r}."


def _encoded(context: ScanContext) -> None:
    """Decode base64 runs and tag-character runs; report what the decoded text holds at the run's span."""
    text = context.text
    for match in BASE64_RUN.finditer(text):
        decoded = decode_base64(match[0])
        if decoded is None or any(
            f.start <= match.start() and match.end() <= f.end for f in context.findings if f.kind == Kind.SECRET
        ):
            continue
        preview = decoded[:60] + ("…" if len(decoded) > 60 else "")
        context.add(
            *match.span(),
            Kind.HIDDEN_TEXT,
            Severity.LOW,
            "hidden.encoded_text",
            _ENCODED_MESSAGE.format(preview=preview),
        )
        _report_inner(context, decoded, match.start(), match.end(), "base64")
    if not text.isascii():
        for finding in [f for f in context.findings if f.code == "hidden.tag_characters"]:
            _report_inner(
                context, decode_tags(text[finding.start : finding.end]), finding.start, finding.end, "tag characters"
            )


def _report_inner(context: ScanContext, decoded: str, start: int, end: int, carrier: str) -> None:
    inner = ScanContext(decoded, field=context.field, allowed_hosts=context.allowed_hosts)
    for family in DECODED_FAMILIES:
        family(inner)
    for finding in _distinct(inner.findings):
        context.add(start, end, finding.kind, finding.severity, finding.code, f"Hidden in {carrier}: {finding.message}")


def _distinct(findings: list[Finding]) -> tuple[Finding, ...]:
    """One finding per code and place: overlapping matches of the same code merge into the widest."""
    ordered = sorted(findings, key=lambda f: (f.code, f.start, -f.end))
    kept: list[Finding] = []
    for finding in ordered:
        last = kept[-1] if kept else None
        if last and last.code == finding.code and finding.start < last.end:
            if finding.end > last.end or finding.severity.rank > last.severity.rank:
                severity = max(last.severity, finding.severity, key=lambda s: s.rank)
                kept[-1] = Finding(
                    last.start, max(last.end, finding.end), last.kind, severity, last.code, last.message, last.field
                )
            continue
        kept.append(finding)
    return tuple(sorted(kept, key=lambda f: (f.start, -f.severity.rank, f.end, f.code)))
