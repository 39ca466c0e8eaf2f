"""Safety scans at review (issue 12 §2): every submitted version, every imported line, every feedback.

The pure scanner (knowledge.safety) finds; this module decides. A high-severity finding refuses
approval (and a publishing import); medium and low ones are warnings that a reviewer acknowledges
with a written reason, kept in the audit trail. The scan of the submitted content is stored on the
version, so the review page shows each finding's span.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final
from urllib.parse import urlsplit

from knowledge.actors import Actor
from knowledge.errors import BlockedFindingsError, UnacknowledgedWarningsError
from knowledge.models import EntryVersion, Namespace, TextVersion
from knowledge.safety import Finding, Severity, scan_fields, scan_json
from knowledge.services.audit import audit_record

BLOCKED: Final = (
    "The safety scan blocks this: {findings}. Change the text (the review page marks each span); "
    "nothing with a high-severity finding is approved."
)
UNACKNOWLEDGED: Final = (
    "The safety scan warns: {findings}. Read the marked spans and acknowledge the warnings with a reason to approve."
)
IMPORT_BLOCKED: Final = (
    "The safety scan blocks publishing this file: {findings}. Fix those lines, or import without "
    "--publish so that reviewers see them."
)
IMPORT_UNACKNOWLEDGED: Final = (
    "The safety scan warns about this file: {findings}. Check those lines, then import again with "
    "--acknowledge-warnings REASON (recorded in the audit trail)."
)
SHOWN_MAX: Final = 5

AnyVersion = EntryVersion | TextVersion


def namespace_allowed_hosts(*, namespace: Namespace) -> tuple[str, ...]:
    """The hosts a namespace's texts may link to without a finding: its base URL's and its own host names."""
    hosts = [urlsplit(namespace.base_url).hostname or ""]
    hosts += list(namespace.hosts.values_list("host", flat=True))
    return tuple(host for host in hosts if host)


def version_scan(*, version: AnyVersion, namespace: Namespace) -> tuple[Finding, ...]:
    hosts = namespace_allowed_hosts(namespace=namespace)
    if isinstance(version, TextVersion):
        return scan_json(version.content, allowed_hosts=hosts)
    fields = {
        "title": version.title,
        "summary": version.summary,
        "body": version.body,
        "tags": ", ".join(version.tags),
        "aliases": ", ".join(version.aliases),
    }
    return scan_fields(fields, allowed_hosts=hosts)


def findings_record(*, version: AnyVersion, namespace: Namespace) -> tuple[Finding, ...]:
    """Scan the version and keep the findings on it (for the review page)."""
    findings = version_scan(version=version, namespace=namespace)
    version.findings = [finding.as_dict() for finding in findings]
    version.save(update_fields=["findings"])
    return findings


def stored_findings(version: AnyVersion) -> list[Finding]:
    return [Finding.from_dict(item) for item in version.findings or []]


def _listed(findings: Sequence[Finding]) -> str:
    shown = [f"{finding.code} in {finding.field}" for finding in findings[:SHOWN_MAX]]
    more = f" and {len(findings) - SHOWN_MAX} more" if len(findings) > SHOWN_MAX else ""
    return ", ".join(shown) + more


def findings_gate(findings: Iterable[Finding], *, acknowledgement: str) -> list[Finding]:
    """Raise unless the findings may pass: none high, and warnings acknowledged. Returns the warnings."""
    findings = list(findings)
    blocked = [finding for finding in findings if finding.severity == Severity.HIGH]
    if blocked:
        raise BlockedFindingsError(BLOCKED.format(findings=_listed(blocked)))
    if findings and not acknowledgement.strip():
        raise UnacknowledgedWarningsError(UNACKNOWLEDGED.format(findings=_listed(findings)))
    return findings


def approval_safety_check(*, version: AnyVersion, namespace: Namespace, actor: Actor, acknowledgement: str) -> None:
    """The scan a reviewer's approval must pass; acknowledged warnings are audited with the reason."""
    warnings = findings_gate(findings_record(version=version, namespace=namespace), acknowledgement=acknowledgement)
    if warnings:
        audit_record(
            namespace=namespace,
            actor=actor,
            action="acknowledge-warnings",
            entry=version.entry if isinstance(version, EntryVersion) else None,
            version=version if isinstance(version, EntryVersion) else None,
            text_version=version if isinstance(version, TextVersion) else None,
            note=acknowledgement.strip(),
            field="findings",
            new_value=sorted({finding.code for finding in warnings}),
        )


def import_safety_check(
    *,
    namespace: Namespace,
    lines: Sequence[tuple[int, Mapping[str, str]]],
    publish: bool,
    acknowledgement: str,
    actor: Actor,
) -> None:
    """Scan the lines an import writes (line number, fields); refuse the file as `findings_gate` would.

    High-severity findings refuse a publishing import even when acknowledged; in drafts they wait for
    review like any other draft, once the import is acknowledged.
    """
    hosts = namespace_allowed_hosts(namespace=namespace)
    found: list[tuple[int, Finding]] = [
        (line_no, finding) for line_no, fields in lines for finding in scan_fields(fields, allowed_hosts=hosts)
    ]
    if not found:
        return
    described = [f"line {line_no}: {finding.code} in {finding.field}" for line_no, finding in found]
    shown = "; ".join(described[:SHOWN_MAX]) + (f" and {len(found) - SHOWN_MAX} more" if len(found) > SHOWN_MAX else "")
    if publish and any(finding.severity == Severity.HIGH for _, finding in found):
        raise BlockedFindingsError(IMPORT_BLOCKED.format(findings=shown))
    if not acknowledgement.strip():
        raise UnacknowledgedWarningsError(IMPORT_UNACKNOWLEDGED.format(findings=shown))
    audit_record(
        namespace=namespace,
        actor=actor,
        action="acknowledge-warnings",
        note=f"Import: {acknowledgement.strip()}",
        field="findings",
        new_value=described[:200],
    )
