"""Rollback as a reviewed revert (issue 10): retired entries stay retired, later publishes keep the rollback."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledge.errors import NotAllowedError
from knowledge.models import (
    ActivationKind,
    AuditRecord,
    Entry,
    EntryVersion,
    Namespace,
    Release,
    ReleaseActivation,
    VersionState,
)
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.entries import entry_create, entry_restore, entry_retire
from knowledge.services.releases import release_activate, release_build
from knowledge.services.rollback import release_rollback
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from tests.factories import content
from tests.servingfixtures import alpha_rows, clean_serving_state, publish

pytestmark = pytest.mark.django_db
__all__ = ["clean_serving_state"]  # autouse: fresh serving caches per test


@pytest.fixture
def alpha(ns_a: Namespace) -> Namespace:
    """Release 1 of alpha: AL-001, AL-002 and AL-201, each at version 1."""
    return publish(ns_a, alpha_rows())


def release(namespace: Namespace, sequence: int) -> Release:
    return Release.objects.get(namespace=namespace, sequence=sequence)


def build(namespace: Namespace) -> Release:
    """Build what is published now (the tests' on-commit builds do not run) and serve it."""
    outcome = release_build(namespace_id=namespace.pk)
    serving_caches_clear()
    return outcome.release


def revise(namespace: Namespace, public_id: str, body: str, editor: Any, reviewer: Any) -> EntryVersion:
    entry = Entry.objects.get(namespace=namespace, public_id=public_id)
    draft = version_draft_for_entry(entry=entry, actor=editor)
    edited = content(title=draft.title, body=body)
    version_save(version=draft, content=edited, expected_lock_version=draft.lock_version, actor=editor)
    version_submit(version=draft, actor=editor)
    version_approve(version=draft, actor=reviewer)
    return version_publish(version=draft, actor=reviewer)


def add(namespace: Namespace, title: str, editor: Any, reviewer: Any) -> EntryVersion:
    fact = namespace.categories.get(slug="fact")
    version = entry_create(namespace=namespace, category=fact, content=content(title=title), actor=editor)
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    return version_publish(version=version, actor=reviewer)


def retire(namespace: Namespace, public_id: str, reviewer: Any) -> None:
    entry = Entry.objects.get(namespace=namespace, public_id=public_id)
    entry_retire(entry=entry, actor=reviewer, reason="Withdrawn: wrong.")


def live_number(namespace: Namespace, public_id: str) -> int | None:
    entry = Entry.objects.select_related("live_version").get(namespace=namespace, public_id=public_id)
    return entry.live_version.number if entry.live_version else None


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def served_ids(client: Any) -> tuple[list[str], list[str]]:
    document = client.get("/t/alpha/context.json").json()
    return [e["id"] for e in document["entries"]], [t["id"] for t in document["retired"]]


def test_a_retired_entry_stays_410_after_rolling_back_to_a_release_that_served_it(
    client: Any, alpha: Namespace, editor: Any, reviewer: Any
) -> None:
    revise(alpha, "AL-002", "Alpha now costs 5 euros.", editor, reviewer)
    build(alpha)  # release 2
    retire(alpha, "AL-001", reviewer)
    build(alpha)  # release 3: AL-001 is a tombstone
    assert client.get("/t/alpha/api/entries/AL-001").status_code == 410

    outcome = release_rollback(namespace=alpha, release=release(alpha, 1), actor=reviewer)
    build(alpha)

    assert outcome.kept_retired == ("AL-001",) and outcome.reverted == ("AL-002",)
    assert not outcome.activated  # release 1 served AL-001: a new release is built instead
    assert client.get("/t/alpha/api/entries/AL-001").status_code == 410
    entries, retired = served_ids(client)
    assert "AL-001" not in entries and retired == ["AL-001"]
    assert client.get("/t/alpha/api/entries/AL-002").json()["version"] == 1
    alpha.refresh_from_db()
    assert alpha.active_release is not None and alpha.active_release.sequence == 4


def test_a_later_publish_keeps_the_rollback(client: Any, alpha: Namespace, editor: Any, reviewer: Any) -> None:
    revise(alpha, "AL-002", "A wrong price.", editor, reviewer)
    build(alpha)  # release 2
    release_rollback(namespace=alpha, release=release(alpha, 1), actor=reviewer, note="The price was wrong.")
    build(alpha)

    revise(alpha, "AL-201", "Raise the budget when truncated.", editor, reviewer)
    later = build(alpha)

    assert later.sequence == 3
    assert {item["id"]: item["version"] for item in later.manifest["entries"]} == {
        "AL-001": 1,
        "AL-002": 1,
        "AL-201": 2,
    }
    assert client.get("/t/alpha/api/entries/AL-002").json()["version"] == 1
    # The next draft of a reverted entry starts from the version that serves, not the withdrawn one.
    draft = version_draft_for_entry(entry=Entry.objects.get(namespace=alpha, public_id="AL-002"), actor=editor)
    assert draft.body == EntryVersion.objects.get(entry=draft.entry, number=1).body


def test_rolling_back_over_several_versions_and_an_addition(alpha: Namespace, editor: Any, reviewer: Any) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    build(alpha)  # release 2: AL-002 v2
    added = add(alpha, "Added after release 2", editor, reviewer)
    revise(alpha, "AL-002", "Third.", editor, reviewer)
    build(alpha)  # release 3: AL-002 v3 and a new entry

    outcome = release_rollback(namespace=alpha, release=release(alpha, 2), actor=reviewer)

    new_id = added.entry.public_id
    assert outcome.reverted == ("AL-002",) and outcome.unpublished == (new_id,)
    assert outcome.activated  # nothing else changed: release 2 serves again, byte for byte
    assert live_number(alpha, "AL-002") == 2 and live_number(alpha, new_id) is None
    states = dict(EntryVersion.objects.filter(entry__public_id="AL-002").values_list("number", "state"))
    assert states == {1: VersionState.SUPERSEDED, 2: VersionState.PUBLISHED, 3: VersionState.SUPERSEDED}
    alpha.refresh_from_db()
    assert alpha.active_release_id == release(alpha, 2).pk
    activation = ReleaseActivation.objects.filter(namespace=alpha).order_by("-pk").first()
    assert activation is not None
    assert activation.kind == ActivationKind.ROLLBACK and activation.release_id == release(alpha, 2).pk


def test_every_change_of_a_rollback_is_audited_under_the_reviewer(alpha: Namespace, editor: Any, reviewer: Any) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    build(alpha)
    release_rollback(namespace=alpha, release=release(alpha, 1), actor=reviewer, note="Bad price.")

    records = AuditRecord.objects.filter(namespace=alpha, action__in=["revert", "supersede", "rollback"])
    rows = sorted((r.action, r.from_state, r.to_state, r.actor_id) for r in records)
    assert rows == [
        ("revert", VersionState.SUPERSEDED, VersionState.PUBLISHED, reviewer.pk),
        ("rollback", "", "", reviewer.pk),
        ("supersede", VersionState.PUBLISHED, VersionState.SUPERSEDED, reviewer.pk),
        # the publish of version 2 superseded version 1, by the same reviewer
        ("supersede", VersionState.PUBLISHED, VersionState.SUPERSEDED, reviewer.pk),
    ]
    assert all("Bad price." in r.note for r in records if r.action != "supersede" or r.version.number == 2)


def test_rollback_needs_a_reviewer_of_that_namespace(
    alpha: Namespace, editor: Any, reviewer: Any, outsider: Any
) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    build(alpha)
    for person in (editor, outsider, None):
        with pytest.raises(NotAllowedError):
            release_rollback(namespace=alpha, release=release(alpha, 1), actor=person)
    assert live_number(alpha, "AL-002") == 2


def test_a_build_that_read_content_from_before_the_rollback_never_replaces_it(
    alpha: Namespace, editor: Any, reviewer: Any
) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    second = build(alpha)
    stale_serial = Namespace.objects.get(pk=alpha.pk).content_serial
    release_rollback(namespace=alpha, release=release(alpha, 1), actor=reviewer)

    assert not release_activate(namespace_id=alpha.pk, release=second, serial=stale_serial)
    assert Namespace.objects.get(pk=alpha.pk).active_release_id == release(alpha, 1).pk


def test_a_restored_entry_serves_again_under_its_own_id(
    client: Any, alpha: Namespace, editor: Any, reviewer: Any
) -> None:
    retire(alpha, "AL-001", reviewer)
    build(alpha)
    assert client.get("/t/alpha/api/entries/AL-001").status_code == 410

    entry_restore(entry=Entry.objects.get(namespace=alpha, public_id="AL-001"), actor=reviewer, note="Still true.")
    build(alpha)

    assert client.get("/t/alpha/api/entries/AL-001").json()["id"] == "AL-001"
    assert served_ids(client) == (["AL-001", "AL-002", "AL-201"], [])
    record = AuditRecord.objects.get(namespace=alpha, action="restore")
    assert record.actor_id == reviewer.pk and "Still true." in record.note and "Withdrawn: wrong." in record.note


def test_knowledge_version_never_goes_down_when_content_comes_back_to_an_earlier_release(
    client: Any, alpha: Namespace, reviewer: Any
) -> None:
    """QA: restoring a retired entry served release 1 again, v1.0.0 after v2.0.0: an agent comparing
    versions would think it held newer knowledge than the server."""
    retire(alpha, "AL-001", reviewer)
    retired = build(alpha)
    entry_restore(entry=Entry.objects.get(namespace=alpha, public_id="AL-001"), actor=reviewer, note="Still true.")

    restored = build(alpha)

    assert (retired.sequence, restored.sequence) == (2, 3)
    assert version_key(restored.knowledge_version) > version_key(retired.knowledge_version)
    assert restored.inputs_hash == release(alpha, 1).inputs_hash  # the same content as release 1, a new release
    served = client.get("/t/alpha/api/context?topic=alpha")
    assert served["Evergreen-Release"] == "3" and served.json()["knowledgeVersion"] == restored.knowledge_version
    assert build(alpha).pk == restored.pk  # and the next build with nothing changed keeps it


def test_restore_refuses_a_live_entry_and_an_editor(alpha: Namespace, editor: Any, reviewer: Any) -> None:
    entry = Entry.objects.get(namespace=alpha, public_id="AL-001")
    with pytest.raises(Exception, match="not retired"):
        entry_restore(entry=entry, actor=reviewer, note="Why not.")
    retire(alpha, "AL-001", reviewer)
    with pytest.raises(NotAllowedError):
        entry_restore(entry=entry, actor=editor, note="Please.")


def test_rollback_release_command_reports_what_it_did(alpha: Namespace, editor: Any, reviewer: Any) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    build(alpha)
    retire(alpha, "AL-001", reviewer)
    build(alpha)
    out = StringIO()

    call_command("rollback_release", "--namespace", "alpha", "--to", "1", "--user", reviewer.username, stdout=out)

    assert "AL-001 stay retired" in out.getvalue()
    assert "release #4" in out.getvalue() and "built and activated" in out.getvalue()
    with pytest.raises(CommandError, match="Say who does this: --user REVIEWER"):
        call_command("rollback_release", "--namespace", "alpha", "--to", "2")  # never the system actor
    with pytest.raises(CommandError, match="No active user"):
        call_command("rollback_release", "--namespace", "alpha", "--to", "2", "--user", "nobody")
    with pytest.raises(CommandError, match="not a reviewer"):
        call_command("rollback_release", "--namespace", "alpha", "--to", "2", "--user", editor.username)


def test_restore_entry_command_names_the_reviewer(client: Any, alpha: Namespace, editor: Any, reviewer: Any) -> None:
    retire(alpha, "AL-001", reviewer)
    restore = ["restore_entry", "AL-001", "--namespace", "alpha", "--note", "Still true."]

    with pytest.raises(CommandError, match="Say who does this: --user REVIEWER"):
        call_command(*restore)
    with pytest.raises(CommandError, match="not a reviewer"):
        call_command(*restore, "--user", editor.username)
    assert Entry.objects.get(namespace=alpha, public_id="AL-001").retired_at is not None
    out = StringIO()
    call_command(*restore, "--user", reviewer.username, stdout=out)
    build(alpha)

    assert out.getvalue() == "Restored AL-001; a release build is queued.\n"
    assert client.get("/t/alpha/api/entries/AL-001").status_code == 200
    assert AuditRecord.objects.get(namespace=alpha, action="restore").actor_id == reviewer.pk


def test_build_release_says_when_it_activates_an_existing_release_again(
    alpha: Namespace, editor: Any, reviewer: Any
) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    second = build(alpha)
    # Release 1 serving while release 2 holds what is published, as a bare activation of release 1 leaves it.
    Namespace.objects.filter(pk=alpha.pk).update(active_release=release(alpha, 1), active_serial=0)
    out = StringIO()

    call_command("build_release", "--namespace", "alpha", stdout=out, stderr=StringIO())
    call_command("build_release", "--namespace", "alpha", stdout=out, stderr=StringIO())

    first_line, second_line = out.getvalue().splitlines()
    assert f"release #{second.sequence}" in first_line and "activated again" in first_line
    assert f"release #{second.sequence}" in second_line and "unchanged," in second_line


def test_the_admin_action_reverts_and_says_what_it_did(
    client: Any, alpha: Namespace, editor: Any, reviewer: Any
) -> None:
    revise(alpha, "AL-002", "Second.", editor, reviewer)
    build(alpha)
    client.force_login(reviewer)

    response = client.post(
        "/admin/knowledge/release/",
        {"action": "rollback", "_selected_action": [release(alpha, 1).pk]},
        follow=True,
    )

    assert response.status_code == 200
    messages = [str(m) for m in response.context["messages"]]
    assert messages == ["alpha: 1 entries reverted to their version in release #1. Release #1 serves again."]
    assert live_number(alpha, "AL-002") == 1
