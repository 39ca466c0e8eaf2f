"""The layered demo (issue 16): a company namespace and two product namespaces built on it, one private.

``acme`` holds what every product shares (policies, engineering rules, some for certain files only);
``acme-cloud`` (public) and ``acme-payments`` (private) build on it: each adds its own entries, and
Acme Cloud overrides Acme's support hours. ``manage.py load_demo`` loads it after the main demo;
running it again adds only what is missing and changes nothing that exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from knowledge.models import Membership, Namespace, Role, TextKind
from knowledge.services.demo import new_lines, text_missing
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.namespaces import namespace_apply_spec
from knowledge.services.texts import text_publish_as_system

LAYERS_SPEC = Path(__file__).resolve().parent.parent / "demo" / "layers" / "layers.json"


@dataclass(frozen=True, slots=True)
class LayeredDemo:
    """The namespaces in build order: every base before the namespaces built on it."""

    namespaces: tuple[Namespace, ...]


@transaction.atomic
def demo_layers_load(*, people: dict[str, Any]) -> LayeredDemo:
    """Create the three namespaces, their people, entries and bases, or add what they lack (`people`: editor,
    reviewer, admin): what exists, editors' changes included, stays as it is."""
    spec = json.loads(LAYERS_SPEC.read_text(encoding="utf-8"))
    loaded: dict[str, Namespace] = {}
    for item in spec["namespaces"]:
        namespace = Namespace.objects.filter(slug=item["slug"]).first() or namespace_apply_spec(
            spec=item, source="the layered demo"
        )
        for username, role in (("editor", Role.EDITOR), ("reviewer", Role.REVIEWER), ("admin", Role.ADMIN)):
            Membership.objects.get_or_create(user=people[username], namespace=namespace, role=role)
        loaded[namespace.slug] = namespace
    # Bases first, and each namespace's entries after its bases' (spec order): an override must name a
    # live entry of a base when it is written.
    for item in spec["namespaces"]:
        if not text_missing(loaded[item["slug"]], TextKind.BASES):
            continue
        text_publish_as_system(
            namespace=loaded[item["slug"]],
            kind=TextKind.BASES,
            content={"bases": item["bases"]},
            note="The layered demo's bases (knowledge/demo/layers/layers.json).",
        )
    for item in spec["namespaces"]:
        namespace = loaded[item["slug"]]
        rows = (json.dumps(row, ensure_ascii=False) for row in spec["entries"][namespace.slug])
        items = new_lines(namespace, entries_parse(rows))
        entries_import(
            namespace=namespace,
            items=items,
            actor=people["editor"],
            reviewer=people["reviewer"],
            publish=True,
            source="demo",
        )
    return LayeredDemo(namespaces=tuple(loaded[item["slug"]] for item in spec["namespaces"]))
