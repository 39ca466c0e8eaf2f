"""Synonym sets through review: create, edit a draft, submit, approve or reject, publish, withdraw.

The same transitions, roles and four-eyes rule as entry versions (knowledge.workflow,
services.versions): editors write and submit, a reviewer other than the author approves and
publishes, and publishing queues a release build. Until then the published version keeps serving.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from knowledge.actors import actor_user
from knowledge.errors import NOT_EDITABLE, InvalidInputError
from knowledge.models import AuditRecord, Namespace, Role, SynonymSet, SynonymVersion, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.retrieval.analysis import AnalyzerConfig, analyze_text
from knowledge.retrieval.synonyms import MAX_PHRASE_TERMS, synonym_rules
from knowledge.retrieval.synonyms import SynonymSet as SynonymRule
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build
from knowledge.services.four_eyes import REVIEWED_STATES, four_eyes_check
from knowledge.services.versions import ACTION_ROLES
from knowledge.workflow import check_transition

MAX_PHRASES = 20
MAX_PHRASE_CHARS = 200
SYNONYMS_INVALID = "synonyms.invalid"
PHRASES_SAME = (
    "“{first}” and “{second}” are the same phrase to search (it ignores case, punctuation and word endings), "
    "so the set would change nothing: a synonym set needs at least two different phrases."
)
CONTROL_IN_PHRASE = "The phrase “{text}” contains a control character ({char}); write each phrase as plain text."
CONTROL_IN_NAME = "The name contains a control character ({char}); write it as plain text."
DUPLICATE_SET = (
    "The synonym set “{name}” of {namespace} already has these phrases ({direction}, the same to search); "
    "edit that set instead."
)


class SynonymError(InvalidInputError):
    """A synonym set that cannot be saved; `code` says which rule it broke."""

    def __init__(self, message: str, *, code: str = SYNONYMS_INVALID) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class SynonymContent:
    """A set's editable content, normalised and checked."""

    phrases: tuple[str, ...]
    two_way: bool = True
    enabled: bool = True

    @classmethod
    def build(cls, *, phrases: Sequence[str], two_way: bool = True, enabled: bool = True) -> SynonymContent:
        """Strip and deduplicate phrases; refuse control characters, fewer than two phrases that differ to
        search, too many, too long, or unsearchable ones."""
        for phrase in phrases:
            _plain(phrase, CONTROL_IN_PHRASE)
        cleaned = tuple(dict.fromkeys(" ".join(p.split()) for p in phrases if p.strip()))
        if len(cleaned) < 2:
            raise SynonymError("A synonym set needs at least two different phrases.", code="synonyms.too_few")
        if len(cleaned) > MAX_PHRASES:
            raise SynonymError(f"A synonym set holds at most {MAX_PHRASES} phrases.", code="synonyms.too_many")
        searched: dict[tuple[str, ...], str] = {}
        for phrase in cleaned:
            if len(phrase) > MAX_PHRASE_CHARS:
                raise SynonymError(
                    f"“{phrase[:40]}…” is longer than {MAX_PHRASE_CHARS} characters.", code="synonyms.too_long"
                )
            terms = analyze_text(phrase, AnalyzerConfig())
            if not terms:
                raise SynonymError(
                    f"“{phrase}” has no searchable word (only stop words or punctuation).",
                    code="synonyms.no_terms",
                )
            if len(terms) > MAX_PHRASE_TERMS:
                raise SynonymError(
                    f"“{phrase}” has {len(terms)} words; a synonym phrase has at most {MAX_PHRASE_TERMS}.",
                    code="synonyms.too_long",
                )
            searched.setdefault(tuple(terms), phrase)
        if len(searched) < 2:
            raise SynonymError(PHRASES_SAME.format(first=cleaned[0], second=cleaned[1]), code="synonyms.too_few")
        return cls(phrases=cleaned, two_way=two_way, enabled=enabled)

    def effect(self) -> frozenset[tuple[tuple[str, ...], frozenset[tuple[str, ...]]]]:
        """What the set makes topics search for, as the release's index compiles it (order aside)."""
        return _effect(self.phrases, two_way=self.two_way)


def _effect(phrases: Sequence[str], *, two_way: bool) -> frozenset[tuple[tuple[str, ...], frozenset[tuple[str, ...]]]]:
    rules = synonym_rules([SynonymRule(tuple(phrases), two_way)], AnalyzerConfig())
    return frozenset((source, frozenset(targets)) for source, targets in rules.items())


def _plain(text: str, message: str) -> None:
    """Refuse control characters (Unicode category Cc): PostgreSQL cannot store NUL, the others garble pages."""
    for char in text:
        if unicodedata.category(char) == "Cc":
            shown = "".join(c if unicodedata.category(c) != "Cc" else "�" for c in text[:60])
            raise SynonymError(
                message.format(text=shown, char=f"U+{ord(char):04X}"), code="synonyms.control_characters"
            )


def synonym_set_name_clean(name: str) -> str:
    """The name as stored: plain text, runs of spaces made one."""
    _plain(name, CONTROL_IN_NAME)
    name = " ".join(name.split())
    if not name:
        raise SynonymError("Give the set a name.", code="synonyms.no_name")
    return name


def synonym_duplicate_check(
    *, namespace: Namespace, content: SynonymContent, synonym_set: SynonymSet | None = None
) -> None:
    """Refuse content that another set of the namespace already has, live or in an open version.

    Compared as the index compiles it (each phrase analysed, in the same direction), so "Token budget"
    and "token budgets" are the same phrase; `synonym_set` is the set being edited, never its own duplicate.
    """
    effect = content.effect()
    versions = SynonymVersion.objects.filter(
        synonym_set__namespace=namespace,
        state__in=(*OPEN_STATES, VersionState.PUBLISHED),
        two_way=content.two_way,
    ).select_related("synonym_set")
    if synonym_set is not None:
        versions = versions.exclude(synonym_set=synonym_set)
    for version in versions:
        if _effect(version.phrases, two_way=version.two_way) == effect:
            direction = "two-way" if content.two_way else "one-way"
            message = DUPLICATE_SET.format(name=version.synonym_set.name, namespace=namespace.slug, direction=direction)
            raise SynonymError(message, code="synonyms.duplicate")


def _audit(
    version: SynonymVersion,
    *,
    actor: Any,
    action: str,
    from_state: str = "",
    note: str = "",
    drafted_from: SynonymVersion | None = None,
) -> None:
    value = {"set": version.synonym_set.name, "version": version.number, "phrases": version.phrases}
    if drafted_from is not None:
        value["from"] = drafted_from.number  # its contributors are the draft's too (synonym_contributor_ids)
    audit_record(
        namespace=version.synonym_set.namespace,
        actor=actor,
        action=f"synonyms_{action}",
        from_state=from_state,
        to_state=version.state,
        note=note,
        field="synonym_set",
        new_value=value,
    )


def synonym_contributor_ids(version: SynonymVersion) -> set[int]:
    """The author and everyone who saved this version (read from the audit trail, which names each save),
    and, for a draft copied from a version that never passed review, that version's (four_eyes)."""
    saves = AuditRecord.objects.filter(
        namespace=version.synonym_set.namespace,
        action__in=("synonyms_create", "synonyms_edit"),
        new_value__set=version.synonym_set.name,
        new_value__version=version.number,
    ).values_list("actor_id", "new_value")
    ids = {actor_id for actor_id, _ in saves if actor_id is not None}
    ids |= {version.author_id} if version.author_id is not None else set()
    sources = {value["from"] for _, value in saves if isinstance(value, dict) and isinstance(value.get("from"), int)}
    for base in version.synonym_set.versions.filter(number__in=sources, number__lt=version.number):
        if base.state not in REVIEWED_STATES:
            ids |= synonym_contributor_ids(base)
    return ids


def _locked(version: SynonymVersion) -> SynonymVersion:
    return SynonymVersion.objects.select_for_update().select_related("synonym_set__namespace").get(pk=version.pk)


def _transition(version: SynonymVersion, *, target: str, actor: Any, note: str = "") -> SynonymVersion:
    previous = version.state
    action = check_transition(previous, target)
    version.state = target
    version.save(update_fields=["state", "modified_at"])
    _audit(version, actor=actor, action=action, from_state=previous, note=note)
    return version


@transaction.atomic
def synonym_set_create(
    *, namespace: Namespace, name: str, content: SynonymContent, actor: Any
) -> tuple[SynonymSet, SynonymVersion]:
    """A new set with its first version as a draft (nothing serves it until it is published)."""
    require_role(user=actor, namespace=namespace, role=Role.EDITOR)
    name = synonym_set_name_clean(name)
    if SynonymSet.objects.filter(namespace=namespace, name=name).exists():
        raise SynonymError(f"{namespace.slug} already has a synonym set “{name}”.", code="synonyms.name_taken")
    synonym_duplicate_check(namespace=namespace, content=content)
    synonym_set = SynonymSet.objects.create(namespace=namespace, name=name)
    version = SynonymVersion.objects.create(
        synonym_set=synonym_set,
        number=1,
        phrases=list(content.phrases),
        two_way=content.two_way,
        enabled=content.enabled,
        author=actor_user(actor),
    )
    _audit(version, actor=actor, action="create")
    return synonym_set, version


@transaction.atomic
def synonym_draft(*, synonym_set: SynonymSet, actor: Any, base: SynonymVersion | None = None) -> SynonymVersion:
    """The set's open draft, or a new one copied from `base` (default: its live or latest version).

    With `base` (revert, revise a rejected version) an open version is refused rather than reused.
    """
    require_role(user=actor, namespace=synonym_set.namespace, role=Role.EDITOR)
    synonym_set = SynonymSet.objects.select_for_update().select_related("namespace").get(pk=synonym_set.pk)
    if base is not None and base.synonym_set_id != synonym_set.pk:
        raise SynonymError(f"Version {base.number} is not a version of “{synonym_set.name}”.")
    open_version = synonym_set.versions.filter(state__in=OPEN_STATES).first()
    if open_version is not None:
        if open_version.state == VersionState.DRAFT and base is None:
            return open_version
        raise SynonymError(
            f"“{synonym_set.name}” already has version {open_version.number} "
            f"{open_version.get_state_display().lower()}; finish or withdraw it first.",
            code="synonyms.open_version",
        )
    base = base or synonym_set.live_version or synonym_set.versions.order_by("-number").first()
    assert base is not None  # every set is created with its first version
    number = (synonym_set.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    draft = SynonymVersion.objects.create(
        synonym_set=synonym_set,
        number=number,
        phrases=base.phrases,
        two_way=base.two_way,
        enabled=base.enabled,
        author=actor_user(actor),
    )
    _audit(draft, actor=actor, action="create", note=f"Draft from version {base.number}.", drafted_from=base)
    return draft


@transaction.atomic
def synonym_save(*, version: SynonymVersion, content: SynonymContent, actor: Any) -> SynonymVersion:
    """Change a draft's phrases; any other state is refused."""
    require_role(user=actor, namespace=version.synonym_set.namespace, role=Role.EDITOR)
    version = _locked(version)
    if version.state != VersionState.DRAFT:
        raise InvalidInputError(NOT_EDITABLE.format(number=version.number, state=version.get_state_display().lower()))
    synonym_duplicate_check(namespace=version.synonym_set.namespace, content=content, synonym_set=version.synonym_set)
    version.phrases = list(content.phrases)
    version.two_way = content.two_way
    version.enabled = content.enabled
    version.save(update_fields=["phrases", "two_way", "enabled", "modified_at"])
    _audit(version, actor=actor, action="edit", from_state=version.state)
    return version


def _checked(version: SynonymVersion, *, action: str, actor: Any) -> SynonymVersion:
    version = _locked(version)
    require_role(user=actor, namespace=version.synonym_set.namespace, role=ACTION_ROLES[action])
    return version


@transaction.atomic
def synonym_submit(*, version: SynonymVersion, actor: Any, note: str = "") -> SynonymVersion:
    version = _checked(version, action="submit", actor=actor)
    version = _transition(version, target=VersionState.IN_REVIEW, actor=actor, note=note)
    version.submitted_at = timezone.now()
    version.save(update_fields=["submitted_at"])
    return version


@transaction.atomic
def synonym_approve(*, version: SynonymVersion, actor: Any, note: str = "") -> SynonymVersion:
    """Approve another person's version (four eyes, unless the namespace allows single-person mode)."""
    version = _checked(version, action="approve", actor=actor)
    check_transition(version.state, VersionState.APPROVED)
    four_eyes_check(namespace=version.synonym_set.namespace, contributors=synonym_contributor_ids(version), actor=actor)
    version = _transition(version, target=VersionState.APPROVED, actor=actor, note=note)
    version.reviewer = actor_user(actor)
    version.review_note = note
    version.reviewed_at = timezone.now()
    version.save(update_fields=["reviewer", "review_note", "reviewed_at"])
    return version


@transaction.atomic
def synonym_reject(*, version: SynonymVersion, actor: Any, note: str) -> SynonymVersion:
    if not note.strip():
        raise InvalidInputError("Say what has to change: the author reads the note.")
    version = _checked(version, action="reject", actor=actor)
    version = _transition(version, target=VersionState.REJECTED, actor=actor, note=note)
    version.reviewer = actor_user(actor)
    version.review_note = note
    version.reviewed_at = timezone.now()
    version.save(update_fields=["reviewer", "review_note", "reviewed_at"])
    return version


@transaction.atomic
def synonym_withdraw(*, version: SynonymVersion, actor: Any, note: str = "") -> SynonymVersion:
    version = _checked(version, action="withdraw", actor=actor)
    return _transition(version, target=VersionState.WITHDRAWN, actor=actor, note=note)


@transaction.atomic
def synonym_publish(*, version: SynonymVersion, actor: Any, note: str = "") -> SynonymVersion:
    """Make an approved version the set's live one (the previous is superseded) and queue a build."""
    version = _checked(version, action="publish", actor=actor)
    synonym_set = SynonymSet.objects.select_for_update().select_related("namespace").get(pk=version.synonym_set_id)
    check_transition(version.state, VersionState.PUBLISHED)
    live = synonym_set.versions.filter(state=VersionState.PUBLISHED).exclude(pk=version.pk).first()
    if live is not None:
        _transition(live, target=VersionState.SUPERSEDED, actor=actor)
    version = _transition(version, target=VersionState.PUBLISHED, actor=actor, note=note)
    version.published_at = timezone.now()
    version.save(update_fields=["published_at"])
    synonym_set.live_version = version
    synonym_set.save(update_fields=["live_version"])
    release_request_build(namespace=synonym_set.namespace, reason="synonyms")
    return version


SYNONYM_ACTIONS: dict[str, Callable[..., SynonymVersion]] = {
    "submit": synonym_submit,
    "approve": synonym_approve,
    "reject": synonym_reject,
    "publish": synonym_publish,
    "withdraw": synonym_withdraw,
}


@transaction.atomic
def synonym_sets_apply(
    *, namespace: Namespace, sets: Sequence[tuple[str, SynonymContent]], author: Any, reviewer: Any
) -> int:
    """Publish sets from a file (load_demo): the author and reviewer vouch for it, as an import does.

    A set whose live version already has the same content is left alone (running it again changes
    nothing); returns how many sets were published.
    """
    published = 0
    for name, content in sets:
        synonym_set = SynonymSet.objects.filter(namespace=namespace, name=name).select_related("live_version").first()
        live = synonym_set.live_version if synonym_set else None
        if live is not None and (tuple(live.phrases), live.two_way, live.enabled) == (
            content.phrases,
            content.two_way,
            content.enabled,
        ):
            continue
        try:
            if synonym_set is None:
                synonym_set, version = synonym_set_create(namespace=namespace, name=name, content=content, actor=author)
            else:
                version = synonym_save(
                    version=synonym_draft(synonym_set=synonym_set, actor=author), content=content, actor=author
                )
        except IntegrityError as error:  # a concurrent editor opened a version meanwhile
            raise SynonymError(f"“{name}” changed while applying: {error}", code="synonyms.conflict") from error
        synonym_submit(version=version, actor=author)
        synonym_approve(version=version, actor=reviewer, note="Applied from a file.")
        synonym_publish(version=version, actor=reviewer)
        published += 1
    return published
