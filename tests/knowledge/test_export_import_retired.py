"""export → import keeps retired entries retired: their IDs answer 410 and are never allocated again (seed §6)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Entry, Namespace, VersionState
from knowledge.selectors.exports import entries_export_rows
from knowledge.services.entries import entry_retire
from knowledge.services.imports import ImportFileError, entries_parse
from tests.factories import NamespaceFactory, committed
from tests.knowledge.test_imports import run, write

pytestmark = pytest.mark.django_db

ROWS: list[dict[str, Any]] = [
    {"id": "TB-000", "title": "Tenant B keeps invoices", "body": "Invoices are kept for ten years."},
    {"id": "TB-001", "title": "Tenant B ships on Fridays", "body": "Releases go out on Fridays."},
    {"id": "TB-002", "title": "Tenant B ships on Mondays", "body": "Releases go out on Mondays."},
]


def refused(*args: Any) -> str:
    err = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(*args, stdout=StringIO(), stderr=err)
    return f"{raised.value}\n{err.getvalue()}"


@pytest.fixture
def tenantb(tmp_path: Path) -> Namespace:
    """TB-001 is retired in favour of TB-002, as `retire_entry --replaced-by` leaves it."""
    namespace = NamespaceFactory.create(slug="tenantb", prefix="TB")
    run("import_entries", str(write(tmp_path, ROWS, "source.jsonl")), "--namespace", "tenantb", "--publish")
    entry = Entry.objects.get(namespace=namespace, public_id="TB-001")
    with committed():
        entry_retire(entry=entry, actor=None, reason="obsolete", replaced_by="TB-002", check_permission=False)
    return namespace


def export(tmp_path: Path, slug: str, name: str = "out.jsonl") -> Path:
    path = tmp_path / name
    call_command("export_entries", "--namespace", slug, str(path), stderr=StringIO())
    return path


def test_export_writes_retired_entries_with_their_tombstone(tenantb: Namespace) -> None:
    rows = {row["id"]: row for row in entries_export_rows(namespace=tenantb, include_retired=True)}

    assert sorted(rows) == ["TB-000", "TB-001", "TB-002"]
    assert rows["TB-001"]["retireReason"] == "obsolete"
    assert rows["TB-001"]["replacedBy"] == "TB-002"
    assert rows["TB-001"]["retiredAt"].endswith("Z")
    assert rows["TB-001"]["title"] == "Tenant B ships on Fridays"
    assert "retiredAt" not in rows["TB-000"]


def test_a_markdown_export_still_leaves_retired_entries_out(tenantb: Namespace, tmp_path: Path) -> None:
    folder = str(tmp_path / "kb")
    call_command("export_entries", "--namespace", "tenantb", "--format", "markdown", folder, stderr=StringIO())

    assert sorted(p.name for p in (tmp_path / "kb").iterdir()) == ["TB-000.md", "TB-002.md"]


def test_a_copy_keeps_the_retired_id_gone_and_never_allocates_it(
    client: Any, tenantb: Namespace, tmp_path: Path
) -> None:
    """QA finding 2: the copy gave TB-001, shown to agents as 410 Gone, to an unrelated new fact."""
    exported = export(tmp_path, "tenantb")
    copy_args = ("--namespace", "tbcopy", "--create-namespace", "--prefix", "TB", "--publish")

    out = run("import_entries", str(exported), *copy_args)

    assert "3 created" in out and "1 retired" in out
    copy = Entry.objects.get(namespace__slug="tbcopy", public_id="TB-001")
    assert copy.retired_at is not None
    assert (copy.retire_reason, copy.replaced_by) == ("obsolete", "TB-002")
    gone = client.get("/t/tbcopy/api/entries/TB-001")
    assert gone.status_code == 410
    assert gone.json()["reason"] == "obsolete" and gone.json()["replacedBy"] == "TB-002"
    assert gone.json()["title"] == "Tenant B ships on Fridays"
    assert client.get("/t/tbcopy/api/entries/TB-000").status_code == 200

    new = write(tmp_path, [{"title": "New fact after copy", "body": "which ID will this get"}], "new.jsonl")
    run("import_entries", str(new), "--namespace", "tbcopy", "--publish")
    created = Entry.objects.get(namespace__slug="tbcopy", versions__title="New fact after copy")
    assert created.public_id == "TB-003"

    # The copy exports what the original exported, tombstone included.
    original = json.loads(exported.read_text().splitlines()[1])
    again = json.loads(export(tmp_path, "tbcopy", "again.jsonl").read_text().splitlines()[1])
    assert again == original


def test_reimporting_a_retired_line_changes_nothing(tenantb: Namespace, tmp_path: Path) -> None:
    exported = export(tmp_path, "tenantb")

    assert "0 created, 0 changed, 3 unchanged" in run("import_entries", str(exported), "--namespace", "tenantb")


def test_a_retired_line_without_publish_still_reserves_its_id(tenantb: Namespace, tmp_path: Path) -> None:
    exported = export(tmp_path, "tenantb")

    run("import_entries", str(exported), "--namespace", "draftcopy", "--create-namespace", "--prefix", "TB")

    entry = Entry.objects.get(namespace__slug="draftcopy", public_id="TB-001")
    assert entry.retired_at is not None and entry.live_version is None
    assert list(entry.versions.values_list("state", flat=True)) == [VersionState.WITHDRAWN]


def test_a_retired_line_for_a_live_entry_is_refused_naming_the_id(tenantb: Namespace, tmp_path: Path) -> None:
    NamespaceFactory.create(slug="other", prefix="TB")
    run("import_entries", str(write(tmp_path, ROWS, "live.jsonl")), "--namespace", "other", "--publish")
    exported = export(tmp_path, "tenantb")

    message = refused("import_entries", str(exported), "--namespace", "other", "--publish")

    assert "TB-001 is retired in the file but live in this namespace" in message
    assert Entry.objects.get(namespace__slug="other", public_id="TB-001").retired_at is None


def test_a_replacement_the_namespace_and_the_file_lack_is_refused(tmp_path: Path) -> None:
    NamespaceFactory.create(slug="target", prefix="TB")
    line = {**ROWS[1], "retiredAt": "2026-01-02T03:04:05Z", "retireReason": "obsolete", "replacedBy": "TB-009"}

    message = refused("import_entries", str(write(tmp_path, [line])), "--namespace", "target")

    assert "TB-009" in message and "replacedBy" in message
    assert not Entry.objects.filter(namespace__slug="target").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"retiredAt": "2026-01-02T03:04:05Z"}, "“retireReason” is required"),
        ({"retiredAt": "yesterday", "retireReason": "old"}, "“retiredAt” must be a date and time"),
        ({"retiredAt": "2026-01-02T03:04:05", "retireReason": "old"}, "“retiredAt” must be a date and time"),
        ({"retireReason": "old"}, "only with “retiredAt”"),
        ({"retiredAt": "2026-01-02T03:04:05Z", "retireReason": "old", "replacedBy": "nope"}, "“replacedBy” must"),
    ],
)
def test_bad_retirement_fields_are_line_errors(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ImportFileError) as raised:
        entries_parse([json.dumps({**ROWS[1], **extra})])

    assert raised.value.errors[0][0] == 1
    assert message in raised.value.errors[0][1]


def test_a_retired_line_needs_its_id() -> None:
    line = {"title": "t", "body": "b", "retiredAt": "2026-01-02T03:04:05Z", "retireReason": "old"}

    with pytest.raises(ImportFileError, match="needs its “id”"):
        entries_parse([json.dumps(line)])
