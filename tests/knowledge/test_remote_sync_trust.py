"""sync_entries --server is as lossless as a local sync: the trust fields go through the management API too."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from knowledge.models import EntryVersion, Namespace, NamespaceBase, Role
from knowledge.services.content import VersionContent
from knowledge.services.entries import entry_create
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.personal_tokens import personal_token_create
from tests.factories import NamespaceFactory, UserFactory, content, membership
from tests.knowledge.test_workflow import publish

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def exported(tmp_path: Path, editor: Any, reviewer: Any, ns_a: Namespace) -> tuple[Path, EntryVersion, Namespace]:
    """alpha (built on company) with one entry holding every field, exported; and company."""
    company = NamespaceFactory.create(slug="company", prefix="CO")
    line = '{"id": "CO-101", "category": "fact", "title": "Hours", "body": "Weekdays.", "updated": "2026-08-01"}'
    entries_import(namespace=company, items=entries_parse([line]), actor=None, publish=True)
    NamespaceBase.objects.create(namespace=ns_a, base=company, position=0)
    full = content(
        summary="Everything set.",
        tags=["token", "budget"],
        aliases=["budget tiers"],
        links=["CO-101"],
        confidence=Decimal("0.73"),
        updated=date(2026, 8, 20),
        sensitivity="internal",
        review_by=date(2026, 11, 1),
        valid_until=date(2027, 1, 31),
        paths=["src/**/*.py"],
        overrides="CO-101",
    )
    version = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=full, actor=editor)
    publish(version, editor, reviewer)
    kb = tmp_path / "kb"
    run("export_entries", str(kb), "--namespace", "alpha", "--format", "markdown")
    return kb, version, company


def test_every_field_survives_export_and_a_remote_sync_into_another_namespace(
    exported: tuple[Path, EntryVersion, Namespace], manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb, version, company = exported
    copy = NamespaceFactory.create(slug="copy", prefix="AL", id_digits=version.entry.namespace.id_digits)
    copy_editor = membership(UserFactory(username="copy-editor"), copy, Role.EDITOR)
    NamespaceBase.objects.create(namespace=copy, base=company, position=0)
    _, raw = personal_token_create(user=copy_editor, name="ci", namespaces=[copy], scope="editor", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)

    run("sync_entries", str(kb), "--namespace", "copy", "--server", manage_server)

    synced = EntryVersion.objects.get(entry__namespace=copy)
    for name in VersionContent.__slots__:
        assert getattr(synced, name) == getattr(version, name), name
    assert synced.content_hash == version.content_hash
    again = run("sync_entries", str(kb), "--namespace", "copy", "--server", manage_server)
    assert "0 new, 0 change, 0 submit, 1 pending" in again


def test_a_remote_sync_proposes_a_change_of_sensitivity_for_review(
    exported: tuple[Path, EntryVersion, Namespace],
    editor: Any,
    ns_a: Namespace,
    manage_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb, version, _ = exported
    _, raw = personal_token_create(user=editor, name="ci", namespaces=[ns_a], scope="editor", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)
    path = kb / f"{version.entry.public_id}.md"
    assert "sensitivity: internal" in path.read_text()
    path.write_text(path.read_text().replace("sensitivity: internal", "sensitivity: restricted"))

    out = run("sync_entries", str(kb), "--namespace", "alpha", "--server", manage_server)

    assert "changed (sensitivity): draft v2 submitted for review" in out
    proposed = EntryVersion.objects.get(entry=version.entry, number=2)
    assert (proposed.state, proposed.sensitivity, proposed.author) == ("in_review", "restricted", editor)
    version.refresh_from_db()
    assert version.sensitivity == "internal"  # the live version serves until a reviewer publishes
