"""Four eyes: nobody who wrote any of a version's content approves it.

The one rule every approval path applies (the admin's buttons and bulk actions, imports that
publish, management commands, any future API), for entry versions, reviewed texts and synonym sets. A
contributor is the version's author and every person who saved its content; single-person mode
(`allow_self_approval`) lifts the rule for a namespace and is itself an audited setting only its
admins change. The system actor is no person: set-up from files it publishes is not an approval.

A draft copied from a version that never passed review (rejected, withdrawn) carries that version's
contributors: their words are still its content. Otherwise a second editor opening a draft from a
withdrawn version, typing nothing, let its writer approve it as someone else's.
"""

from __future__ import annotations

from collections.abc import Collection

from knowledge.actors import Actor, actor_id, actor_user, is_system_actor
from knowledge.errors import SELF_APPROVAL
from knowledge.models import EntryVersion, Namespace, TextVersion, VersionState
from knowledge.services.access import refusal

AnyVersion = EntryVersion | TextVersion
# The states of a version whose content passed review (approved, published once or still).
REVIEWED_STATES = frozenset({VersionState.APPROVED, VersionState.PUBLISHED, VersionState.SUPERSEDED})


def contribution_record(*, version: AnyVersion, actor: Actor) -> None:
    """Remember that `actor` wrote some of this version's content."""
    user = actor_user(actor)
    if user is not None:
        version.contributors.add(user)


def contributions_carried(*, draft: AnyVersion, base: AnyVersion) -> None:
    """`draft` was copied from `base`: unless base's content passed review, its contributors are the draft's too."""
    if base.state not in REVIEWED_STATES:
        draft.contributors.add(*version_contributor_ids(version=base))


def version_contributor_ids(*, version: AnyVersion) -> set[int]:
    ids = set(version.contributors.values_list("pk", flat=True))
    if version.author_id is not None:
        ids.add(version.author_id)
    return ids


def four_eyes_check(*, namespace: Namespace, contributors: Collection[int], actor: Actor) -> None:
    """Raise NotAllowedError (and log a security event) if `actor` is one of the `contributors` (user ids)."""
    if namespace.allow_self_approval or is_system_actor(actor):
        return
    person = actor_id(actor)
    if person is not None and person in contributors:
        raise refusal(SELF_APPROVAL, reason="four_eyes", actor=actor, namespace=namespace)
