"""?release=<releaseId | knowledgeVersion> on every read route, and the headers that name the release served."""

from __future__ import annotations

from dataclasses import replace

from django.http import HttpRequest

from gateway.declared import REPEATED, Parameter
from gateway.errors import GoneError
from gateway.gate import Gate
from knowledge.selectors.pinned import RELEASE_INVALID, RELEASE_UNKNOWN, PinError, release_pinned

RELEASE_HEADER = "Evergreen-Release"
VERSION_HEADER = "Evergreen-Knowledge-Version"
# A releaseId or a knowledgeVersion, as knowledge.selectors.pinned parses them (surrounding blanks are trimmed).
RELEASE_PATTERN = r"^\s*(?:[0-9]{1,9}|v?[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9})?\s*$"
RELEASE = Parameter(
    "release",
    {"type": "string", "pattern": RELEASE_PATTERN, "examples": ["3", "1.4.0"]},
    "Read an earlier release: its releaseId or knowledgeVersion (served within the retention window; older ones "
    "answer 410 release_expired). Empty means the active release.",
    {"invalid_release": RELEASE_INVALID, "unknown_release": RELEASE_UNKNOWN, "repeated_parameter": REPEATED},
)


def pinned_gate(request: HttpRequest, gate: Gate) -> Gate:
    """The gate with the release the request pinned (within the retention window), else as it came."""
    if "release=" not in request.META.get("QUERY_STRING", ""):
        return gate  # the common case costs one substring test, no QueryDict
    sent = request.GET.getlist(RELEASE.name)  # QueryDict.get would take the last of several
    if len(sent) > 1:
        raise RELEASE.refusal("repeated_parameter", param=RELEASE.name)
    reference = sent[0].strip() if sent else ""
    if not reference:
        return gate
    try:
        pinned = release_pinned(namespace_id=gate.namespace.id, reference=reference, active=gate.release)
    except PinError as error:
        if error.code == "release_expired":
            raise GoneError(str(error), param=RELEASE.name, code=error.code) from None
        raise RELEASE.refusal(error.code, str(error)) from None
    return replace(gate, release=pinned.loaded)


def release_headers(gate: Gate) -> dict[str, str]:
    stamp = gate.release.stamp
    return {RELEASE_HEADER: str(stamp.sequence), VERSION_HEADER: stamp.knowledge_version}
