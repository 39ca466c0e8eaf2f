"""A namespace's settings and host names: changed only by its own admins, each change audited field by field.

Settings decide who reads a namespace and how (public or private, single-person approval, rate
limit, base URL, host names); the audit trail keeps who changed which field from what to what.
The admin form and both services check values with `namespace_settings_clean`, so nothing is stored
that the site would then serve wrongly (links, the match gate) or ignore (a rate limit it cannot parse).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from evergreen_site.settings.env import RateSpecError, parse_rate
from knowledge.actors import Actor
from knowledge.errors import ConflictError, InvalidInputError
from knowledge.models import Namespace, NamespaceHost, Role
from knowledge.retrieval.index import LEAD_CAP, LEAD_WEIGHT, RAREST_BONUS
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

# The highest gate score (knowledge.retrieval.index): every passage term covered, the lead bonus at its
# cap and the rarest-word bonus. Gate scores under 0 never match (the coverage penalty), so a threshold
# outside [0, THRESHOLD_MAX] would match every hit that covers the topic at all, or nothing.
THRESHOLD_MAX: Final = 1.0 + LEAD_WEIGHT * math.log(LEAD_CAP) + RAREST_BONUS
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")  # BCP 47's shape: en, zh-CN, zh-Hans-CN
_SEMVER = re.compile(r"[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}")  # what bump_knowledge_version reads

CONTROL_CHARACTERS: Final = "Control characters (such as {char}) are not allowed here; write plain text."
THRESHOLD_RANGE: Final = (
    f"Enter a number from 0 to {math.floor(THRESHOLD_MAX * 1000) / 1000:g} (the range of match scores), "
    "or leave it empty so that each release calibrates its own."
)
RATE_INVALID: Final = (
    "“{value}” is not a rate limit: write a rate such as 120/min, 10/s, 1000/hour or 30/10s, 0 to turn "
    "the limit off, or leave it empty for EVERGREEN_RATE_LIMIT."
)
BASE_URL_INVALID: Final = (
    "Enter the public http:// or https:// address of the namespace with a host name, such as "
    "https://docs.example.com (no user name, query or #fragment)."
)
LANGUAGE_INVALID: Final = "“{value}” is not a language tag: use a BCP 47 tag such as en, de or zh-CN."
VERSION_INVALID: Final = "“{value}” is not a version: write major.minor.patch, such as 1.0.0."


def settable_fields() -> frozenset[str]:
    """The settings `namespace_update` accepts: every editable column but the slug and the ID prefix."""
    fields = Namespace._meta.concrete_fields
    return frozenset(f.name for f in fields if f.editable and not f.primary_key) - FIXED_FIELDS


def _plain(value: Any) -> Any:
    """Text without control characters (Unicode category Cc): NUL cannot be stored, others corrupt output."""
    for char in str(value):
        if unicodedata.category(char) == "Cc":
            raise ValidationError(CONTROL_CHARACTERS.format(char=f"U+{ord(char):04X}"))
    return value


def _threshold(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= THRESHOLD_MAX:
        raise ValidationError(THRESHOLD_RANGE)
    return float(value)


def _rate_limit(value: Any) -> str:
    """The parser EVERGREEN_RATE_LIMIT goes through (empty: the global limit), so the gateway never ignores it."""
    text = str(_plain(value)).strip()
    if not text:
        return ""
    try:
        rate = parse_rate(text)
    except RateSpecError:
        raise ValidationError(RATE_INVALID.format(value=text)) from None
    if rate.window < 1:  # "120/0min"
        raise ValidationError(RATE_INVALID.format(value=text))
    return text


def _base_url(value: Any) -> str:
    """Links in llms.txt, context.json and the agent cards are this plus a path: http(s) and a host."""
    text = str(_plain(value)).strip()
    try:
        parts = urlsplit(text)
        has_host = bool(parts.hostname) and "@" not in parts.netloc and parts.port != 0
    except ValueError:  # brackets around something that is not an IPv6 address, a port that is not a number
        raise ValidationError(BASE_URL_INVALID) from None
    if parts.scheme not in {"http", "https"} or not has_host or any(char in text for char in "?# "):
        raise ValidationError(BASE_URL_INVALID)
    return text.rstrip("/")


def _language(value: Any) -> str:
    text = str(value).strip()
    if not _LANGUAGE.fullmatch(text):
        raise ValidationError(LANGUAGE_INVALID.format(value=text))
    return text


def _knowledge_version(value: Any) -> str:
    text = str(value).strip()
    if not _SEMVER.fullmatch(text):
        raise ValidationError(VERSION_INVALID.format(value=text))
    return text


# Checks beyond the model's own field validation (lengths, choices, ranges of whole numbers), each
# returning the value to store; Namespace.clean_fields still runs after them.
SETTING_CHECKS: Final[Mapping[str, Callable[[Any], Any]]] = {
    "name": _plain,
    "license": _plain,
    "match_threshold_note": _plain,
    "match_threshold": _threshold,
    "rate_limit": _rate_limit,
    "base_url": _base_url,
    "language": _language,
    "knowledge_version": _knowledge_version,
}


def namespace_settings_clean(values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` checked and normalised; raises ValidationError with a message per field that is wrong.

    The admin form shows the messages on its fields; the services turn them into InvalidInputError.
    """
    cleaned = dict(values)
    errors: dict[str, list[str]] = {}
    for name, check in SETTING_CHECKS.items():
        if name in cleaned:
            try:
                cleaned[name] = check(cleaned[name])
            except ValidationError as error:
                errors[name] = error.messages
    if errors:
        raise ValidationError(errors)
    return cleaned


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
    try:
        namespace = Namespace(**namespace_settings_clean(fields))
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
    try:
        changes = namespace_settings_clean(changes)
    except ValidationError as error:
        raise _invalid(error) from error
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
