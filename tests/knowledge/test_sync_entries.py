"""Docs as code: export_entries --format markdown and sync_entries, round trips, proposals, --check, bad files."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.datasets import DATASETS  # EVERGREEN_DATASETS, else ../shared/datasets
from knowledge.management.commands import sync_entries as sync_command
from knowledge.models import AuditRecord, Entry, EntryVersion, Namespace, NamespaceBase, Role, VersionState
from knowledge.services.content import VersionContent
from knowledge.services.demo import demo_load
from knowledge.services.entries import entry_create
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.personal_tokens import personal_token_create
from knowledge.services.versions import version_draft_for_entry, version_save, version_submit
from tests.factories import NamespaceFactory, UserFactory, content, membership
from tests.knowledge.test_workflow import publish

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.md"))}


def copy_of(prefix: str, slug: str = "copy") -> tuple[Namespace, Any]:
    namespace = NamespaceFactory.create(slug=slug, prefix=prefix, id_digits=3 if prefix == "EG" else 4)
    return namespace, membership(UserFactory(username=f"{slug}-editor"), namespace, Role.EDITOR)


def test_the_demo_round_trips_byte_for_byte(tmp_path: Path) -> None:
    demo = demo_load(password="demo-password").namespace
    first, second = tmp_path / "first", tmp_path / "second"
    run("export_entries", str(first), "--namespace", demo.slug, "--format", "markdown")
    exported = files_of(first)
    assert len(exported) == Entry.objects.filter(namespace=demo, retired_at__isnull=True).count() >= 15
    out, _ = run("sync_entries", str(first), "--namespace", demo.slug, "--check")
    assert f"0 new, 0 change, 0 submit, 0 pending, {len(exported)} unchanged, 0 missing" in out

    copy, editor = copy_of("EG")
    out, _ = run("sync_entries", str(first), "--namespace", "copy", "--user", editor.username)
    assert f"{len(exported)} new" in out
    assert set(EntryVersion.objects.filter(entry__namespace=copy).values_list("state", flat=True)) == {"in_review"}
    run("export_entries", str(second), "--namespace", "copy", "--format", "markdown", "--include-drafts")
    assert files_of(second) == exported
    out, _ = run("sync_entries", str(first), "--namespace", "copy", "--user", editor.username)
    assert f"{len(exported)} pending" in out  # proposed once, waiting for review: nothing new written


@pytest.mark.slow
@pytest.mark.skipif(not (DATASETS / "cranfield").exists(), reason="the shared datasets are not beside the project")
def test_cranfield_round_trips_byte_for_byte(tmp_path: Path) -> None:
    source, _ = copy_of("CRAN", slug="cranfield")
    lines = (DATASETS / "cranfield" / "entries.jsonl").read_text(encoding="utf-8").splitlines()
    entries_import(namespace=source, items=entries_parse(lines), actor=None, publish=True)
    first, second = tmp_path / "first", tmp_path / "second"
    run("export_entries", str(first), "--namespace", "cranfield", "--format", "markdown")
    exported = files_of(first)
    assert len(exported) == 1400
    out, _ = run("sync_entries", str(first), "--namespace", "cranfield", "--check")
    assert "1400 unchanged" in out

    _, editor = copy_of("CRAN")
    run("sync_entries", str(first), "--namespace", "copy", "--user", editor.username)
    run("export_entries", str(second), "--namespace", "copy", "--format", "markdown", "--include-drafts")
    assert files_of(second) == exported


@pytest.fixture
def folder(tmp_path: Path, editor: Any, reviewer: Any, ns_a: Namespace) -> Path:
    """alpha with one published entry, exported to a folder."""
    version = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)
    publish(version, editor, reviewer)
    out = tmp_path / "kb"
    run("export_entries", str(out), "--namespace", "alpha", "--format", "markdown")
    return out


def test_an_edited_file_becomes_a_draft_submitted_for_review(folder: Path, editor: Any) -> None:
    path = folder / "AL-000.md"
    text = path.read_text()
    path.write_text(text.replace("summary: Agents ask", "summary: Every agent asks"))
    planned, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--dry-run")
    assert "AL-000       would propose (summary) as a draft for review" in planned
    assert EntryVersion.objects.count() == 1

    with pytest.raises(CommandError) as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--check")
    assert failure.value.returncode == 1

    out, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "changed (summary): draft v2 submitted for review" in out
    proposed = EntryVersion.objects.get(number=2)
    assert proposed.state == VersionState.IN_REVIEW
    assert proposed.summary.startswith("Every agent asks")
    assert proposed.author == editor
    entry = Entry.objects.get()
    assert entry.live_version is not None and entry.live_version.number == 1  # nothing published by the sync
    assert list(AuditRecord.objects.filter(version=proposed).values_list("action", flat=True).order_by("pk")) == [
        "create",
        "edit",
        "submit",
    ]
    again, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "v2 with this content is in_review; waiting for a reviewer" in again
    assert EntryVersion.objects.count() == 2


def test_a_new_file_gets_the_next_id_and_is_found_by_title_next_time(folder: Path, editor: Any) -> None:
    (folder / "new-rule.md").write_text("---\ntitle: Quote figures exactly\ncategory: rule\n---\nQuote them.\n")
    out, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "AL-200       new entry, submitted for review  (new-rule.md)" in out
    again, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "AL-200       v1 with this content is in_review" in again
    assert Entry.objects.count() == 2


BAD = {
    "no-front-matter.md": "Just text.\n",
    "unclosed.md": "---\ntitle: x\n",
    "bad-yaml.md": "---\ntitle: [unclosed\n---\nbody\n",
    "unknown-key.md": "---\ntitle: x\ncolour: red\n---\nbody\n",
    "confidence.md": "---\ntitle: x\ncategory: fact\nconfidence: 2\n---\nbody\n",
    "category.md": "---\ntitle: x\ncategory: nope\n---\nbody\n",
    "body-key.md": "---\ntitle: x\nbody: y\n---\n",
    "tags.md": "---\ntitle: x\ncategory: fact\ntags: one\n---\nbody\n",
}


def test_bad_files_are_named_with_their_reason_and_nothing_is_written(folder: Path, editor: Any) -> None:
    for name, text in BAD.items():
        (folder / name).write_text(text)
    (folder / "AL-000.md").write_text((folder / "AL-000.md").read_text().replace("title:", "title: Changed"))
    before = (EntryVersion.objects.count(), AuditRecord.objects.count())
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was proposed"):
        call_command(
            "sync_entries",
            str(folder),
            "--namespace",
            "alpha",
            "--user",
            editor.username,
            stderr=err,
            stdout=StringIO(),
        )
    lines = err.getvalue()
    expected = {
        "no-front-matter.md": "must start with a front-matter block",
        "unclosed.md": "not closed",
        "bad-yaml.md": "not valid YAML",
        "unknown-key.md": "unknown field(s): colour",
        "confidence.md": "between 0 and 1",
        "body-key.md": "not a front-matter key",
        "tags.md": "“tags” must be a list of strings",
    }
    for name, reason in expected.items():
        assert f"{name}: " in lines and reason in lines, (name, lines)
    assert (EntryVersion.objects.count(), AuditRecord.objects.count()) == before


def test_an_unknown_category_is_refused_per_file(folder: Path, editor: Any) -> None:
    (folder / "category.md").write_text(BAD["category.md"])
    err = StringIO()
    with pytest.raises(CommandError):
        call_command(
            "sync_entries",
            str(folder),
            "--namespace",
            "alpha",
            "--user",
            editor.username,
            stderr=err,
            stdout=StringIO(),
        )
    assert "category.md: unknown category “nope”" in err.getvalue()


def test_writing_needs_an_editor_of_the_namespace(folder: Path, outsider: Any) -> None:
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("summary: Agents", "summary: Some agents"))
    with pytest.raises(CommandError, match="not an editor"):
        run("sync_entries", str(folder), "--namespace", "alpha", "--user", outsider.username)
    assert EntryVersion.objects.count() == 1
    with pytest.raises(CommandError, match="--user is required"):
        run("sync_entries", str(folder), "--namespace", "alpha")


def test_entries_missing_from_the_folder_are_reported_never_retired(folder: Path, editor: Any) -> None:
    (folder / "AL-000.md").unlink()
    out, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "AL-000       in the namespace, not in the folder (never retired from here)" in out
    assert Entry.objects.get().retired_at is None


def test_a_remote_sync_proposes_through_the_api_as_the_tokens_owner(
    folder: Path, editor: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = personal_token_create(user=editor, name="ci", namespaces=[ns_a], scope="editor", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("summary: Agents ask", "summary: Every agent asks"))
    (folder / "new-rule.md").write_text("---\ntitle: Quote figures exactly\ncategory: rule\n---\nQuote them.\n")
    remote = ("--namespace", "alpha", "--server", manage_server)
    with pytest.raises(CommandError) as failure:
        run("sync_entries", str(folder), *remote, "--check")
    assert failure.value.returncode == 1

    out, _ = run("sync_entries", str(folder), *remote)
    assert "AL-000       changed (summary): draft v2 submitted for review" in out
    assert "AL-200       new entry, submitted for review  (new-rule.md)" in out
    proposed = EntryVersion.objects.get(entry__public_id="AL-000", number=2)
    assert (proposed.state, proposed.author, proposed.summary[:16]) == ("in_review", editor, "Every agent asks")
    assert AuditRecord.objects.filter(version=proposed, action="submit", actor=editor).exists()
    again, _ = run("sync_entries", str(folder), *remote)
    assert "0 new, 0 change, 0 submit, 2 pending" in again


def test_a_remote_sync_with_a_read_only_token_is_refused_cleanly(
    folder: Path, editor: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = personal_token_create(user=editor, name="ro", namespaces=[ns_a], scope="read", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("summary: Agents ask", "summary: Every agent asks"))
    with pytest.raises(CommandError, match="token_scope"):
        run("sync_entries", str(folder), "--namespace", "alpha", "--server", manage_server)
    assert EntryVersion.objects.count() == 1
    monkeypatch.delenv("EVERGREEN_TOKEN")
    with pytest.raises(CommandError, match="Set EVERGREEN_TOKEN"):
        run("sync_entries", str(folder), "--namespace", "alpha", "--server", manage_server)


def bad_files_of(folder: Path, *args: str) -> str:
    """The stderr of a sync that refuses the folder (every bad file, one line each)."""
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was proposed"):
        call_command("sync_entries", str(folder), "--namespace", "alpha", *args, stderr=err, stdout=StringIO())
    return err.getvalue()


def test_impossible_dates_and_non_finite_confidences_are_bad_files_not_tracebacks(folder: Path) -> None:
    (folder / "date.md").write_text("---\ntitle: x\ncategory: fact\nupdated: 2026-02-30\n---\nbody\n")
    (folder / "nan.md").write_text("---\ntitle: y\ncategory: fact\nconfidence: .nan\n---\nbody\n")
    (folder / "inf.md").write_text("---\ntitle: z\ncategory: fact\nconfidence: .inf\n---\nbody\n")
    lines = bad_files_of(folder, "--dry-run")
    assert "date.md: the front matter holds an impossible date (day is out of range for month)" in lines
    assert "nan.md: “confidence” must be a number between 0 and 1" in lines
    assert "inf.md: “confidence” must be a number between 0 and 1" in lines
    assert EntryVersion.objects.count() == 1


def test_every_field_survives_export_and_sync_into_another_namespace(
    tmp_path: Path, editor: Any, reviewer: Any, ns_a: Namespace
) -> None:
    company = NamespaceFactory.create(slug="company", prefix="CO")
    line = (
        '{"id": "CO-101", "category": "fact", "title": "Support hours", "body": "Weekdays.", "updated": "2026-08-01"}'
    )
    entries_import(namespace=company, items=entries_parse([line]), actor=None, publish=True)
    NamespaceBase.objects.create(namespace=ns_a, base=company, position=0)
    full = content(
        summary="Everything set.",
        tags=["token", "budget"],
        aliases=["budget tiers"],
        links=["AL-001", "CO-101"],
        confidence=Decimal("0.73"),
        updated=date(2026, 8, 20),
        sensitivity="internal",
        review_by=date(2026, 11, 1),
        valid_until=date(2027, 1, 31),
        paths=["src/**/*.py", "*.sql"],
        overrides="CO-101",
    )
    version = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=full, actor=editor)
    publish(version, editor, reviewer)
    kb = tmp_path / "kb"
    run("export_entries", str(kb), "--namespace", "alpha", "--format", "markdown")

    copy = NamespaceFactory.create(slug="copy", prefix="AL", id_digits=ns_a.id_digits)
    copy_editor = membership(UserFactory(username="copy-editor"), copy, Role.EDITOR)
    NamespaceBase.objects.create(namespace=copy, base=company, position=0)
    run("sync_entries", str(kb), "--namespace", "copy", "--user", copy_editor.username)
    synced = EntryVersion.objects.get(entry__namespace=copy)
    for name in VersionContent.__slots__:
        assert getattr(synced, name) == getattr(version, name), name
    assert synced.content_hash == version.content_hash


def test_a_colleagues_open_draft_is_a_conflict_left_alone(folder: Path, editor: Any, ns_a: Namespace) -> None:
    colleague = membership(UserFactory(username="carl"), ns_a, Role.EDITOR)
    entry = Entry.objects.get()
    draft = version_draft_for_entry(entry=entry, actor=colleague)
    draft = version_save(
        version=draft,
        content=VersionContent.of(draft, summary="Carl's half-written summary."),
        expected_lock_version=draft.lock_version,
        actor=colleague,
    )
    planned, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--dry-run")
    assert "would propose" not in planned
    assert "AL-000       left alone: draft v2 by carl holds other content (summary, " in planned
    assert "1 conflict" in planned
    with pytest.raises(CommandError) as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--check")
    assert failure.value.returncode == 1

    out, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "left alone: draft v2 by carl" in out
    draft.refresh_from_db()
    assert (draft.state, draft.summary, draft.lock_version) == ("draft", "Carl's half-written summary.", 1)

    # The team's file agrees with the draft (exported from it): the draft is submitted as it stands.
    run("export_entries", str(folder), "--namespace", "alpha", "--format", "markdown", "--include-drafts")
    out, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "draft v2 already holds the file: submitted for review" in out


def test_a_version_in_review_with_other_content_is_left_alone_and_the_rest_proposed(
    folder: Path, editor: Any, ns_a: Namespace
) -> None:
    colleague = membership(UserFactory(username="carl"), ns_a, Role.EDITOR)
    draft = version_draft_for_entry(entry=Entry.objects.get(), actor=colleague)
    draft = version_save(
        version=draft,
        content=VersionContent.of(draft, summary="Under review."),
        expected_lock_version=draft.lock_version,
        actor=colleague,
    )
    version_submit(version=draft, actor=colleague)
    (folder / "new-rule.md").write_text("---\ntitle: Quote figures exactly\ncategory: rule\n---\nQuote them.\n")
    out, _ = run("sync_entries", str(folder), "--namespace", "alpha", "--user", editor.username)
    assert "AL-000       left alone: in review v2 by carl holds other content (summary, " in out
    assert "AL-200       new entry, submitted for review" in out


def test_a_dry_run_refuses_the_links_and_overrides_the_real_run_would(folder: Path, editor: Any) -> None:
    (folder / "link.md").write_text("---\ntitle: x\ncategory: fact\nlinks: [BT-001]\n---\nbody\n")
    (folder / "override.md").write_text("---\ntitle: y\ncategory: fact\noverrides: AC-101\n---\nbody\n")
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("links: []", "links: [ZZ-404]"))
    for args in (("--dry-run",), ("--user", editor.username)):
        lines = bad_files_of(folder, *args)
        assert "link.md: links: BT-001 is not an ID of this namespace or of one it builds on" in lines
        assert "AL-000.md: links: ZZ-404 is not an ID" in lines
        assert "override.md: overrides: AC-101 cannot be used: this namespace builds on no other namespace" in lines
        assert "such as AC-101" not in lines
    assert EntryVersion.objects.count() == 1


def test_a_remote_change_the_server_refuses_leaves_no_open_draft_behind(
    folder: Path, editor: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = personal_token_create(user=editor, name="ci", namespaces=[ns_a], scope="editor", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("links: []", "links: [ZZ-404]"))  # only the server checks links
    for number in (2, 3):  # the second run is refused the same way, not stopped by the first run's draft
        with pytest.raises(CommandError) as failure:
            run("sync_entries", str(folder), "--namespace", "alpha", "--server", manage_server)
        message = str(failure.value)
        assert message.startswith("AL-000: PATCH ") and "ZZ-404" in message
        assert f"The draft v{number} it opened was discarded (withdrawn). Nothing was proposed." in message
        assert ".." not in message
        assert EntryVersion.objects.get(number=number).state == "withdrawn"
        assert not EntryVersion.objects.filter(state__in=["draft", "in_review", "approved"]).exists()
    live = Entry.objects.get().live_version
    assert live is not None and live.number == 1


def test_a_remote_sync_leaves_a_draft_it_did_not_open(
    folder: Path, editor: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = personal_token_create(user=editor, name="ci", namespaces=[ns_a], scope="editor", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)
    colleague = membership(UserFactory(username="carl"), ns_a, Role.EDITOR)
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("summary: Agents ask", "summary: Every agent asks"))
    read = sync_command.remote_side

    def read_then_carl_opens_a_draft(client: Any) -> Any:
        side = read(client)
        draft = version_draft_for_entry(entry=Entry.objects.get(), actor=colleague)
        version_save(
            version=draft,
            content=VersionContent.of(draft, body="Carl's edit."),
            expected_lock_version=draft.lock_version,
            actor=colleague,
        )
        return side

    monkeypatch.setattr(sync_command, "remote_side", read_then_carl_opens_a_draft)
    with pytest.raises(CommandError, match=r"sync again\. Nothing was proposed\.$") as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--server", manage_server)
    assert "discarded" not in str(failure.value)
    draft = EntryVersion.objects.get(number=2)
    assert (draft.state, draft.body) == ("draft", "Carl's edit.")


def test_two_new_files_with_one_title_are_refused_naming_both(folder: Path) -> None:
    (folder / "a.md").write_text("---\ntitle: Quote figures exactly\ncategory: rule\n---\nQuote them.\n")
    (folder / "b.md").write_text("---\ntitle: Quote figures exactly\ncategory: rule\n---\nQuote them all.\n")
    lines = bad_files_of(folder, "--dry-run")
    assert "b.md: a new entry titled “Quote figures exactly” is described by a.md too" in lines
    assert Entry.objects.count() == 1


def test_two_files_for_one_entry_are_refused_naming_both(folder: Path) -> None:
    (folder / "copy.md").write_text((folder / "AL-000.md").read_text().replace("id: AL-000\n", ""))  # by title
    lines = bad_files_of(folder, "--dry-run")
    assert "copy.md: AL-000 is described by AL-000.md too" in lines


def test_check_exits_2_on_errors_and_1_only_when_the_folder_differs(
    folder: Path, editor: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "bad.md").write_text(BAD["unknown-key.md"])
    with pytest.raises(CommandError) as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--check")
    assert failure.value.returncode == 2
    (folder / "bad.md").unlink()
    monkeypatch.setenv("EVERGREEN_TOKEN", "not-a-token")
    with pytest.raises(CommandError) as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--check", "--server", manage_server)
    assert failure.value.returncode == 2
    (folder / "AL-000.md").unlink()
    with pytest.raises(CommandError) as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--check")
    assert failure.value.returncode == 1


def test_a_remote_check_refuses_every_file_the_server_would_refuse_and_writes_nothing(
    folder: Path, editor: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = personal_token_create(user=editor, name="ci", namespaces=[ns_a], scope="read", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)  # read suffices: the server checks without writing
    (folder / "link.md").write_text("---\ntitle: x\ncategory: fact\nlinks: [ZZ-404]\n---\nbody\n")
    (folder / "override.md").write_text("---\ntitle: y\ncategory: fact\noverrides: AC-101\n---\nbody\n")
    (folder / "fine.md").write_text("---\ntitle: z\ncategory: fact\n---\nbody\n")
    path = folder / "AL-000.md"
    path.write_text(path.read_text().replace("links: []", "links: [ZZ-404]"))
    before = (Entry.objects.count(), EntryVersion.objects.count(), AuditRecord.objects.count())
    for mode in ("--check", "--dry-run"):
        err = StringIO()
        with pytest.raises(CommandError, match="3 bad file") as failure:
            call_command(
                "sync_entries",
                str(folder),
                "--namespace",
                "alpha",
                "--server",
                manage_server,
                mode,
                stderr=err,
                stdout=StringIO(),
            )
        assert failure.value.returncode == 2
        lines = err.getvalue()
        assert f"{folder / 'link.md'}: the server refuses it: links: ZZ-404 is not an ID" in lines
        assert "(links.foreign)" in lines
        assert f"{folder / 'AL-000.md'}: the server refuses it: links: ZZ-404" in lines
        assert f"{folder / 'override.md'}: the server refuses it: " in lines and "(overrides.no_base_entry)" in lines
        assert "fine.md" not in lines
    assert (Entry.objects.count(), EntryVersion.objects.count(), AuditRecord.objects.count()) == before


def test_a_remote_check_by_someone_who_is_no_editor_says_the_check_needs_one(
    folder: Path, reviewer: Any, ns_a: Namespace, manage_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = personal_token_create(user=reviewer, name="ci", namespaces=[ns_a], scope="read", expires_at=None)
    monkeypatch.setenv("EVERGREEN_TOKEN", raw)
    (folder / "new-rule.md").write_text("---\ntitle: Quote figures exactly\ncategory: rule\n---\nQuote them.\n")
    with pytest.raises(CommandError, match="needs the token's owner to be an editor of the namespace") as failure:
        run("sync_entries", str(folder), "--namespace", "alpha", "--server", manage_server, "--check")
    assert failure.value.returncode == 2
    assert "not an editor" in str(failure.value)
