"""Recording the IDs a namespace stops serving when a base leaves its list of bases (issue 16 §1, seed §6, §8).

A release of a namespace with bases names the layer each entry came from in its manifest. When a build
finds IDs the namespace's last release served from a layer that is no longer among its layers and that
the new snapshot serves from nowhere, it records them (knowledge.models.WithdrawnEntry): that release and
every later one answer them as tombstones (knowledge.selectors.snapshots), so an agent that read one is
told it was withdrawn, not that it mistyped it. Only the last release's manifest is compared (each
release carries the earlier withdrawals forward), and only for a namespace that ever declared bases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from knowledge.models import Entry, Namespace, Release, ReviewedText, TextKind, WithdrawnEntry
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.layers import Withdrawn, layers_withdrawn, withdrawn_items
from knowledge.retrieval.snapshot import Snapshot
from knowledge.retrieval.timestamps import rfc3339
from knowledge.selectors.layers import layer_slugs

ROWS_PER_QUERY = 2000


def withdrawn_entries_record(
    *, namespace: Namespace, snapshot: Snapshot, previous: Release | None, now: datetime
) -> Snapshot:
    """Record the IDs `previous` (the namespace's last release) served from a layer that has left its bases
    and `snapshot` serves from nowhere; `snapshot` with their tombstones. Rows of a base that left again
    are refreshed (its layer and when). A namespace that never declared bases reads no manifest."""
    if previous is None or not ReviewedText.objects.filter(namespace=namespace, kind=TextKind.BASES).exists():
        return snapshot
    manifest = previous.manifest
    entries = manifest.get("entries", ()) if isinstance(manifest, dict) else ()
    layers = layer_slugs(namespace=namespace)
    items = withdrawn_items(entries, snapshot, layers=layers)
    if not items:
        return snapshot
    titles = _titles(items)
    rows = [
        WithdrawnEntry(
            namespace=namespace,
            public_id=item["id"],
            layer=item["layer"],
            title=titles.get((item["layer"], item["id"]), ""),
            sensitivity=item.get("sensitivity", PUBLIC),
            withdrawn_at=now,
        )
        for item in items
    ]
    WithdrawnEntry.objects.bulk_create(
        rows,
        batch_size=ROWS_PER_QUERY,
        update_conflicts=True,
        unique_fields=["namespace", "public_id"],
        update_fields=["layer", "title", "sensitivity", "withdrawn_at"],
    )
    withdrawn = [
        Withdrawn(row.public_id, row.layer, row.title, row.sensitivity, rfc3339(row.withdrawn_at)) for row in rows
    ]
    return layers_withdrawn(snapshot, withdrawn, layers=layers)


def _titles(items: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """The title of each withdrawn entry's live version in its own namespace (the manifest holds none)."""
    by_layer: dict[str, list[str]] = {}
    for item in items:
        by_layer.setdefault(item["layer"], []).append(item["id"])
    found: dict[tuple[str, str], str] = {}
    for layer, ids in by_layer.items():
        for start in range(0, len(ids), ROWS_PER_QUERY):
            rows = Entry.objects.filter(namespace__slug=layer, public_id__in=ids[start : start + ROWS_PER_QUERY])
            for public_id, title in rows.values_list("public_id", "live_version__title"):
                found[(layer, public_id)] = title or ""
    return found
