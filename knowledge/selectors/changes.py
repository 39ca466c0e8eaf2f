"""Which release a change-feed `since` names: a release number, a knowledgeVersion, or a moment in time."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from knowledge.models import Release, ReleaseActivation

# ASCII digits, as gateway.changes.SINCE_PATTERN declares (\d would also take "٣", read as release 3).
_SEQUENCE = re.compile(r"[0-9]{1,9}")
_SEMVER = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+")

SINCE_INVALID = (
    "since must be a release number (releaseId), a knowledgeVersion such as 1.4.0, or an ISO 8601 date or time."
)
SINCE_UNKNOWN = "This namespace has no release {reference}; releaseId and knowledgeVersion name one in its responses."


class SinceError(ValueError):
    """A `since` that does not parse (code invalid_since) or names no release (unknown_release)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Since:
    """The release changes are counted from; None means "from nothing" (every served entry is added)."""

    release_id: int | None
    sequence: int | None
    knowledge_version: str | None
    manifest: dict[str, Any] | None


def _moment(reference: str) -> datetime | None:
    """The time in UTC (a naive one is UTC), or None when it does not parse or its UTC time falls outside
    the years 1 to 9999 (9999-12-31T23:59:59-12:00): a datetime cannot hold it, so the query would overflow."""
    try:
        moment = datetime.fromisoformat(reference.replace("Z", "+00:00"))
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _as_since(release: Release | None) -> Since:
    if release is None:
        return Since(None, None, None, None)
    return Since(release.pk, release.sequence, release.knowledge_version, release.manifest)


def _served_at(namespace_id: int, moment: datetime) -> Release | None:
    """The release active at `moment`: its last activation before then, else (history from before
    activations were recorded) the last release built by then; None before the first release."""
    activation = (
        ReleaseActivation.objects.filter(namespace_id=namespace_id, at__lte=moment)
        .select_related("release")
        .order_by("-at", "-id")
        .first()
    )
    if activation is not None:
        return activation.release
    return Release.objects.filter(namespace_id=namespace_id, built_at__lte=moment).order_by("-sequence").first()


def since_resolve(*, namespace_id: int, reference: str) -> Since:
    """Raises SinceError for a reference that does not parse or names no release of the namespace."""
    reference = reference.strip()
    releases = Release.objects.filter(namespace_id=namespace_id)
    if _SEQUENCE.fullmatch(reference):
        if int(reference) == 0:
            return _as_since(None)
        found = releases.filter(sequence=int(reference)).first()
    elif _SEMVER.fullmatch(reference):
        found = releases.filter(knowledge_version=reference.removeprefix("v")).order_by("-sequence").first()
    else:
        moment = _moment(reference)
        if moment is None:
            raise SinceError(SINCE_INVALID, "invalid_since")
        return _as_since(_served_at(namespace_id, moment))
    if found is None:
        raise SinceError(SINCE_UNKNOWN.format(reference=reference), "unknown_release")
    return _as_since(found)
