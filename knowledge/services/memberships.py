"""Who holds which role in a namespace: granted by that namespace's admins, never by oneself, audited.

A namespace always keeps someone who can review once it had one: four eyes need a second person.
"""

from __future__ import annotations

from typing import Any, Final

from django.db import transaction

from knowledge.actors import Actor, actor_id
from knowledge.errors import ConflictError, InvalidInputError
from knowledge.models import Membership, Namespace, Role
from knowledge.selectors.permissions import IMPLIED_ROLES, ROLE_PHRASES
from knowledge.services.access import refusal, require_role
from knowledge.services.audit import audit_record
from knowledge.services.layers import layers_rebuild_dependants

REVIEW_ROLES: Final = IMPLIED_ROLES[Role.REVIEWER]

LAST_REVIEWER: Final = (
    "“{user}” is the last person who can review in “{namespace}”. Give someone else the reviewer "
    "or namespace-admin role first, so that versions can still be reviewed."
)
SELF_GRANT: Final = "You cannot give or change your own roles; ask another namespace admin."
ALREADY_HELD: Final = "“{user}” is already {role} of “{namespace}”."
UNKNOWN_ROLE: Final = "Unknown role “{role}”; roles are: {roles}."


def _check_role(role: str) -> None:
    if role not in Role.values:
        raise InvalidInputError(UNKNOWN_ROLE.format(role=role, roles=", ".join(Role.values)))


def _already_held(*, user: Any, role: str, namespace: Namespace) -> ConflictError:
    return ConflictError(
        ALREADY_HELD.format(user=user.get_username(), role=ROLE_PHRASES[role], namespace=namespace.slug)
    )


def _refuse_self(*, actor: Actor, user: Any, namespace: Namespace) -> None:
    if actor_id(actor) == user.pk and not getattr(actor, "is_superuser", False):
        raise refusal(SELF_GRANT, reason="self_grant", actor=actor, namespace=namespace)


def _keep_a_reviewer(membership: Membership, *, actor: Actor) -> None:
    """Refuse when `membership` is the namespace's last way to review (active users' rows only)."""
    if membership.role not in REVIEW_ROLES:
        return
    others = Membership.objects.filter(
        namespace_id=membership.namespace_id, role__in=REVIEW_ROLES, user__is_active=True
    ).exclude(pk=membership.pk)
    if not others.exists():
        message = LAST_REVIEWER.format(user=membership.user.get_username(), namespace=membership.namespace.slug)
        raise refusal(message, reason="last_reviewer", actor=actor, namespace=membership.namespace)


def _locked(membership: Membership) -> Membership:
    """The membership under a lock on its namespace row: membership changes of a namespace run one at a time."""
    Namespace.objects.select_for_update().filter(pk=membership.namespace_id).first()
    return Membership.objects.select_related("user", "namespace").get(pk=membership.pk)


def _audited(membership: Membership, *, actor: Actor, action: str, old: str | None, new: str | None) -> None:
    username = membership.user.get_username()
    audit_record(
        namespace=membership.namespace,
        actor=actor,
        action=action,
        field="role",
        old_value=None if old is None else {"user": username, "role": old},
        new_value=None if new is None else {"user": username, "role": new},
        note=f"{username}: {old or '—'} → {new or '—'}",
    )


@transaction.atomic
def membership_add(*, namespace: Namespace, user: Any, role: str, actor: Actor) -> Membership:
    """Give `user` a role in the namespace; needs the namespace-admin role there."""
    require_role(user=actor, namespace=namespace, role=Role.ADMIN)
    _check_role(role)
    _refuse_self(actor=actor, user=user, namespace=namespace)
    Namespace.objects.select_for_update().filter(pk=namespace.pk).first()
    if Membership.objects.filter(namespace=namespace, user=user, role=role).exists():
        raise _already_held(user=user, role=role, namespace=namespace)
    membership = Membership.objects.create(namespace=namespace, user=user, role=role)
    _audited(membership, actor=actor, action="membership-add", old=None, new=role)
    return membership


@transaction.atomic
def membership_change(*, membership: Membership, role: str, actor: Actor) -> Membership:
    """Change the role a membership grants; the last reviewer cannot be turned into a mere editor."""
    _check_role(role)
    locked = _locked(membership)
    require_role(user=actor, namespace=locked.namespace, role=Role.ADMIN)
    _refuse_self(actor=actor, user=locked.user, namespace=locked.namespace)
    old = locked.role
    if old == role:
        return locked
    if role not in REVIEW_ROLES:
        _keep_a_reviewer(locked, actor=actor)
    if Membership.objects.filter(namespace_id=locked.namespace_id, user_id=locked.user_id, role=role).exists():
        raise _already_held(user=locked.user, role=role, namespace=locked.namespace)
    locked.role = role
    locked.save(update_fields=["role"])
    _audited(locked, actor=actor, action="membership-change", old=old, new=role)
    _dependants_follow(locked.namespace_id)
    return locked


@transaction.atomic
def membership_remove(*, membership: Membership, actor: Actor) -> None:
    """Take a role away (one's own too); refused when nobody able to review would be left."""
    locked = _locked(membership)
    require_role(user=actor, namespace=locked.namespace, role=Role.ADMIN)
    _keep_a_reviewer(locked, actor=actor)
    _audited(locked, actor=actor, action="membership-remove", old=locked.role, new=None)
    locked.delete()
    _dependants_follow(locked.namespace_id)


def _dependants_follow(namespace_id: int) -> None:
    """A role in a base changed: the namespaces built on it build again, so one whose list was written by
    someone no longer an editor of the base stops carrying its internal entries (selectors.layers)."""
    layers_rebuild_dependants(namespace_id=namespace_id)


def _last_reviewer_refusal(users: list[Any], *, actor: Actor) -> None:
    """Refuse when taking `users` away (deleted or deactivated) would leave a namespace nobody able to review.

    The rule of `_keep_a_reviewer`, for all of the users' rows at once: a namespace keeps someone only
    through active users' review rows outside the set. Locks the namespaces concerned, in order, first.
    """
    user_ids = [user.pk for user in users]
    held = Membership.objects.filter(user_id__in=user_ids, role__in=REVIEW_ROLES)
    namespace_ids = sorted(set(held.values_list("namespace_id", flat=True)))
    if not namespace_ids:
        return
    list(Namespace.objects.select_for_update().filter(pk__in=namespace_ids).order_by("pk").values_list("pk"))
    kept = set(
        Membership.objects.filter(namespace_id__in=namespace_ids, role__in=REVIEW_ROLES, user__is_active=True)
        .exclude(user_id__in=user_ids)
        .values_list("namespace_id", flat=True)
    )
    bare: dict[tuple[str, ...], list[Namespace]] = {}
    for namespace in Namespace.objects.filter(pk__in=set(namespace_ids) - kept).order_by("slug"):
        names = sorted({row.user.get_username() for row in held.filter(namespace=namespace).select_related("user")})
        bare.setdefault(tuple(names), []).append(namespace)
    if not bare:
        return
    message = " ".join(
        LAST_REVIEWER.format(user=", ".join(names), namespace="”, “".join(ns.slug for ns in spaces))
        for names, spaces in bare.items()
    )
    first = next(iter(bare.values()))[0]
    slugs = sorted(ns.slug for spaces in bare.values() for ns in spaces)
    raise refusal(message, reason="last_reviewer", actor=actor, namespace=first, namespaces=slugs)


def user_removal_check(*, users: Any, actor: Actor) -> None:
    """Raise NotAllowedError (naming the namespaces) when deleting or deactivating `users` would leave a
    namespace without anyone able to review; call inside the transaction that then deletes/deactivates."""
    _last_reviewer_refusal(list(users), actor=actor)


@transaction.atomic
def users_delete(*, users: Any, actor: Actor) -> None:
    """Delete user accounts (the User admin's delete): refused like `membership_remove` when a namespace
    would lose its last reviewer; otherwise each membership the deletion takes away is audited alike."""
    people = list(users)
    _last_reviewer_refusal(people, actor=actor)
    rows = Membership.objects.filter(user_id__in=[user.pk for user in people]).select_related("user", "namespace")
    namespace_ids = set()
    for row in rows.order_by("namespace__slug", "user__username", "role"):
        _audited(row, actor=actor, action="membership-remove", old=row.role, new=None)
        namespace_ids.add(row.namespace_id)
    for user in people:
        user.delete()
    for namespace_id in sorted(namespace_ids):
        _dependants_follow(namespace_id)
