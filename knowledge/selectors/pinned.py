"""Releases other than the active one, for pinned reads (?release=), replay and citation checks.

Any release a namespace served within EVERGREEN_RELEASE_RETENTION_DAYS can be read again: the active
one, one built within the window, or one that stopped serving within it. Releases are immutable and
never deleted, so a pinned answer is the answer that release gave. Pinned releases are loaded into a
small per-process cache of their own, so reading an old release never evicts the active one.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from knowledge.models import Release, ReleaseActivation
from knowledge.selectors import serving
from knowledge.selectors.serving import LoadedRelease, release_cache_key

PINNED_MAX = 4
_SEQUENCE = re.compile(r"^\d{1,9}$")
_SEMVER = re.compile(r"^v?\d+\.\d+\.\d+$")

RELEASE_INVALID = "release must be a releaseId (a whole number) or a knowledgeVersion such as 1.4.0."
RELEASE_UNKNOWN = "This namespace has no release {reference}."
RELEASE_EXPIRED = (
    "Release {reference} stopped serving more than {days} days ago; only releases served within that "
    "window can be read again (EVERGREEN_RELEASE_RETENTION_DAYS)."
)


class PinError(Exception):
    """A release reference that does not parse (invalid_release), names nothing (unknown_release) or is
    outside the retention window (release_expired)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class PinnedRelease:
    release: Release
    loaded: LoadedRelease


_pinned: OrderedDict[int, LoadedRelease] = OrderedDict()
_lock = threading.Lock()


def pinned_releases_clear() -> None:
    with _lock:
        _pinned.clear()


def release_find(*, namespace_id: int, reference: str | int) -> Release:
    """The namespace's release with this releaseId or knowledgeVersion (the latest of that version)."""
    text = str(reference).strip()
    releases = Release.objects.filter(namespace_id=namespace_id)
    if _SEQUENCE.match(text):
        found = releases.filter(sequence=int(text)).first()
    elif _SEMVER.match(text):
        found = releases.filter(knowledge_version=text.removeprefix("v")).order_by("-sequence").first()
    else:
        raise PinError(RELEASE_INVALID, "invalid_release")
    if found is None:
        raise PinError(RELEASE_UNKNOWN.format(reference=text), "unknown_release")
    return found


def release_retained(*, release: Release, active_id: int | None) -> bool:
    """Whether the release served within the retention window (the active one always has)."""
    if release.pk == active_id:
        return True
    cutoff = timezone.now() - timedelta(days=settings.EVERGREEN.release_retention_days)
    if release.built_at >= cutoff:
        return True
    # It was switched to, or away from, within the window (history recorded since activations are).
    switched = ReleaseActivation.objects.filter(Q(release=release) | Q(previous=release), at__gte=cutoff)
    return switched.exists()


def release_load(release: Release) -> LoadedRelease:
    """The release in this process's pinned cache, loading it on first use (the serving cache stays as it is)."""
    key = release_cache_key(release)
    with _lock:
        loaded = _pinned.get(release.pk)
        if loaded is not None and loaded.key == key:
            _pinned.move_to_end(release.pk)
            return loaded
    loaded = serving.release_read(release_id=release.pk, key=key, namespace_id=release.namespace_id)
    with _lock:
        _pinned[release.pk] = loaded
        while len(_pinned) > PINNED_MAX:
            _pinned.popitem(last=False)
    return loaded


def release_pinned(
    *, namespace_id: int, active: LoadedRelease, reference: str | int | None = None, release_id: int | None = None
) -> PinnedRelease:
    """The release a request pinned (by releaseId or knowledgeVersion, or by row id), loaded; the active
    one is the request's own (no second copy)."""
    if release_id is not None:
        found = Release.objects.filter(namespace_id=namespace_id, pk=release_id).first()
        if found is None:
            raise PinError(RELEASE_UNKNOWN.format(reference=release_id), "unknown_release")
        release = found
        reference = release.sequence
    else:
        release = release_find(namespace_id=namespace_id, reference=reference or "")
    if release.pk == active.release_id:
        return PinnedRelease(release, active)
    if release.files_pruned_at is not None or not release_retained(release=release, active_id=active.release_id):
        days = settings.EVERGREEN.release_retention_days
        raise PinError(RELEASE_EXPIRED.format(reference=reference, days=days), "release_expired")
    return PinnedRelease(release, release_load(release).cleared(active.clearance))
