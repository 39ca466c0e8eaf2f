"""?release=<releaseId | knowledgeVersion> on every read route, and the headers that name the release served."""

from __future__ import annotations

from dataclasses import replace

from django.http import HttpRequest

from gateway.errors import BadParameterError, GoneError
from gateway.gate import Gate
from knowledge.selectors.pinned import PinError, release_pinned

RELEASE_HEADER = "Evergreen-Release"
VERSION_HEADER = "Evergreen-Knowledge-Version"


def pinned_gate(request: HttpRequest, gate: Gate) -> Gate:
    """The gate with the release the request pinned (within the retention window), else as it came."""
    if "release=" not in request.META.get("QUERY_STRING", ""):
        return gate  # the common case costs one substring test, no QueryDict
    reference = request.GET.get("release", "").strip()
    if not reference:
        return gate
    try:
        pinned = release_pinned(namespace_id=gate.namespace.id, reference=reference, active=gate.release)
    except PinError as error:
        refusal = GoneError if error.code == "release_expired" else BadParameterError
        raise refusal(str(error), param="release", code=error.code) from None
    return replace(gate, release=pinned.loaded)


def release_headers(gate: Gate) -> dict[str, str]:
    stamp = gate.release.stamp
    return {RELEASE_HEADER: str(stamp.sequence), VERSION_HEADER: stamp.knowledge_version}
