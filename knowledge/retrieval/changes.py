"""What changed between two releases, per entry, from their manifests (pure: the change feed and webhooks).

A manifest is {"entries": [{id, version, hash}], "retired": [id]}. Against the earlier release an
entry is `added` (new), `changed` (another content hash), `retired` (newly retired), `restored`
(retired before, served again) or `removed` (served before, neither served nor retired now: a
rollback to a release from before it existed).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

KINDS = ("added", "changed", "retired", "restored", "removed")
_NUMBERED = re.compile(r"^(.*?)-?(\d+)$")

Manifest = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class EntryChange:
    id: str
    change: str  # one of KINDS
    version: int | None  # now (None when retired or removed)
    hash: str | None
    previous_version: int | None  # in the earlier release (None when it was not served there)
    previous_hash: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "change": self.change,
            "version": self.version,
            "contentHash": self.hash,
            "previousVersion": self.previous_version,
            "previousContentHash": self.previous_hash,
        }


def id_order(entry_id: str) -> tuple[str, int, str]:
    """EG-99 before EG-100 (by number within a prefix), as listings of entries are ordered."""
    match = _NUMBERED.match(entry_id)
    if match is None:
        return (entry_id, -1, entry_id)
    return (match[1], int(match[2]), entry_id)


def _served(manifest: Manifest | None) -> dict[str, tuple[int, str]]:
    if not manifest:
        return {}
    return {item["id"]: (int(item["version"]), str(item["hash"])) for item in manifest.get("entries", ())}


def _retired(manifest: Manifest | None) -> set[str]:
    return set(manifest.get("retired", ())) if manifest else set()


def manifest_changes(before: Manifest | None, after: Manifest) -> list[EntryChange]:
    """Every entry whose state differs between the two releases, in ID order; `before` None is "nothing"."""
    old, new = _served(before), _served(after)
    old_retired, new_retired = _retired(before), _retired(after)
    changes: list[EntryChange] = []
    for entry_id in old.keys() | new.keys() | (new_retired - old_retired):
        was, now = old.get(entry_id), new.get(entry_id)
        if now is not None and was is None:
            kind = "restored" if entry_id in old_retired else "added"
        elif now is not None and was is not None:
            if now[1] == was[1]:
                continue
            kind = "changed"
        elif entry_id in new_retired:
            if entry_id in old_retired:
                continue
            kind = "retired"
        else:
            kind = "removed"
        changes.append(
            EntryChange(
                id=entry_id,
                change=kind,
                version=now[0] if now else None,
                hash=now[1] if now else None,
                previous_version=was[0] if was else None,
                previous_hash=was[1] if was else None,
            )
        )
    changes.sort(key=lambda change: id_order(change.id))
    return changes


def change_counts(changes: Iterable[EntryChange]) -> dict[str, int]:
    counted = Counter(change.change for change in changes)
    return {kind: counted.get(kind, 0) for kind in KINDS}


def changes_page(changes: Sequence[EntryChange], *, after: str | None, limit: int) -> tuple[list[EntryChange], bool]:
    """The changes strictly after the ID `after` (in ID order), at most `limit`; and whether more follow."""
    start = 0 if after is None else bisect_right(changes, id_order(after), key=lambda change: id_order(change.id))
    page = list(changes[start : start + limit])
    return page, start + limit < len(changes)
