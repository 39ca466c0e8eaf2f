"""Creating and configuring namespaces (tenants) from a specification."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from knowledge.errors import InvalidInputError
from knowledge.models import Category, IdBlock, Namespace, TextKind
from knowledge.services.namespace_settings import namespace_settings_clean
from knowledge.services.text_kinds import KINDS
from knowledge.services.texts import text_publish_as_system

NAMESPACE_FIELDS = (
    "name",
    "prefix",
    "license",
    "base_url",
    "language",
    "default_budget",
    "knowledge_version",
    "is_public",
    "id_digits",
)
PROFILE_FIELDS = KINDS[TextKind.PROFILE].fields
SET_UP_NOTE = "Set up from {source}."
BLOCKS_OVERLAP = "ID blocks {a} and {b} overlap; each number belongs to one category."


@transaction.atomic
def namespace_apply_spec(*, spec: Mapping[str, Any], source: str = "a namespace specification") -> Namespace:
    """Create or update a namespace, its categories and ID blocks from a dict (see knowledge/demo).

    The profile (title, summary, contact, rules, FAQ) is published as a reviewed text by the system actor.
    """
    try:  # the checks every settings change goes through (a spec file is no exception)
        fields = namespace_settings_clean({name: spec[name] for name in NAMESPACE_FIELDS if name in spec})
    except ValidationError as error:
        wrong = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items())
        raise InvalidInputError(f"{source}: {wrong}") from None
    namespace, _ = Namespace.objects.update_or_create(slug=spec["slug"], defaults=fields)
    categories_apply(namespace=namespace, categories=spec.get("categories", []))
    profile = {name: spec[name] for name in PROFILE_FIELDS if name in spec}
    if profile:
        text_publish_as_system(
            namespace=namespace,
            kind=TextKind.PROFILE,
            content=profile,
            note=SET_UP_NOTE.format(source=source),
        )
        namespace.refresh_from_db()
    return namespace


def categories_apply(*, namespace: Namespace, categories: Sequence[Mapping[str, Any]]) -> None:
    ranges = sorted((start, end) for c in categories for start, end in c.get("blocks", []))
    for (a_start, a_end), (b_start, b_end) in pairwise(ranges):
        if b_start <= a_end:
            raise ValueError(BLOCKS_OVERLAP.format(a=f"{a_start}–{a_end}", b=f"{b_start}–{b_end}"))
    for position, spec in enumerate(categories):
        category, _ = Category.objects.update_or_create(
            namespace=namespace,
            slug=spec["slug"],
            defaults={"name": spec.get("name", spec["slug"]), "purpose": spec.get("purpose", ""), "position": position},
        )
        labels = spec.get("block_labels", [])
        for index, (start, end) in enumerate(spec.get("blocks", [])):
            label = labels[index] if index < len(labels) else ""
            IdBlock.objects.update_or_create(category=category, start=start, defaults={"end": end, "label": label})


def namespace_for_import(
    *,
    slug: str,
    prefix: str,
    digits: int,
    categories: Sequence[str],
    capacity: int = 0,
    base_url: str | None = None,
    contact: str = "",
) -> Namespace:
    """A namespace created by an import: one wide ID block per category, so the file's IDs fit.

    The categories share the numbers of `digits` digits, and each block holds at least `capacity`
    numbers (the file's most lines of one category): numbers past 10**digits are longer IDs, as
    `id_digits` is a minimum width, so 4,000 lines without IDs no longer find their block full.
    Without `base_url` its links point at https://<slug>.example.com until an admin sets the real one.
    """
    size = max(10**digits // max(len(categories), 1), capacity)
    spec = {
        "slug": slug,
        "name": slug,
        "prefix": prefix,
        "title": slug,
        "summary": f"Entries imported into {slug}.",
        "base_url": (base_url or f"https://{slug}.example.com").rstrip("/"),
        "contact": contact,
        "id_digits": digits,
        "categories": [
            {"slug": name, "name": name, "blocks": [[i * size, (i + 1) * size - 1]]}
            for i, name in enumerate(categories)
        ],
    }
    return namespace_apply_spec(spec=spec, source="import_entries")


def doc_pages_apply(*, namespace: Namespace, pages: Sequence[tuple[str, str, str]], source: str) -> None:
    """Publish doc pages set up from files, as the system actor (unchanged pages publish nothing)."""
    for position, (slug, title, body) in enumerate(pages):
        text_publish_as_system(
            namespace=namespace,
            kind=TextKind.DOC,
            key=slug,
            content={"title": title, "body": body, "position": position},
            note=SET_UP_NOTE.format(source=source),
        )


def prompt_packs_apply(*, namespace: Namespace, packs: Mapping[str, str], source: str) -> None:
    """Publish prompt packs set up from files, as the system actor."""
    for scenario, template in packs.items():
        text_publish_as_system(
            namespace=namespace,
            kind=TextKind.PROMPT,
            key=scenario,
            content={"template": template},
            note=SET_UP_NOTE.format(source=source),
        )
