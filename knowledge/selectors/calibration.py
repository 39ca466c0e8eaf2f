"""What a build carries from the serving release's calibration (knowledge.retrieval.calibration.carried)."""

from __future__ import annotations

from knowledge.models import Namespace, Release
from knowledge.retrieval.calibration import Lineage, entries_changed
from knowledge.retrieval.snapshot import Snapshot


def calibration_lineage(
    *, namespace: Namespace, snapshot: Snapshot, latest: Release | None = None, hashes: dict[str, str] | None = None
) -> Lineage | None:
    """The serving release's calibration record and how many entries `snapshot` adds, removes or changes
    against it (None before the first release, or when the serving release recorded none). `latest`:
    the namespace's newest release when the caller has it (usually the serving one, manifest read);
    `hashes`: the snapshot's entries' content hashes by ID, when the caller has them."""
    active = Namespace.objects.filter(pk=namespace.pk).values_list("active_release_id", flat=True).first()
    if active is None:
        return None
    serving = latest if latest is not None and latest.pk == active else Release.objects.filter(pk=active).first()
    recorded = (serving.metrics or {}).get("matching") if serving is not None else None
    if serving is None or not recorded:
        return None
    if hashes is None:
        hashes = {entry.id: entry.content_hash for entry in snapshot.entries}
    changed = entries_changed(serving.manifest_hashes(), hashes)
    return Lineage(sequence=serving.sequence, matching=recorded, changed=changed)


def recorded_lineage(release: Release) -> Lineage | None:
    """The release's own calibration record to render it again as it was built (None: none recorded)."""
    recorded = (release.metrics or {}).get("matching") or {}
    return Lineage(sequence=release.sequence, matching=recorded, replay=True) if recorded else None
