"""Docs as code: compare a folder of entry files with a namespace and propose the differences for review.

Every difference becomes a draft submitted for review, written through the same services as the admin
(roles, transitions, the audit trail); nothing is ever published or retired here. The whole folder is
validated first, and a folder with any bad file writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from django.db import transaction

from knowledge.entryfiles import EntryFileError, entry_file_parse
from knowledge.errors import InvalidInputError
from knowledge.ids import parse_public_id
from knowledge.models import Category, Entry, EntryVersion, Namespace, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.services.content import VersionContent
from knowledge.services.entries import entry_create
from knowledge.services.imports import ImportFileError, ImportLine, entries_parse
from knowledge.services.versions import version_draft_for_entry, version_save, version_submit

Progress = Callable[[int, int], None]

# What the folder asks of one entry.
NEW: Final = "new"  # no such entry yet: created and submitted
CHANGE: Final = "change"  # differs from the newest version: a draft with the file's content, submitted
SUBMIT: Final = "submit"  # an open draft already holds the file's content: submitted
PENDING: Final = "pending"  # a version with the file's content awaits review or publishing: nothing to do
UNCHANGED: Final = "unchanged"  # the live version is the file
MISSING: Final = "missing"  # in the namespace, not in the folder: reported, never retired
DIFFERENT: Final = frozenset({NEW, CHANGE, SUBMIT, PENDING, MISSING})
WRITES: Final = frozenset({NEW, CHANGE, SUBMIT})


class SyncFolderError(InvalidInputError):
    """Some files are bad; nothing was written. `errors` lists (file name, message)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__(f"{len(errors)} bad file(s), nothing proposed: " + "; ".join(f"{n}: {m}" for n, m in errors))


@dataclass(frozen=True, slots=True)
class EntryFile:
    name: str  # relative to the folder
    item: ImportLine


@dataclass
class PlannedChange:
    kind: str
    public_id: str
    file: str = ""
    fields: tuple[str, ...] = ()  # which fields differ
    version: int | None = None  # the version number written or awaited
    detail: str = ""


@dataclass
class SyncPlan:
    namespace: Namespace
    changes: list[PlannedChange] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for change in self.changes if change.kind == kind)

    @property
    def differs(self) -> bool:
        return any(change.kind in DIFFERENT for change in self.changes)


def folder_read(folder: Path, *, progress: Progress | None = None) -> list[EntryFile]:
    """Every *.md file under `folder` (sorted), validated like an import line; SyncFolderError lists bad files."""
    paths = sorted(p for p in folder.rglob("*.md") if p.is_file())
    names = [str(path.relative_to(folder)) for path in paths]
    records: list[str] = []
    errors: list[tuple[str, str]] = []
    for done, (path, name) in enumerate(zip(paths, names, strict=True), start=1):
        try:
            record = entry_file_parse(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            errors.append((name, "not UTF-8 text"))
            record = None
        except EntryFileError as error:
            errors.append((name, str(error)))
            record = None
        records.append(json.dumps(record if record is not None else {}, ensure_ascii=False, default=str))
        if progress:
            progress(done, len(paths))
    bad = {name for name, _ in errors}
    try:
        items = entries_parse(records)
    except ImportFileError as failure:
        errors += [(names[line - 1], message) for line, message in failure.errors if names[line - 1] not in bad]
        items = []
    if errors:
        raise SyncFolderError(sorted(errors))
    return [EntryFile(name=names[item.line_no - 1], item=item) for item in items]


def _fields_differing(a: VersionContent, b: EntryVersion) -> tuple[str, ...]:
    ours = a.model_fields()
    return tuple(
        name
        for name in ("title", "summary", "body", "tags", "aliases", "links", "confidence", "updated")
        if ours[name] != getattr(b, name)
    )


def _content_for(item: ImportLine, base: EntryVersion | None) -> VersionContent:
    """The file's content; a file without `updated` keeps the entry's date unless its text changed."""
    content = item.content
    if item.updated_given or base is None:
        return content
    kept = VersionContent.build(**{**_kwargs(content), "updated": base.updated})
    return kept if kept.content_hash == base.content_hash else content


def _kwargs(content: VersionContent) -> dict[str, Any]:
    return {name: getattr(content, name) for name in VersionContent.__slots__}


def _plan_existing(entry: Entry, newest: EntryVersion, file: EntryFile, category: Category | None) -> PlannedChange:
    item = file.item
    if entry.retired_at is not None:
        raise SyncFolderError([(file.name, f"{entry.public_id} is retired; its ID cannot take new content")])
    if category is not None and category.pk != entry.category_id:
        raise SyncFolderError(
            [(file.name, f"{entry.public_id} is in category “{entry.category.slug}”; an entry never changes category")]
        )
    content = _content_for(item, newest)
    same = content.content_hash == newest.content_hash
    if same and newest.state == VersionState.PUBLISHED:
        return PlannedChange(UNCHANGED, entry.public_id, file.name, version=newest.number)
    if same and newest.state in (VersionState.IN_REVIEW, VersionState.APPROVED):
        return PlannedChange(PENDING, entry.public_id, file.name, version=newest.number, detail=newest.state)
    if same and newest.state == VersionState.DRAFT:
        return PlannedChange(SUBMIT, entry.public_id, file.name, version=newest.number)
    if newest.state in (VersionState.IN_REVIEW, VersionState.APPROVED):
        state = newest.get_state_display().lower()
        raise SyncFolderError(
            [
                (
                    file.name,
                    f"{entry.public_id} has version {newest.number} {state} with other content; "
                    "finish or withdraw it first",
                )
            ]
        )
    fields = _fields_differing(content, newest)
    number = newest.number if newest.state == VersionState.DRAFT else newest.number + 1
    return PlannedChange(CHANGE, entry.public_id, file.name, fields=fields, version=number)


def _current_versions(namespace: Namespace, entries: Iterable[Entry]) -> dict[int, EntryVersion]:
    """Per entry, the version a file is compared with: the open one (draft, in review, approved), else the live
    one, else the newest (a rejected or withdrawn first version)."""
    live = {e.live_version_id for e in entries if e.live_version_id}
    current: dict[int, EntryVersion] = {}
    for version in EntryVersion.objects.filter(entry__namespace=namespace).order_by("entry_id", "number"):
        held = current.get(version.entry_id)
        if held is None or (held.state not in OPEN_STATES and (version.state in OPEN_STATES or held.pk not in live)):
            current[version.entry_id] = version
    return current


def sync_plan(*, namespace: Namespace, files: Sequence[EntryFile]) -> SyncPlan:
    """What the folder asks of the namespace, entry by entry; SyncFolderError when a file cannot apply."""
    categories = {c.slug: c for c in namespace.categories.all()}
    entries = {e.public_id: e for e in Entry.objects.filter(namespace=namespace).select_related("category")}
    current = _current_versions(namespace, entries.values())
    by_title = {current[e.pk].title: e for e in entries.values() if e.pk in current and e.retired_at is None}
    plan = SyncPlan(namespace=namespace)
    errors: list[tuple[str, str]] = []
    seen: set[str] = set()
    for file in files:
        item = file.item
        category = categories.get(item.category) if item.category else None
        if item.category and category is None:
            errors.append(
                (file.name, f"unknown category “{item.category}” (this namespace has: {', '.join(categories)})")
            )
            continue
        entry = entries.get(item.public_id) if item.public_id else by_title.get(item.content.title)
        try:
            if entry is not None:
                if entry.public_id in seen:
                    raise SyncFolderError([(file.name, f"{entry.public_id} is described by another file too")])
                seen.add(entry.public_id)
                plan.changes.append(_plan_existing(entry, current[entry.pk], file, category))
                continue
            if item.public_id and parse_public_id(item.public_id, prefix=namespace.prefix) is None:
                raise SyncFolderError(
                    [(file.name, f"{item.public_id} is not an ID of this namespace ({namespace.prefix}-…)")]
                )
            if category is None and not item.public_id:
                raise SyncFolderError([(file.name, "a new entry without an ID needs a category")])
        except SyncFolderError as failure:
            errors += failure.errors
            continue
        plan.changes.append(PlannedChange(NEW, item.public_id or "", file.name, detail=item.category or ""))
    if errors:
        raise SyncFolderError(errors)
    for public_id, entry in sorted(entries.items(), key=lambda pair: pair[1].number):
        if public_id not in seen and entry.retired_at is None and entry.live_version_id is not None:
            plan.changes.append(PlannedChange(MISSING, public_id))
    return plan


def _category_of_new(namespace: Namespace, item: ImportLine) -> Category:
    if item.category:
        return namespace.categories.get(slug=item.category)
    number = parse_public_id(item.public_id or "", prefix=namespace.prefix)
    for category in namespace.categories.prefetch_related("blocks"):
        if any(block.start <= (number or -1) <= block.end for block in category.blocks.all()):
            return category
    raise InvalidInputError(f"{item.public_id} lies in no category's ID block; give the file a category")


@transaction.atomic
def sync_apply(
    *, plan: SyncPlan, files: Sequence[EntryFile], actor: Any, note: str, progress: Progress | None = None
) -> SyncPlan:
    """Write the plan's drafts and submit them for review, all or nothing; returns the plan with IDs filled in."""
    namespace = plan.namespace
    by_name = {file.name: file for file in files}
    writes = [change for change in plan.changes if change.kind in WRITES]
    for done, change in enumerate(writes, start=1):
        item = by_name[change.file].item
        if change.kind == NEW:
            version = entry_create(
                namespace=namespace,
                category=_category_of_new(namespace, item),
                content=item.content,
                actor=actor,
                public_id=item.public_id,
            )
            change.public_id, change.version = version.entry.public_id, version.number
        else:
            entry = Entry.objects.get(namespace=namespace, public_id=change.public_id)
            version = version_draft_for_entry(entry=entry, actor=actor)
            if change.kind == CHANGE:
                version = version_save(
                    version=version,
                    content=_content_for(item, version),
                    expected_lock_version=version.lock_version,
                    actor=actor,
                )
            change.version = version.number
        version_submit(version=version, actor=actor, note=note)
        if progress:
            progress(done, len(writes))
    return plan
