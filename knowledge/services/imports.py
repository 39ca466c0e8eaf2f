"""Bulk import of entries from JSON Lines: validate every line first, then write all or nothing.

A line is `{id?, title, summary?, body, tags?, aliases?, category?, confidence?, links?, updated?, paths?}`. A known
ID (or else identical content) is matched to its entry, so importing the same file twice
changes nothing; within one file an ID, or the content of a line without an ID, appears once.
A line with `retiredAt` and `retireReason` (and `replacedBy`) is a retired entry, as export_entries
writes it: it is recreated as a tombstone, so its ID answers 410 and is never allocated again (seed §6).
With `within_blocks`, a new ID lies in a block of its category's, as the namespace declares them (seed §6).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor, actor_id, actor_user
from knowledge.errors import InvalidInputError
from knowledge.ids import ID_PATTERN, format_public_id, parse_public_id
from knowledge.models import AuditRecord, Category, Entry, EntryVersion, IdBlock, Namespace, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.retrieval.contract.fields import holds_unclean_text, is_clean_text
from knowledge.selectors.layers import layers_below
from knowledge.services.actors import system_actor
from knowledge.services.build_queue import release_request_build
from knowledge.services.content import TITLE_MAX, ContentReferenceError, VersionContent, content_references_check
from knowledge.services.entries import _next_free_number
from knowledge.services.four_eyes import four_eyes_check
from knowledge.services.planner_statistics import planner_statistics_refresh
from knowledge.services.safety import import_safety_check

FIELDS = {
    "id",
    "title",
    "summary",
    "body",
    "tags",
    "aliases",
    "category",
    "confidence",
    "links",
    "updated",
    "sensitivity",
    "reviewBy",
    "validUntil",
    "paths",
    "overrides",
    "retiredAt",
    "retireReason",
    "replacedBy",
}
SENSITIVITIES = ("public", "internal", "restricted")
UNSTORABLE_TEXT = "“{name}” contains a NUL character or a lone surrogate, which no entry can store"
UNSTORABLE_NAME = "a field name contains a NUL character or a lone surrogate"
CONFIDENCE_RANGE = "“confidence” must be a number between 0 and 1"
SAME_CONTENT = "the same content as line {line_no}: a line without an ID is matched by its content; remove one"
REPEATED_KEY = "the key “{key}” appears twice (JSON keeps only the last; remove one)"
RETIRED_NEEDS_ID = "a retired line (“retiredAt”) needs its “id”: a tombstone keeps the ID it was published under"
RETIRED_NEEDS_REASON = "“retireReason” is required with “retiredAt” (at most 500 characters)"
RETIRED_AT_FORMAT = "“retiredAt” must be a date and time with its offset, like 2026-09-02T10:52:47Z"
RETIREMENT_ONLY = "“retireReason” and “replacedBy” go only with “retiredAt” (a retired entry)"
REPLACED_BY_FORMAT = "“replacedBy” must be another entry's ID, like PREFIX-123"
RETIRED_BUT_LIVE = (
    "{id} is retired in the file but live in this namespace: retire it with retire_entry "
    "(a reviewer's decision), or remove the line"
)
NO_REPLACEMENT = "“replacedBy” names {replacement}, which is neither an entry of this namespace nor a line of the file"
OUTSIDE_BLOCKS = (
    "{id} lies outside the blocks of category “{category}” ({blocks}); give it an ID there "
    "or leave the id out (one is allocated)"
)
IN_CHUNK = 1000  # values per IN (...) of the queries reading what a file touches
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Retirement:
    """The tombstone of a retired entry, as its namespace recorded it (Entry.retired_at …)."""

    at: datetime
    reason: str
    replaced_by: str = ""


@dataclass(frozen=True, slots=True)
class ImportLine:
    line_no: int
    public_id: str | None
    category: str | None
    content: VersionContent
    updated_given: bool
    # A line without these keeps the entry's current values: re-importing an export of an older
    # Evergreen never turns an internal entry public.
    trust_given: frozenset[str] = frozenset()
    retirement: Retirement | None = None


@dataclass
class ImportReport:
    created: int = 0
    changed: int = 0
    unchanged: int = 0
    published: int = 0
    retired: int = 0
    ids: list[str] = field(default_factory=list)


class ImportFileError(InvalidInputError):
    """The file has bad lines; nothing was imported. `errors` lists (line number, message)."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        self.errors = errors
        shown = "; ".join(f"line {n}: {m}" for n, m in errors[:20])
        more = f" (and {len(errors) - 20} more)" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} bad line(s), nothing imported: {shown}{more}")


def _string_list(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"“{name}” must be a list of strings")
    return value


def _check_clean(data: dict[str, Any]) -> None:
    """JSON may escape a NUL (PostgreSQL text refuses it) or a lone surrogate (not UTF-8): refuse the line
    naming the field, before anything hashes or stores it."""
    for name, value in data.items():
        if not is_clean_text(name):
            raise ValueError(UNSTORABLE_NAME)
        if holds_unclean_text(value):
            raise ValueError(UNSTORABLE_TEXT.format(name=name))


class _JsonObject(dict[str, Any]):
    """A JSON object that remembers a key it held twice: json.loads keeps the last value silently, and
    which title was meant is not the import's to guess."""

    repeated: str | None = None


def _json_object(pairs: list[tuple[str, Any]]) -> _JsonObject:
    data = _JsonObject(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                data.repeated = key
                break
            seen.add(key)
    return data


def _parse_line(line_no: int, raw: str, *, today: date) -> ImportLine:
    try:
        data = json.loads(raw, object_pairs_hook=_json_object)
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    _check_clean(data)  # first: a value no entry can store is refused as such, wherever it is
    if isinstance(data, _JsonObject) and data.repeated is not None:
        raise ValueError(REPEATED_KEY.format(key=data.repeated))
    unknown = set(data) - FIELDS
    if unknown:
        raise ValueError(f"unknown field(s): {', '.join(sorted(unknown))}")
    title, body = data.get("title"), data.get("body")
    if not isinstance(title, str) or not title.strip():
        raise ValueError("“title” is required and must be a non-empty string")
    if len(title) > TITLE_MAX:
        raise ValueError(f"“title” is longer than {TITLE_MAX} characters")
    if not isinstance(body, str):
        raise ValueError("“body” is required and must be a string (it may be empty)")
    summary = data.get("summary") or ""
    if not isinstance(summary, str):
        raise ValueError("“summary” must be a string")
    public_id = data.get("id")
    if public_id is not None and (not isinstance(public_id, str) or not ID_PATTERN.match(public_id)):
        raise ValueError("“id” must look like PREFIX-123 (capital letters, a dash, at least three digits)")
    category = data.get("category")
    if category is not None and not isinstance(category, str):
        raise ValueError("“category” must be a string")
    confidence = _confidence(data)
    updated_raw = data.get("updated")
    try:
        updated = date.fromisoformat(updated_raw) if updated_raw is not None else today
    except (TypeError, ValueError):
        raise ValueError("“updated” must be a date like 2026-09-02") from None
    content = VersionContent.build(
        title=title,
        summary=summary,
        body=body,
        tags=_string_list(data.get("tags"), "tags"),
        confidence=confidence,
        links=_string_list(data.get("links"), "links"),
        updated=updated,
        aliases=_string_list(data.get("aliases"), "aliases"),
        sensitivity=_sensitivity(data),
        review_by=_optional_date(data, "reviewBy"),
        valid_until=_optional_date(data, "validUntil"),
        paths=_string_list(data.get("paths"), "paths"),
        overrides=_overrides(data),
    )
    given = frozenset(name for name in ("sensitivity", "reviewBy", "validUntil", "paths", "overrides") if name in data)
    retirement = _retirement(data, public_id)
    return ImportLine(line_no, public_id, category, content, updated_raw is not None, given, retirement)


def _retirement(data: dict[str, Any], public_id: str | None) -> Retirement | None:
    raw = data.get("retiredAt")
    if raw is None:
        if data.get("retireReason") is not None or data.get("replacedBy") is not None:
            raise ValueError(RETIREMENT_ONLY)
        return None
    if public_id is None:
        raise ValueError(RETIRED_NEEDS_ID)
    try:
        at = datetime.fromisoformat(raw)
    except (TypeError, ValueError):
        raise ValueError(RETIRED_AT_FORMAT) from None
    if at.tzinfo is None:
        raise ValueError(RETIRED_AT_FORMAT)
    reason = data.get("retireReason")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > 500:
        raise ValueError(RETIRED_NEEDS_REASON)
    replaced_by = data.get("replacedBy") or ""
    if replaced_by and (not isinstance(replaced_by, str) or not ID_PATTERN.match(replaced_by)):
        raise ValueError(REPLACED_BY_FORMAT)
    if replaced_by == public_id:
        raise ValueError(REPLACED_BY_FORMAT)
    return Retirement(at=at, reason=reason.strip(), replaced_by=replaced_by)


def _confidence(data: dict[str, Any]) -> Decimal:
    """JSON's NaN and Infinity (and YAML's .nan) parse as floats; a NaN Decimal raises on comparison, so
    only finite numbers reach the range check."""
    try:
        confidence = Decimal(str(data.get("confidence", "0.90")))
    except InvalidOperation:
        raise ValueError(CONFIDENCE_RANGE) from None
    if not confidence.is_finite() or not Decimal(0) <= confidence <= Decimal(1):
        raise ValueError(CONFIDENCE_RANGE)
    return confidence


def _overrides(data: dict[str, Any]) -> str:
    value = data.get("overrides", "")
    if not isinstance(value, str):
        raise ValueError("“overrides” must be an entry ID of a base namespace, such as AC-101")
    return value


def _sensitivity(data: dict[str, Any]) -> str:
    sensitivity = data.get("sensitivity", "public")
    if sensitivity not in SENSITIVITIES:
        raise ValueError("“sensitivity” must be public, internal or restricted")
    return str(sensitivity)


def _optional_date(data: dict[str, Any], name: str) -> date | None:
    raw = data.get(name)
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw)
    except (TypeError, ValueError):
        raise ValueError(f"“{name}” must be a date like 2026-09-02") from None


def entries_parse(lines: Iterable[str], *, today: date | None = None) -> list[ImportLine]:
    """Parse and validate every line; raise ImportFileError listing every bad one."""
    today = today or timezone.localdate()
    parsed: list[ImportLine] = []
    errors: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for line_no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            item = _parse_line(line_no, raw, today=today)
        except ValueError as error:
            errors.append((line_no, str(error)))
            continue
        if item.public_id:
            if item.public_id in seen:
                errors.append((line_no, f"ID {item.public_id} already appears on line {seen[item.public_id]}"))
                continue
            seen[item.public_id] = line_no
        parsed.append(item)
    if errors:
        raise ImportFileError(errors)
    return parsed


def _check_repeated_content(items: list[ImportLine]) -> None:
    """A line without an ID is matched by its content, so one identical to another line of the file (with
    an ID or without) would make a second entry of it, which no later import could tell apart: refused,
    naming the first line. (A sync folder matches files by title instead, so this is not entries_parse's.)"""
    first: dict[str, int] = {}  # content hash → the first line with that content
    without_id: set[str] = set()  # content hashes of lines without an ID
    errors: list[tuple[int, str]] = []
    for item in items:
        content_hash = item.content.content_hash
        if content_hash in first and (not item.public_id or content_hash in without_id):
            errors.append((item.line_no, SAME_CONTENT.format(line_no=first[content_hash])))
            continue
        first.setdefault(content_hash, item.line_no)
        if not item.public_id:
            without_id.add(content_hash)
    if errors:
        raise ImportFileError(errors)


FOREIGN_PREFIX = (
    "ID {id} has the prefix {prefix}, not this namespace's {own}; IDs are never renumbered silently: "
    "remove the id (a new {own} ID is allocated) or import into a namespace with the prefix {prefix}"
)


def _check_against_namespace(namespace: Namespace, items: list[ImportLine]) -> dict[str, Category]:
    categories = {c.slug: c for c in namespace.categories.prefetch_related("blocks")}
    errors: list[tuple[int, str]] = []
    default = next(iter(categories), None)
    below = layers_below(namespace=namespace)  # once for every line's references
    for item in items:
        match = ID_PATTERN.match(item.public_id or "")
        if match and match["prefix"] != namespace.prefix:
            message = FOREIGN_PREFIX.format(id=item.public_id, prefix=match["prefix"], own=namespace.prefix)
            errors.append((item.line_no, message))
        try:
            content_references_check(namespace=namespace, public_id=item.public_id, content=item.content, below=below)
        except ContentReferenceError as error:
            errors.append((item.line_no, str(error)))
        slug = item.category or default
        if slug not in categories:
            known = ", ".join(categories) or "none"
            errors.append((item.line_no, f"unknown category “{item.category}” (this namespace has: {known})"))
    if errors:
        raise ImportFileError(errors)
    return categories


@dataclass
class _Batch:
    """The versions one import writes, planned line by line before anything is saved."""

    namespace: Namespace
    publish: bool
    author: Any
    reviewer: Any
    now: Any
    existing: dict[str, Entry]
    latest: dict[int, EntryVersion]
    report: ImportReport = field(default_factory=ImportReport)
    versions: list[EntryVersion] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    superseded: list[int] = field(default_factory=list)
    claimed: frozenset[int] = frozenset()  # numbers the file's new lines name: never allocated to another

    @property
    def state(self) -> str:
        return VersionState.PUBLISHED if self.publish else VersionState.DRAFT

    def plan_change(self, item: ImportLine, entry: Entry) -> None:
        current = self.latest[entry.pk]
        content = item.content
        kept: dict[str, Any] = {}
        if not item.updated_given:  # a line without `updated` keeps the entry's date
            kept["updated"] = current.updated
        if "sensitivity" not in item.trust_given:
            kept["sensitivity"] = current.sensitivity
        if "reviewBy" not in item.trust_given:
            kept["review_by"] = current.review_by
        if "validUntil" not in item.trust_given:
            kept["valid_until"] = current.valid_until
        if "paths" not in item.trust_given:  # a file from before path globs keeps the entry's
            kept["paths"] = current.paths
        if "overrides" not in item.trust_given:
            kept["overrides"] = current.overrides
        try:
            content = VersionContent.build(**{**_content_kwargs(content), **kept})
        except ValueError as error:  # the line's content with the entry's kept values is refused
            raise ImportFileError([(item.line_no, str(error))]) from None
        live_is_current = entry.live_version_id == current.pk
        if content.content_hash == current.content_hash and (not self.publish or live_is_current):
            self.report.unchanged += 1
            return
        if entry.retired_at is not None:
            raise ImportFileError([(item.line_no, f"{entry.public_id} is retired; its ID cannot take new content")])
        if current.state in OPEN_STATES:
            message = f"{entry.public_id} has version {current.number} {current.state}; finish it first"
            raise ImportFileError([(item.line_no, message)])
        if self.publish and entry.live_version_id:
            self.superseded.append(entry.live_version_id)
        self.add(entry, current.number + 1, content)
        self.report.changed += 1

    def plan_new(self, item: ImportLine, category: Category) -> None:
        entry = _create_entry(self.namespace, item, category, self.author, claimed=self.claimed)
        self.existing[entry.public_id] = entry
        # A retired entry's content is never served again: published with the batch (its title shows on the
        # tombstone, as where it was exported), else withdrawn, as entry_retire leaves open versions.
        retired = item.retirement is not None
        state = VersionState.WITHDRAWN if retired and not self.publish else self.state
        self.add(entry, 1, item.content, state)
        self.report.created += 1
        self.report.retired += retired

    def add(self, entry: Entry, number: int, content: VersionContent, state: str | None = None) -> None:
        state = state or self.state
        self.versions.append(_new_version(entry, number, content, state, self.author, self.reviewer, self.now))
        self.entries.append(entry)
        self.report.ids.append(entry.public_id)

    def save(self, *, source: str, note: str) -> None:
        if self.superseded:
            EntryVersion.objects.filter(pk__in=self.superseded).update(
                state=VersionState.SUPERSEDED, modified_at=self.now
            )
        EntryVersion.objects.bulk_create(self.versions, batch_size=500)
        if self.author is not None:  # the importing person wrote this content (four eyes)
            through = EntryVersion.contributors.through
            through.objects.bulk_create(
                [through(entryversion_id=v.pk, user_id=self.author.pk) for v in self.versions], batch_size=500
            )
        if self.publish:
            for entry, version in zip(self.entries, self.versions, strict=True):
                entry.live_version = version
            Entry.objects.bulk_update(self.entries, ["live_version"], batch_size=500)
            self.report.published = len(self.versions)
        action = f"{source}-publish" if self.publish else source
        AuditRecord.objects.bulk_create(
            [
                AuditRecord(
                    namespace=self.namespace,
                    entry=version.entry,
                    version=version,
                    actor=self.author,
                    action=action,
                    to_state=version.state,
                    note=note,
                )
                for version in self.versions
            ]
            + [
                AuditRecord(
                    namespace=self.namespace,
                    entry=entry,
                    actor=self.author,
                    action="retire",
                    note=f"{entry.retire_reason} (retired {entry.retired_at:%Y-%m-%d} where the file was exported)",
                )
                for entry in self.entries
                if entry.retired_at is not None
            ],
            batch_size=500,
        )


@transaction.atomic
def entries_import(
    *,
    namespace: Namespace,
    items: list[ImportLine],
    actor: Actor,
    publish: bool = False,
    reviewer: Actor = None,
    source: str = "import",
    progress: Progress | None = None,
    acknowledgement: str = "",
    within_blocks: bool = False,
) -> ImportReport:
    """Write validated lines in one transaction; with `publish`, they go live as one reviewed batch.

    A bulk import that publishes records `actor` as author and `reviewer` (default: the actor) as
    reviewer of every version, and audits it. The reviewer vouches for the file under the four-eyes
    rule: a person who imports (writes) the versions cannot also approve them, unless the namespace
    allows single-person approval; the system actor's set-up imports are not approvals.

    Every line that writes a version is safety-scanned first: any finding refuses the whole file
    unless `acknowledgement` gives a reason (audited), and a high-severity one refuses a publishing
    import regardless.

    With `within_blocks` a new entry's given ID must lie in a block of its category's (seed §6), as
    import_entries asks of a namespace that declared its blocks; without it the ID is kept wherever it
    falls, as in a namespace laid out for the file (import_entries --create-namespace) or set up by code.
    """
    if not items:  # nothing to write, check or build; a namespace without categories has no default
        return ImportReport()
    _check_repeated_content(items)
    categories = _check_against_namespace(namespace, items)
    default_category = next(iter(categories))
    Namespace.objects.select_for_update().filter(pk=namespace.pk).first()
    if actor_user(actor) is None:
        actor = system_actor()
    reviewer = reviewer or actor
    if publish:
        author_id = actor_id(actor)
        four_eyes_check(namespace=namespace, contributors={author_id} if author_id else set(), actor=reviewer)
    # Only the entries and versions the file touches are read: a one-line import into a namespace of
    # 100,000 entries read every entry and version (2.5 s of CPU before its build started, issue 18 §3).
    existing = _existing_entries(namespace, _named_ids(items))
    _check_new_ids(namespace, items, categories, existing, within_blocks=within_blocks)
    batch = _Batch(
        namespace=namespace,
        publish=publish,
        author=actor_user(actor),
        reviewer=actor_user(reviewer) if publish else None,
        now=timezone.now(),
        existing=existing,
        latest=_latest_versions(entry.pk for entry in existing.values()),
        claimed=_claimed_numbers(namespace, items, existing),
    )
    by_hash = _latest_hashes(namespace, {item.content.content_hash for item in items if item.public_id not in existing})
    written: list[ImportLine] = []
    for done, item in enumerate(items, start=1):
        planned = len(batch.versions)
        entry = batch.existing.get(item.public_id) if item.public_id else None
        if entry is not None and item.retirement is not None:
            batch.report.unchanged += 1  # retired already (_check_new_ids): its tombstone stands as it is
        elif entry is not None:
            batch.plan_change(item, entry)
        elif item.retirement is None and item.content.content_hash in by_hash:
            batch.report.unchanged += 1
        else:
            batch.plan_new(item, categories[item.category or default_category])
        if len(batch.versions) > planned:
            written.append(item)
        if progress:
            progress(done, len(items))
    lines = [(item.line_no, _scanned_fields(item)) for item in written]
    import_safety_check(namespace=namespace, lines=lines, publish=publish, acknowledgement=acknowledgement, actor=actor)
    note = f"Bulk {source}: author {actor}, reviewer {reviewer}." if publish else f"Bulk {source}."
    batch.save(source=source, note=note)
    # Before the build is asked for (on commit, in this order): it reads every entry this file added.
    transaction.on_commit(partial(planner_statistics_refresh, (Entry, EntryVersion), written=len(batch.versions)))
    if publish and batch.versions:
        release_request_build(namespace=namespace, reason="import")
    return batch.report


def _scanned_fields(item: ImportLine) -> dict[str, str]:
    content = item.content
    # A tombstone serves its reason to agents as the entries serve their text.
    reason = {"retireReason": item.retirement.reason} if item.retirement else {}
    return {
        "title": content.title,
        "summary": content.summary,
        "body": content.body,
        "tags": ", ".join(content.tags),
        "aliases": ", ".join(content.aliases),
        **reason,
    }


def _content_kwargs(content: VersionContent) -> dict[str, Any]:
    return {
        "title": content.title,
        "summary": content.summary,
        "body": content.body,
        "tags": content.tags,
        "confidence": content.confidence,
        "links": content.links,
        "aliases": content.aliases,
        "updated": content.updated,
        "sensitivity": content.sensitivity,
        "review_by": content.review_by,
        "valid_until": content.valid_until,
        "paths": content.paths,
        "overrides": content.overrides,
    }


def _named_ids(items: list[ImportLine]) -> set[str]:
    """The IDs the lines give, and those their retirements name as replacements."""
    named = {item.public_id for item in items if item.public_id}
    return named | {item.retirement.replaced_by for item in items if item.retirement and item.retirement.replaced_by}


def _check_new_ids(
    namespace: Namespace,
    items: list[ImportLine],
    categories: dict[str, Category],
    existing: dict[str, Entry],
    *,
    within_blocks: bool,
) -> None:
    """Refuse, naming every such line: a new ID outside its category's blocks (seed §6 fixes a number
    block per category; a category that declares none takes any free number), a retired line for an entry
    that is live here (retiring is a reviewer's decision, not an import's side effect), and a replacement
    that is neither an entry here nor a line of the file."""
    default = next(iter(categories))
    in_file = {item.public_id for item in items if item.public_id}
    errors: list[tuple[int, str]] = []
    for item in items:
        entry = existing.get(item.public_id or "")
        if item.retirement and entry is not None and entry.retired_at is None:
            errors.append((item.line_no, RETIRED_BUT_LIVE.format(id=item.public_id)))
        replacement = item.retirement.replaced_by if item.retirement else ""
        if replacement and replacement not in in_file and replacement not in existing:
            errors.append((item.line_no, NO_REPLACEMENT.format(replacement=replacement)))
        if entry is None and within_blocks and item.public_id:
            category = categories[item.category or default]
            message = _outside_blocks(namespace, item.public_id, category)
            if message:
                errors.append((item.line_no, message))
    if errors:
        raise ImportFileError(errors)


def _outside_blocks(namespace: Namespace, public_id: str, category: Category) -> str | None:
    number = parse_public_id(public_id, prefix=namespace.prefix)
    blocks: list[IdBlock] = list(category.blocks.all())  # prefetched by _check_against_namespace
    if number is None or not blocks or any(b.start <= number <= b.end for b in blocks):
        return None
    width = namespace.id_digits
    spans = ", ".join(f"{b.start:0{width}d}–{b.end:0{width}d}" for b in sorted(blocks, key=lambda b: b.start))
    return OUTSIDE_BLOCKS.format(id=public_id, category=category.slug, blocks=spans)


def _existing_entries(namespace: Namespace, public_ids: Iterable[str]) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for chunk in _chunks(public_ids):
        found.update((e.public_id, e) for e in Entry.objects.filter(namespace=namespace, public_id__in=chunk))
    return found


def _latest_versions(entry_ids: Iterable[int]) -> dict[int, EntryVersion]:
    """The newest version of each of these entries, by entry id."""
    latest: dict[int, EntryVersion] = {}
    for chunk in _chunks(entry_ids):
        versions = EntryVersion.objects.filter(entry_id__in=chunk).order_by("entry_id", "number")
        for version in versions.only(
            "id", "entry_id", "number", "state", "content_hash", "updated", "sensitivity", "review_by", "valid_until"
        ):
            latest[version.entry_id] = version
    return latest


def _latest_hashes(namespace: Namespace, hashes: set[str]) -> set[str]:
    """Which of `hashes` the newest version of some entry of the namespace has (its content is there)."""
    holders: set[int] = set()
    for chunk in _chunks(hashes):
        versions = EntryVersion.objects.filter(entry__namespace=namespace, content_hash__in=chunk)
        holders.update(versions.values_list("entry_id", flat=True))
    return {version.content_hash for version in _latest_versions(holders).values()} & hashes


def _chunks(values: Iterable[Any]) -> Iterator[list[Any]]:
    """`values` sorted, IN_CHUNK at a time: each query's parameters stay within every backend's limit."""
    ordered = sorted(values)
    for start in range(0, len(ordered), IN_CHUNK):
        yield ordered[start : start + IN_CHUNK]


def _claimed_numbers(namespace: Namespace, items: list[ImportLine], existing: dict[str, Entry]) -> frozenset[int]:
    """The numbers of the IDs the file's lines give for entries not created yet: a line without an ID
    read before one of them must not be allocated its number."""
    numbers = (parse_public_id(item.public_id, prefix=namespace.prefix) for item in items if item.public_id)
    named = {number for number in numbers if number is not None}
    return frozenset(named - {entry.number for entry in existing.values()})


def _create_entry(
    namespace: Namespace, item: ImportLine, category: Category, person: Any, *, claimed: frozenset[int]
) -> Entry:
    number = parse_public_id(item.public_id, prefix=namespace.prefix) if item.public_id else None
    if item.public_id and number is not None:  # foreign prefixes were refused by _check_against_namespace
        public_id = item.public_id
    else:
        number = _next_free_number(namespace=namespace, category=category, claimed=claimed)
        public_id = format_public_id(prefix=namespace.prefix, number=number, digits=namespace.id_digits)
    if Entry.objects.filter(namespace=namespace, number=number).exists():
        raise ImportFileError([(item.line_no, f"the number of {public_id} is already used in this namespace")])
    retirement = item.retirement
    return Entry.objects.create(
        namespace=namespace,
        public_id=public_id,
        number=number,
        category=category,
        created_by=person,
        retired_at=retirement.at if retirement else None,
        retire_reason=retirement.reason if retirement else "",
        replaced_by=retirement.replaced_by if retirement else "",
    )


def _new_version(
    entry: Entry, number: int, content: VersionContent, state: str, author: Any, reviewer: Any, now: Any
) -> EntryVersion:
    published = state == VersionState.PUBLISHED
    return EntryVersion(
        entry=entry,
        number=number,
        state=state,
        author=author,
        reviewer=reviewer,
        review_note="Bulk import." if published else "",
        submitted_at=now if published else None,
        reviewed_at=now if published else None,
        published_at=now if published else None,
        **content.model_fields(),
    )
