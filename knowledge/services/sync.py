"""Docs as code: compare a folder of entry files with a namespace and propose the differences for review.

Every difference becomes a draft submitted for review, written through the same services as the admin
(roles, transitions, the audit trail); nothing is ever published or retired here. The whole folder is
validated first, and a folder with any bad file writes nothing. The plan is made from plain data (a
`NamespaceSide`), read from the database here or from the management API by a remote sync.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from django.db import transaction

from knowledge.entryfiles import EntryFileError, entry_file_parse
from knowledge.errors import ConflictError, InvalidInputError
from knowledge.ids import parse_public_id
from knowledge.models import Entry, EntryVersion, Namespace, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.selectors.layers import layers_below
from knowledge.services.content import ContentReferenceError, VersionContent, content_references_check
from knowledge.services.entries import entry_create
from knowledge.services.imports import ImportFileError, ImportLine, entries_parse
from knowledge.services.versions import version_draft_for_entry, version_draft_opened, version_save, version_submit

Progress = Callable[[int, int], None]
# Refuses the links and overrides of content for an entry ID (ContentReferenceError), as writing it would.
ReferencesCheck = Callable[[str | None, VersionContent], None]

# What the folder asks of one entry.
NEW: Final = "new"  # no such entry yet: created and submitted
CHANGE: Final = "change"  # differs from the current version: a draft with the file's content, submitted
SUBMIT: Final = "submit"  # an open draft already holds the file's content: submitted
PENDING: Final = "pending"  # a version with the file's content awaits review or publishing: nothing to do
UNCHANGED: Final = "unchanged"  # the live version is the file
MISSING: Final = "missing"  # in the namespace, not in the folder: reported, never retired
CONFLICT: Final = "conflict"  # an open version (someone's draft, a review) holds other content: left alone
DIFFERENT: Final = frozenset({NEW, CHANGE, SUBMIT, PENDING, MISSING, CONFLICT})
WRITES: Final = frozenset({NEW, CHANGE, SUBMIT})
CONTENT_FIELDS: Final = (
    "title",
    "summary",
    "body",
    "tags",
    "aliases",
    "links",
    "confidence",
    "updated",
    "paths",
    "overrides",
    "sensitivity",
    "review_by",
    "valid_until",
)
# A file without these keeps the entry's value, as an import does: leaving out `sensitivity` never turns an
# internal entry public, and `reviewBy` is the reviewers' schedule (not part of the content hash).
KEPT_WHEN_ABSENT: Final = (("sensitivity", "sensitivity"), ("reviewBy", "review_by"))
DRAFT_OPENED_SINCE = "{id}'s draft changed while the sync ran (someone is editing it); sync again."
OVERRIDES_WITHOUT_BASES = (
    "overrides: {id} cannot be used: this namespace builds on no other namespace, so it has nothing to override; "
    "remove overrides"
)


class SyncFolderError(InvalidInputError):
    """Some files are bad; nothing was written. `errors` lists (file name, message)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__(f"{len(errors)} bad file(s), nothing proposed: " + "; ".join(f"{n}: {m}" for n, m in errors))


@dataclass(frozen=True, slots=True)
class EntryFile:
    name: str  # relative to the folder
    item: ImportLine


@dataclass(frozen=True, slots=True)
class VersionSide:
    """The version a file is compared with: the open one, else the live one, else the newest."""

    id: int
    number: int
    state: str
    content_hash: str
    content: dict[str, Any]  # CONTENT_FIELDS as VersionContent.model_fields() holds them (those the side shows)
    author: str = ""  # the username of whoever opened the version


@dataclass(frozen=True, slots=True)
class EntrySide:
    public_id: str
    category: str
    retired: bool
    live: bool
    current: VersionSide


@dataclass(frozen=True, slots=True)
class NamespaceSide:
    slug: str
    prefix: str
    blocks: dict[str, tuple[tuple[int, int], ...]]  # category slug -> its ID blocks
    entries: dict[str, EntrySide]


@dataclass
class PlannedChange:
    kind: str
    public_id: str
    file: str = ""
    fields: tuple[str, ...] = ()  # which fields differ
    version: int | None = None  # the version number written or awaited
    detail: str = ""
    category: str = ""  # of a new entry
    base: VersionSide | None = None  # the version compared with


@dataclass
class SyncPlan:
    side: NamespaceSide
    changes: list[PlannedChange] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for change in self.changes if change.kind == kind)

    @property
    def differs(self) -> bool:
        return any(change.kind in DIFFERENT for change in self.changes)


# -- reading the folder ------------------------------------------------------------------------------


def folder_read(folder: Path, *, progress: Progress | None = None) -> list[EntryFile]:
    """Every *.md file under `folder` (sorted), validated like an import line; SyncFolderError lists bad files."""
    paths = sorted(p for p in folder.rglob("*.md") if p.is_file())
    names = [str(path.relative_to(folder)) for path in paths]
    records: list[str] = []
    errors: list[tuple[str, str]] = []
    for done, (path, name) in enumerate(zip(paths, names, strict=True), start=1):
        record: dict[str, Any] | None = None
        try:
            record = entry_file_parse(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            errors.append((name, "not UTF-8 text"))
        except EntryFileError as error:
            errors.append((name, str(error)))
        records.append(json.dumps(record or {}, ensure_ascii=False, default=str))
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


# -- the namespace as plain data -----------------------------------------------------------------------


def version_content(version: EntryVersion) -> dict[str, Any]:
    return {name: getattr(version, name) for name in CONTENT_FIELDS}


def version_side(version: EntryVersion) -> VersionSide:
    return VersionSide(
        id=version.pk,
        number=version.number,
        state=version.state,
        content_hash=version.content_hash,
        content=version_content(version),
        author=version.author.username if version.author else "",
    )


def _current_versions(namespace: Namespace, entries: Iterable[Entry]) -> dict[int, EntryVersion]:
    """Per entry: the open version (draft, in review, approved), else the live one, else the newest."""
    live = {e.live_version_id for e in entries if e.live_version_id}
    current: dict[int, EntryVersion] = {}
    versions = EntryVersion.objects.filter(entry__namespace=namespace).select_related("author")
    for version in versions.order_by("entry_id", "number"):
        held = current.get(version.entry_id)
        if held is None or (held.state not in OPEN_STATES and (version.state in OPEN_STATES or held.pk not in live)):
            current[version.entry_id] = version
    return current


def namespace_side(namespace: Namespace) -> NamespaceSide:
    entries = list(Entry.objects.filter(namespace=namespace).select_related("category"))
    current = _current_versions(namespace, entries)
    blocks = {
        category.slug: tuple((block.start, block.end) for block in category.blocks.all())
        for category in namespace.categories.prefetch_related("blocks")
    }
    return NamespaceSide(
        slug=namespace.slug,
        prefix=namespace.prefix,
        blocks=blocks,
        entries={
            e.public_id: EntrySide(
                public_id=e.public_id,
                category=e.category.slug,
                retired=e.retired_at is not None,
                live=e.live_version_id is not None,
                current=version_side(current[e.pk]),
            )
            for e in entries
            if e.pk in current
        },
    )


# -- planning ------------------------------------------------------------------------------------------


def content_for(item: ImportLine, base: VersionSide | None) -> VersionContent:
    """The file's content; a file without `updated` keeps the entry's date unless its text changed, and one
    without a KEPT_WHEN_ABSENT key keeps the entry's value."""
    content = item.content
    if base is None:
        return content
    kept = {
        name: base.content[name]
        for key, name in KEPT_WHEN_ABSENT
        if key not in item.trust_given and name in base.content
    }
    if kept:
        content = _rebuilt(content, **kept)
    if item.updated_given:
        return content
    dated = _rebuilt(content, updated=base.content["updated"])
    return dated if dated.content_hash == base.content_hash else content


def _rebuilt(content: VersionContent, **changes: Any) -> VersionContent:
    kwargs = {name: getattr(content, name) for name in VersionContent.__slots__}
    return VersionContent.build(**{**kwargs, **changes})


def _same(content: VersionContent, base: VersionSide) -> bool:
    """Whether the version holds this content: its hash, and the reviewBy date the hash leaves out."""
    review_by = base.content.get("review_by", content.review_by)
    return content.content_hash == base.content_hash and content.review_by == review_by


def content_value(name: str, value: Any) -> Any:
    """A content field as VersionContent.model_fields() holds it (lists, Decimal, date), from the API or the model."""
    if name in ("tags", "aliases", "links", "paths"):
        return list(value)
    if name == "confidence":
        return Decimal(str(value)).quantize(Decimal("0.01"))
    if name in ("updated", "review_by", "valid_until") and isinstance(value, str):
        return date.fromisoformat(value)
    return value


def _fields_differing(content: VersionContent, base: VersionSide) -> tuple[str, ...]:
    ours = content.model_fields()
    return tuple(
        name
        for name in CONTENT_FIELDS
        if name in base.content and content_value(name, ours[name]) != content_value(name, base.content[name])
    )


def _plan_existing(entry: EntrySide, file: EntryFile) -> PlannedChange:
    item, current = file.item, entry.current
    if entry.retired:
        raise SyncFolderError([(file.name, f"{entry.public_id} is retired; its ID cannot take new content")])
    if item.category and item.category != entry.category:
        message = f"{entry.public_id} is in category “{entry.category}”; an entry never changes category"
        raise SyncFolderError([(file.name, message)])
    content = content_for(item, current)
    same = _same(content, current)
    change = PlannedChange(UNCHANGED, entry.public_id, file.name, version=current.number, base=current)
    if same and current.state == VersionState.PUBLISHED:
        return change
    if same and current.state in (VersionState.IN_REVIEW, VersionState.APPROVED):
        change.kind, change.detail = PENDING, current.state
        return change
    if same and current.state == VersionState.DRAFT:
        change.kind = SUBMIT
        return change
    if current.state in OPEN_STATES:
        # Someone's draft or a review holds other content: taking the file would replace their work
        # (a draft) or race the reviewers (a review). Left alone until it ends or matches the file.
        change.kind = CONFLICT
        change.fields = _fields_differing(content, current)
        state = VersionState(current.state).label.lower()
        change.detail = f"{state} v{current.number}" + (f" by {current.author}" if current.author else "")
        return change
    change.kind = CHANGE
    change.fields = _fields_differing(content, current)
    change.version = None  # a new draft from the live version
    return change


def _category_of_new(side: NamespaceSide, item: ImportLine) -> str:
    if item.category:
        if item.category not in side.blocks:
            raise ValueError(f"unknown category “{item.category}” (this namespace has: {', '.join(side.blocks)})")
        return item.category
    if not item.public_id:
        raise ValueError("a new entry without an ID needs a category")
    number = parse_public_id(item.public_id, prefix=side.prefix)
    for slug, blocks in side.blocks.items():
        if number is not None and any(start <= number <= end for start, end in blocks):
            return slug
    raise ValueError(f"{item.public_id} lies in no category's ID block; give the file a category")


def references_check_for(namespace: Namespace) -> ReferencesCheck:
    """The links and overrides check entry_create and version_save make, for sync_plan (layers read once)."""
    below = layers_below(namespace=namespace)

    def check(public_id: str | None, content: VersionContent) -> None:
        if content.overrides and not below and content.overrides != public_id:
            raise ContentReferenceError(
                OVERRIDES_WITHOUT_BASES.format(id=content.overrides), code="overrides.no_base_entry"
            )
        content_references_check(namespace=namespace, public_id=public_id, content=content, below=below)

    return check


def _plan_new(
    side: NamespaceSide, file: EntryFile, new_titles: dict[str, str], references: ReferencesCheck | None
) -> PlannedChange:
    """A file for no entry yet. `new_titles` maps the title of each new entry without an ID planned so far to
    its file: the next run finds such an entry by its title, so two of them would become one entry's files."""
    item = file.item
    if item.public_id and parse_public_id(item.public_id, prefix=side.prefix) is None:
        raise ValueError(f"{item.public_id} is not an ID of this namespace ({side.prefix}-…)")
    if not item.public_id and item.content.title in new_titles:
        other = new_titles[item.content.title]
        raise ValueError(f"a new entry titled “{item.content.title}” is described by {other} too")
    category = _category_of_new(side, item)
    if references:
        references(item.public_id, item.content)
    if not item.public_id:
        new_titles[item.content.title] = file.name
    return PlannedChange(NEW, item.public_id or "", file.name, category=category)


def sync_plan(
    *, side: NamespaceSide, files: Sequence[EntryFile], references: ReferencesCheck | None = None
) -> SyncPlan:
    """What the folder asks of the namespace, entry by entry; SyncFolderError names every file that cannot apply.

    `references` checks the links and overrides of what would be written (a remote sync leaves them to the
    server), so a dry run refuses the files the real run would.
    """
    live_titles = {e.current.content["title"]: e for e in side.entries.values() if not e.retired}
    plan = SyncPlan(side=side)
    errors: list[tuple[str, str]] = []
    seen: dict[str, str] = {}  # entry ID -> the file describing it
    new_titles: dict[str, str] = {}
    for file in files:
        item = file.item
        entry = side.entries.get(item.public_id) if item.public_id else live_titles.get(item.content.title)
        try:
            if entry is None:
                plan.changes.append(_plan_new(side, file, new_titles, references))
                continue
            if entry.public_id in seen:
                message = f"{entry.public_id} is described by {seen[entry.public_id]} too"
                raise SyncFolderError([(file.name, message)])
            seen[entry.public_id] = file.name
            change = _plan_existing(entry, file)
            if change.kind == CHANGE and references:
                references(entry.public_id, content_for(item, entry.current))
            plan.changes.append(change)
        except SyncFolderError as failure:
            errors += failure.errors
        except (ValueError, ContentReferenceError) as error:
            errors.append((file.name, str(error)))
    if errors:
        raise SyncFolderError(errors)
    for public_id, entry in side.entries.items():
        if public_id not in seen and not entry.retired and entry.live:
            plan.changes.append(PlannedChange(MISSING, public_id))
    return plan


# -- writing, here ---------------------------------------------------------------------------------------


@transaction.atomic
def sync_apply(
    *,
    namespace: Namespace,
    plan: SyncPlan,
    files: Sequence[EntryFile],
    actor: Any,
    note: str,
    progress: Progress | None = None,
) -> SyncPlan:
    """Write the plan's drafts and submit them for review, all or nothing; fills in IDs and version numbers."""
    by_name = {file.name: file for file in files}
    writes = [change for change in plan.changes if change.kind in WRITES]
    for done, change in enumerate(writes, start=1):
        item = by_name[change.file].item
        if change.kind == NEW:
            version = entry_create(
                namespace=namespace,
                category=namespace.categories.get(slug=change.category),
                content=item.content,
                actor=actor,
                public_id=item.public_id,
                within_blocks=False,  # the file's ID, as an import keeps it
            )
            change.public_id = version.entry.public_id
        else:
            entry = Entry.objects.get(namespace=namespace, public_id=change.public_id)
            if change.kind == CHANGE:
                version, opened = version_draft_opened(entry=entry, actor=actor)
                if not opened:  # never replace a draft the plan did not see
                    raise ConflictError(DRAFT_OPENED_SINCE.format(id=entry.public_id))
                version = version_save(
                    version=version,
                    content=content_for(item, change.base),
                    expected_lock_version=version.lock_version,
                    actor=actor,
                )
            else:
                version = version_draft_for_entry(entry=entry, actor=actor)
                if change.base is None or version.content_hash != change.base.content_hash:
                    raise ConflictError(DRAFT_OPENED_SINCE.format(id=entry.public_id))
        change.version = version.number
        version_submit(version=version, actor=actor, note=note)
        if progress:
            progress(done, len(writes))
    return plan
