"""Run inside the live server's environment: ``python -m tests.mcp_bridge.live_setup setup|inspect|session``.

``setup`` migrates a fresh database and loads what the live tests drive: the demo namespace (one
entry retired, so a gone ID exists) and a private namespace ``vault`` with more entries than one
``resources/list`` page, whose API key it prints. ``inspect`` prints the feedback rows and what
published content consists of, so a test can show that feedback changed none of it. ``session``
logs the demo's ``admin`` in and prints the session key (for admin requests without a login form).
``publish <title>`` writes, reviews and publishes one new demo entry as the editor and the reviewer
would (the release build is queued on commit, like any publish) and prints its ID.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

LIVE_PASSWORD = "live-demo-password"  # a throwaway user in a throwaway database
VAULT_ENTRIES = 60  # more than one resources/list page (mcp_methods.RESOURCE_PAGE_SIZE = 50)
RETIRED_ID = "EG-003"
RESTRICTED_ID = "VA-900"  # one restricted vault entry: only the restricted key reads it
RESTRICTED_MARK = "VAULTRESTRICTEDMARK"
REPLACEMENT_ID = "EG-101"


def _setup() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from knowledge.models import Entry
    from knowledge.services.api_keys import api_key_create
    from knowledge.services.demo import demo_load
    from knowledge.services.entries import entry_retire
    from knowledge.services.imports import entries_import, entries_parse
    from knowledge.services.namespaces import namespace_for_import
    from knowledge.services.releases import release_build

    call_command("migrate", verbosity=0)
    demo = demo_load(password=LIVE_PASSWORD).namespace
    retired = Entry.objects.get(namespace=demo, public_id=RETIRED_ID)
    entry_retire(
        entry=retired,
        actor=None,
        reason="Merged into the endpoint list.",
        replaced_by=REPLACEMENT_ID,
        check_permission=False,
    )
    release_build(namespace_id=demo.pk)

    vault = namespace_for_import(slug="vault", prefix="VA", digits=3, categories=["fact"])
    vault.is_public = False
    vault.title = "Vault"
    vault.summary = "A private knowledge base for the live tests."
    vault.rules = ["Cite vault facts as [VA-xxx]."]
    vault.save(update_fields=["is_public", "title", "summary", "rules"])
    person = get_user_model().objects.get(username="editor")
    rows = [
        {
            "id": f"VA-{n:03d}",
            "category": "fact",
            "title": f"Vault fact {n}",
            "summary": f"Vault fact number {n} about the secret archive.",
            "body": f"The secret archive holds item {n}.",
            "tags": ["archive"],
            "confidence": 0.9,
            "updated": "2026-08-01",
        }
        for n in range(1, VAULT_ENTRIES + 1)
    ]
    rows.append(
        {
            "id": RESTRICTED_ID,
            "category": "fact",
            "title": "Vault archive keeper",
            "summary": "Who keeps the secret archive.",
            "body": f"The secret archive keeper signs as {RESTRICTED_MARK}.",
            "tags": ["archive"],
            "updated": "2026-08-01",
            "sensitivity": "restricted",
        }
    )
    items = entries_parse(json.dumps(row) for row in rows)
    checker = get_user_model().objects.get(username="reviewer")
    entries_import(namespace=vault, items=items, actor=person, reviewer=checker, publish=True, source="live")
    release_build(namespace_id=vault.pk)
    _, key = api_key_create(namespace=vault, name="live tests", actor=None, check_permission=False)
    _, cleared = api_key_create(
        namespace=vault, name="restricted", actor=None, clearance="restricted", check_permission=False
    )
    return {"vault_key": key, "restricted_key": cleared}


def _inspect() -> dict[str, Any]:
    from knowledge.models import EntryVersion, Feedback, Namespace

    feedback = list(
        Feedback.objects.order_by("pk").values(
            "namespace__slug", "entry_public_id", "query", "kind", "message", "status"
        )
    )
    published = {
        ns.slug: {
            "activeRelease": ns.active_release_id,
            "contentSerial": ns.content_serial,
            "versions": EntryVersion.objects.filter(entry__namespace=ns).count(),
        }
        for ns in Namespace.objects.order_by("slug")
    }
    return {"feedback": feedback, "published": published}


def _session() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    return {"session": client.cookies["sessionid"].value}


def _publish(title: str) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from knowledge.models import Namespace
    from knowledge.services.entries import entry_create
    from knowledge.services.versions import version_approve, version_publish, version_submit
    from tests.factories import content

    users = get_user_model().objects
    editor, reviewer = users.get(username="editor"), users.get(username="reviewer")
    demo = Namespace.objects.get(slug="evergreen")
    version = entry_create(
        namespace=demo, category=demo.categories.get(slug="fact"), content=content(title=title), actor=editor
    )
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    version_publish(version=version, actor=reviewer)
    return {"id": version.entry.public_id}


PATH_RULES = [
    {
        "id": "RU-201",
        "category": "fact",
        "title": "SQL migrations are reversible",
        "summary": "Every SQL migration has a reverse step.",
        "body": "Write the reverse step of every SQL migration and test it.",
        "paths": ["*.sql"],
        "updated": "2026-08-01",
    },
    {
        "id": "RU-202",
        "category": "fact",
        "title": "API handlers validate input",
        "summary": "Handlers validate input and hide stack traces.",
        "body": "API handlers validate their input and never answer with a stack trace.",
        "paths": ["src/api/**/*.py"],
        "confidence": 0.95,
        "updated": "2026-08-01",
    },
    {
        "id": "RU-203",
        "category": "fact",
        "title": "Every change is reviewed",
        "summary": "A second person reviews each change.",
        "body": "A second person reviews every change before it is merged.",
        "updated": "2026-08-01",
    },
]


def _public_namespace(slug: str, prefix: str, rows: Sequence[object]) -> dict[str, Any]:
    """A public namespace of `rows`, imported by the editor, reviewed and built; idempotent."""
    from django.contrib.auth import get_user_model

    from knowledge.models import Namespace
    from knowledge.services.imports import entries_import, entries_parse
    from knowledge.services.namespaces import namespace_for_import
    from knowledge.services.releases import release_build

    if not Namespace.objects.filter(slug=slug).exists():
        namespace = namespace_for_import(slug=slug, prefix=prefix, digits=3, categories=["fact"])
        users = get_user_model().objects
        entries_import(
            namespace=namespace,
            items=entries_parse(json.dumps(row) for row in rows),
            actor=users.get(username="editor"),
            reviewer=users.get(username="reviewer"),
            publish=True,
            source="live",
        )
        release_build(namespace_id=namespace.pk)
    return {"slug": slug}


def _paths() -> dict[str, Any]:
    """A public namespace ``rules`` whose entries carry path globs (issue 16 §2)."""
    return _public_namespace("rules", "RU", PATH_RULES)


# Entries as bench.synthetic makes them from the Cranfield collection: some have an empty body.
BLANK_ROWS = [
    {"id": "BL-001", "category": "fact", "title": "investigation of boundary layer transition", "body": ""},
    {"id": "BL-002", "category": "fact", "title": "boundary layer transition at supersonic speeds", "body": " "},
    {"id": "BL-003", "category": "fact", "title": "heat transfer", "body": "Boundary layer heat transfer rates."},
]


def _blank() -> dict[str, Any]:
    """A public namespace ``blank`` whose entries have empty bodies, as the bench's synthetic ones do."""
    return _public_namespace("blank", "BL", BLANK_ROWS)


def _layers() -> dict[str, Any]:
    """The layered demo (acme, acme-cloud, acme-payments) as load_demo ships it, each release built."""
    from django.contrib.auth import get_user_model

    from knowledge.services.demo import DEMO_USERS
    from knowledge.services.demo_layers import demo_layers_load
    from knowledge.services.releases import release_build

    users = get_user_model().objects
    layered = demo_layers_load(people={name: users.get(username=name) for name, _ in DEMO_USERS})
    for namespace in layered.namespaces:
        release_build(namespace_id=namespace.pk)
    return {"slugs": [namespace.slug for namespace in layered.namespaces]}


def main(command: str, *args: str) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.test")
    django.setup()
    commands: dict[str, Callable[..., dict[str, Any]]] = {
        "setup": _setup,
        "inspect": _inspect,
        "session": _session,
        "publish": _publish,
        "paths": _paths,
        "layers": _layers,
        "blank": _blank,
    }
    result = commands[command](*args)
    sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
