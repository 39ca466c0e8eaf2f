"""A namespace's settings and host names: changed only by its own admins, each change audited field by field.

Settings decide who reads a namespace and how (public or private, single-person approval, rate
limit, base URL, host names); the audit trail keeps who changed which field from what to what.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from knowledge.actors import Actor
from knowledge.errors import ConflictError, InvalidInputError
from knowledge.models import Namespace, NamespaceHost, Role
from knowledge.services.access import refusal, require_role
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build
from knowledge.services.layers import layers_privacy_check

# Public IDs and URLs are built from these: they never change once the namespace exists.
FIXED_FIELDS: Final = frozenset({"slug", "prefix"})
NOTE_VALUE_MAX: Final = 120

NOT_A_SETTING: Final = "“{field}” is not a namespace setting that can be changed."
ONLY_SUPERUSERS_CREATE: Final = "Only a superuser creates namespaces."
HOST_TAKEN: Final = "The host name “{host}” already routes to a namespace."


def settable_fields() -> frozenset[str]:
    """The settings `namespace_update` accepts: every editable column but the slug and the ID prefix."""
    fields = Namespace._meta.concrete_fields
    return frozenset(f.name for f in fields if f.editable and not f.primary_key) - FIXED_FIELDS


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= NOTE_VALUE_MAX else text[: NOTE_VALUE_MAX - 1] + "…"


def _invalid(error: ValidationError) -> InvalidInputError:
    return InvalidInputError("; ".join(f"{field}: {' '.join(m)}" for field, m in error.message_dict.items()))


@transaction.atomic
def namespace_create(*, actor: Actor, fields: Mapping[str, Any]) -> Namespace:
    """A new tenant; only superusers create them (a namespace admin runs one, never makes one)."""
    if not (getattr(actor, "is_active", False) and getattr(actor, "is_superuser", False)):
        raise refusal(ONLY_SUPERUSERS_CREATE, reason="not_superuser", actor=actor)
    namespace = Namespace(**fields)
    try:
        namespace.full_clean()
    except ValidationError as error:
        raise _invalid(error) from error
    namespace.save()
    audit_record(namespace=namespace, actor=actor, action="namespace-create", note=namespace.slug)
    return namespace


@transaction.atomic
def namespace_update(*, namespace: Namespace, actor: Actor, changes: Mapping[str, Any]) -> Namespace:
    """Change settings; each changed field gets an audit record with its old and new value.

    Needs the namespace-admin role of this namespace (superusers too). Anything a release is built
    from may have changed, so a build is queued when something did.
    """
    require_role(user=actor, namespace=namespace, role=Role.ADMIN)
    unknown = set(changes) - settable_fields()
    if unknown:
        raise InvalidInputError(NOT_A_SETTING.format(field=", ".join(sorted(unknown))))
    locked = Namespace.objects.select_for_update().get(pk=namespace.pk)
    before = {name: getattr(locked, name) for name in changes}
    changed = [name for name, value in changes.items() if before[name] != value]
    if not changed:
        return locked
    if "is_public" in changed:
        layers_privacy_check(namespace=locked, is_public=bool(changes["is_public"]))
    for name in changed:
        setattr(locked, name, changes[name])
    try:
        locked.clean_fields(exclude=[f.name for f in Namespace._meta.fields if f.name not in changed])
    except ValidationError as error:
        raise _invalid(error) from error
    locked.save(update_fields=changed)
    for name in changed:
        audit_record(
            namespace=locked,
            actor=actor,
            action="namespace-setting",
            field=name,
            old_value=before[name],
            new_value=changes[name],
            note=f"{name}: {_shown(before[name])} → {_shown(changes[name])}",
        )
    release_request_build(namespace=locked, reason="settings")
    return locked


def _host_saved(host: NamespaceHost) -> NamespaceHost:
    host.clean()
    try:
        with transaction.atomic():
            host.save()
    except IntegrityError as error:
        raise ConflictError(HOST_TAKEN.format(host=host.host)) from error
    return host


def _host_audited(*, namespace: Namespace, actor: Actor, action: str, old: str | None, new: str | None) -> None:
    audit_record(
        namespace=namespace,
        actor=actor,
        action=action,
        field="hosts",
        old_value=old,
        new_value=new,
        note=f"host: {old or '—'} → {new or '—'}",
    )


@transaction.atomic
def namespace_host_add(*, namespace: Namespace, host: str, actor: Actor) -> NamespaceHost:
    """Route one more host name to the namespace (a host names one namespace at most)."""
    require_role(user=actor, namespace=namespace, role=Role.ADMIN)
    added = _host_saved(NamespaceHost(namespace=namespace, host=host))
    _host_audited(namespace=namespace, actor=actor, action="namespace-host-add", old=None, new=added.host)
    return added


@transaction.atomic
def namespace_host_change(*, host: NamespaceHost, value: str, actor: Actor) -> NamespaceHost:
    locked = NamespaceHost.objects.select_for_update().select_related("namespace").get(pk=host.pk)
    require_role(user=actor, namespace=locked.namespace, role=Role.ADMIN)
    old = locked.host
    locked.host = value
    changed = _host_saved(locked)
    if changed.host != old:
        _host_audited(
            namespace=locked.namespace, actor=actor, action="namespace-host-change", old=old, new=changed.host
        )
    return changed


@transaction.atomic
def namespace_host_remove(*, host: NamespaceHost, actor: Actor) -> None:
    locked = NamespaceHost.objects.select_for_update().select_related("namespace").get(pk=host.pk)
    require_role(user=actor, namespace=locked.namespace, role=Role.ADMIN)
    locked.delete()
    _host_audited(namespace=locked.namespace, actor=actor, action="namespace-host-remove", old=locked.host, new=None)
