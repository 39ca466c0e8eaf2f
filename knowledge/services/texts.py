"""Reviewed texts (prompt packs, doc pages, the profile, themes, bases): draft, save, review, publish.

The same workflow (knowledge.workflow), roles and four-eyes rule as entry versions. Publishing is the
only write to what agents are served: it copies the version's content into the served row and queues
a release build. Set-up from files (the demo, imports, migrations) publishes through
`text_publish_as_system`, recorded as the system actor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import NOT_EDITABLE, STALE_DRAFT, ConflictError, InvalidInputError
from knowledge.models import DocPage, Namespace, PromptPack, ReviewedText, Role, TextKind, TextVersion, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.selectors.layers import bases_list, version_writers
from knowledge.services.access import require_role
from knowledge.services.actors import system_actor
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build
from knowledge.services.content import theme_entries_check
from knowledge.services.four_eyes import (
    contribution_record,
    contributions_carried,
    four_eyes_check,
    version_contributor_ids,
)
from knowledge.services.layers import layers_declaration_apply, layers_declaration_check
from knowledge.services.safety import approval_safety_check, findings_gate, findings_record
from knowledge.services.text_kinds import KINDS, text_content_clean, text_content_hash, text_key_check
from knowledge.services.versions import ACTION_ROLES
from knowledge.workflow import check_transition

TEXT_OPEN_VERSION: Final = "{text} already has version {number} {state}; finish or withdraw it first."
APPROVED_WAITING: Final = "{text} has approved version {number} waiting to go live; publish it first."
REJECT_NEEDS_NOTE: Final = "Say what has to change: the author reads the note."


def _locked(version: TextVersion) -> TextVersion:
    """The version's row, locked; not its namespace's (FOR UPDATE OF: a join would lock that row too,
    and a list of bases waiting for the list lock must hold no namespace row the holder needs)."""
    return TextVersion.objects.select_for_update(of=("self",)).select_related("text__namespace").get(pk=version.pk)


def _transition(
    version: TextVersion, *, target: str, actor: Actor, note: str = "", check_permission: bool = True
) -> TextVersion:
    action = check_transition(version.state, target)
    namespace = version.text.namespace
    if check_permission:
        require_role(user=actor, namespace=namespace, role=ACTION_ROLES[action])
    previous = version.state
    version.state = target
    version.save(update_fields=["state", "modified_at"])
    audit_record(
        namespace=namespace,
        actor=actor,
        action=action,
        text_version=version,
        from_state=previous,
        to_state=target,
        note=note or str(version.text),
    )
    return version


def _declarers(version: TextVersion) -> list[Any]:
    """The people who wrote the version's content (its author and every saver)."""
    return version_writers(version)


def _references_check(*, namespace: Namespace, kind: str, content: Mapping[str, Any], declarers: list[Any]) -> None:
    """A text that names other namespaces (a list of bases, issue 16 §4) or entries (a theme) is checked
    against them when it is saved, submitted and approved: a cycle, a private base, a lost membership or a
    retired entry can appear between those steps."""
    if kind == TextKind.BASES:
        layers_declaration_check(namespace=namespace, slugs=content["bases"], declarers=declarers)
    elif kind == TextKind.THEME:
        theme_entries_check(namespace=namespace, ids=content["entries"])


def text_references_check(*, version: TextVersion) -> None:
    """Raise InvalidInputError if the version could not be approved now for what it names (a list of bases):
    the check approval runs, for a reviewer's preview (writes nothing)."""
    text = version.text
    _references_check(namespace=text.namespace, kind=text.kind, content=version.content, declarers=_declarers(version))


def _text_get_or_create(*, namespace: Namespace, kind: str, key: str) -> ReviewedText:
    key = text_key_check(kind=kind, key=key)
    text, _ = ReviewedText.objects.get_or_create(namespace=namespace, kind=kind, key=key)
    return (
        ReviewedText.objects.select_for_update(of=("self",)).select_related("namespace", "live_version").get(pk=text.pk)
    )


def _next_number(text: ReviewedText) -> int:
    return (text.versions.aggregate(top=Max("number"))["top"] or 0) + 1


@transaction.atomic
def text_draft(
    *, namespace: Namespace, kind: str, key: str = "", actor: Actor, base: TextVersion | None = None
) -> TextVersion:
    """The text's open draft, or a new one from its live content (an empty one for a new text).

    With `base` (revert to an earlier version, revise a rejected one) the draft copies that version, and
    an open version is refused rather than reused, so nobody's draft is silently replaced.
    """
    require_role(user=actor, namespace=namespace, role=Role.EDITOR)
    text = _text_get_or_create(namespace=namespace, kind=kind, key=key)
    if base is not None and base.text_id != text.pk:
        raise InvalidInputError(f"Version {base.number} is not a version of {text}.")
    open_version = text.versions.filter(state__in=OPEN_STATES).first()
    if open_version is not None:
        if open_version.state == VersionState.DRAFT and base is None:
            return open_version
        state = open_version.get_state_display().lower()
        raise InvalidInputError(TEXT_OPEN_VERSION.format(text=text, number=open_version.number, state=state))
    source = base or text.live_version
    content = dict(source.content) if source else _served_content(text)
    draft = TextVersion.objects.create(
        text=text,
        number=_next_number(text),
        author=actor_user(actor),
        content=content,
        content_hash=text_content_hash(kind=kind, content=content),
    )
    contribution_record(version=draft, actor=actor)
    if source is not None:
        contributions_carried(draft=draft, base=source)
    audit_record(
        namespace=namespace, actor=actor, action="create", text_version=draft, to_state="draft", note=str(text)
    )
    return draft


@transaction.atomic
def text_save(
    *, version: TextVersion, content: Mapping[str, Any], expected_lock_version: int, actor: Actor
) -> TextVersion:
    """Save a draft's content unless someone saved it since `expected_lock_version`; the saver contributed."""
    current = _locked(version)
    namespace = current.text.namespace
    require_role(user=actor, namespace=namespace, role=Role.EDITOR)
    if current.state != VersionState.DRAFT:
        raise InvalidInputError(NOT_EDITABLE.format(number=current.number, state=current.get_state_display().lower()))
    if current.lock_version != expected_lock_version:
        raise ConflictError(STALE_DRAFT.format(expected=expected_lock_version, current=current.lock_version))
    cleaned = text_content_clean(kind=current.text.kind, content=content)
    declarers = [*_declarers(current), actor]
    _references_check(namespace=namespace, kind=current.text.kind, content=cleaned, declarers=declarers)
    TextVersion.objects.filter(pk=current.pk).update(
        content=cleaned,
        content_hash=text_content_hash(kind=current.text.kind, content=cleaned),
        lock_version=F("lock_version") + 1,
        modified_at=timezone.now(),
    )
    current.refresh_from_db()
    contribution_record(version=current, actor=actor)
    audit_record(
        namespace=namespace, actor=actor, action="edit", text_version=current, from_state="draft", to_state="draft"
    )
    return current


@transaction.atomic
def text_submit(*, version: TextVersion, actor: Actor, note: str = "") -> TextVersion:
    version = _locked(version)
    text_content_clean(kind=version.text.kind, content=version.content)  # an empty new draft is not submitted
    _references_check(
        namespace=version.text.namespace, kind=version.text.kind, content=version.content, declarers=_declarers(version)
    )
    version = _transition(version, target=VersionState.IN_REVIEW, actor=actor, note=note)
    version.submitted_at = timezone.now()
    version.save(update_fields=["submitted_at"])
    findings_record(version=version, namespace=version.text.namespace)
    return version


@transaction.atomic
def text_approve(*, version: TextVersion, actor: Actor, note: str = "", acknowledgement: str = "") -> TextVersion:
    """Approve a version nobody approving it wrote (four eyes) whose safety scan passes."""
    version = _locked(version)
    namespace = version.text.namespace
    check_transition(version.state, VersionState.APPROVED)
    require_role(user=actor, namespace=namespace, role=Role.REVIEWER)
    four_eyes_check(namespace=namespace, contributors=version_contributor_ids(version=version), actor=actor)
    _references_check(
        namespace=namespace, kind=version.text.kind, content=version.content, declarers=_declarers(version)
    )
    approval_safety_check(version=version, namespace=namespace, actor=actor, acknowledgement=acknowledgement)
    version = _transition(version, target=VersionState.APPROVED, actor=actor, note=note, check_permission=False)
    _reviewed(version, actor=actor, note=note)
    return version


def _reviewed(version: TextVersion, *, actor: Actor, note: str) -> None:
    version.reviewer = actor_user(actor)
    version.review_note = note
    version.reviewed_at = timezone.now()
    version.save(update_fields=["reviewer", "review_note", "reviewed_at"])


@transaction.atomic
def text_reject(*, version: TextVersion, actor: Actor, note: str) -> TextVersion:
    if not note.strip():
        raise InvalidInputError(REJECT_NEEDS_NOTE)
    version = _transition(_locked(version), target=VersionState.REJECTED, actor=actor, note=note)
    _reviewed(version, actor=actor, note=note)
    return version


@transaction.atomic
def text_withdraw(*, version: TextVersion, actor: Actor, note: str = "") -> TextVersion:
    return _transition(_locked(version), target=VersionState.WITHDRAWN, actor=actor, note=note)


@transaction.atomic
def text_publish(*, version: TextVersion, actor: Actor, note: str = "") -> TextVersion:
    """Make an approved version the one agents read; the previous one is superseded."""
    version = _locked(version)
    check_transition(version.state, VersionState.PUBLISHED)
    require_role(user=actor, namespace=version.text.namespace, role=Role.REVIEWER)
    return _make_live(version, actor=actor, note=note)


def _make_live(version: TextVersion, *, actor: Actor, note: str) -> TextVersion:
    text = ReviewedText.objects.select_for_update(of=("self",)).select_related("namespace").get(pk=version.text_id)
    live = text.versions.filter(state=VersionState.PUBLISHED).exclude(pk=version.pk).first()
    if live is not None:
        _transition(live, target=VersionState.SUPERSEDED, actor=actor, check_permission=False)
    version = _transition(version, target=VersionState.PUBLISHED, actor=actor, note=note, check_permission=False)
    version.published_at = timezone.now()
    version.save(update_fields=["published_at"])
    text.live_version = version
    text.save(update_fields=["live_version"])
    _serve(text=text, version=version, actor=actor)
    release_request_build(namespace=text.namespace, reason="text")
    return version


def _served_content(text: ReviewedText) -> dict[str, Any]:
    """What agents are served of a text that has no version yet (a fresh namespace's profile), else empty."""
    namespace = text.namespace
    if text.kind == TextKind.PROFILE:
        return {name: getattr(namespace, name) for name in KINDS[TextKind.PROFILE].fields}
    if text.kind == TextKind.DOC:
        page = DocPage.objects.filter(namespace=namespace, slug=text.key).first()
        if page is not None:
            return {"title": page.title, "body": page.body, "position": page.position}
    elif text.kind == TextKind.PROMPT and (
        pack := PromptPack.objects.filter(namespace=namespace, scenario=text.key).first()
    ):
        return {"template": pack.template}
    elif text.kind == TextKind.BASES:
        return {"bases": [base.slug for base in bases_list(namespace=namespace)]}
    return dict(KINDS[text.kind].empty)


def _serve(*, text: ReviewedText, version: TextVersion, actor: Actor) -> None:
    """Copy published content into the row releases are built from (the only writer of those rows)."""
    namespace, content = text.namespace, version.content
    if text.kind == TextKind.DOC:
        DocPage.objects.update_or_create(
            namespace=namespace,
            slug=text.key,
            defaults={"title": content["title"], "body": content["body"], "position": content["position"]},
        )
    elif text.kind == TextKind.PROMPT:
        PromptPack.objects.update_or_create(
            namespace=namespace, scenario=text.key, defaults={"template": content["template"]}
        )
    elif text.kind == TextKind.PROFILE:
        fields = KINDS[TextKind.PROFILE].fields
        Namespace.objects.filter(pk=namespace.pk).update(**{name: content[name] for name in fields})
    elif text.kind == TextKind.BASES:
        layers_declaration_apply(
            namespace=namespace, slugs=content["bases"], declarers=_declarers(version), actor=actor
        )
    # A theme has no row of its own: releases read its live version (knowledge.selectors.snapshots).


@transaction.atomic
def text_publish_as_system(
    *, namespace: Namespace, kind: str, key: str = "", content: Mapping[str, Any], note: str
) -> TextVersion | None:
    """Publish content set up from files (the demo, an import, a migration) as the system actor.

    No person wrote it in Evergreen, so there is no second person to ask: the audit trail says who
    (the system actor) and why (`note`). Unchanged content publishes nothing and returns None.
    """
    actor = system_actor()
    text = _text_get_or_create(namespace=namespace, kind=kind, key=key)
    cleaned = text_content_clean(kind=kind, content=content)
    content_hash = text_content_hash(kind=kind, content=cleaned)
    if text.live_version is not None and text.live_version.content_hash == content_hash:
        return None
    approved = text.versions.filter(state=VersionState.APPROVED).first()
    if approved is not None:
        raise ConflictError(APPROVED_WAITING.format(text=text, number=approved.number))
    for open_version in text.versions.filter(state__in=(VersionState.DRAFT, VersionState.IN_REVIEW)):
        _transition(open_version, target=VersionState.WITHDRAWN, actor=actor, note=note, check_permission=False)
    now = timezone.now()
    version = TextVersion.objects.create(
        text=text,
        number=_next_number(text),
        state=VersionState.APPROVED,
        author=actor,
        reviewer=actor,
        review_note=note,
        content=cleaned,
        content_hash=content_hash,
        submitted_at=now,
        reviewed_at=now,
    )
    contribution_record(version=version, actor=actor)
    findings_gate(findings_record(version=version, namespace=namespace), acknowledgement=note)
    return _make_live(version, actor=actor, note=note)


# Every review step of a text by its action name (the admin's buttons, the management API's routes).
TEXT_TRANSITIONS: Final[Mapping[str, Callable[..., TextVersion]]] = {
    "submit": text_submit,
    "approve": text_approve,
    "reject": text_reject,
    "publish": text_publish,
    "withdraw": text_withdraw,
}
