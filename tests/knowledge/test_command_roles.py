"""The role matrix of management commands: every command that writes, run as each person of a cast.

With `--user`, a command acts as that person: it succeeds only with the role the admin would ask for
in that namespace, and a refusal changes no row. Without `--user` it is the operator's set-up and
records the system actor, never an empty actor.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.actors import SYSTEM_USERNAME
from knowledge.models import AuditRecord, GateStatus, GoldenQuestion, Namespace, Release, Role
from knowledge.services.releases import release_build
from tests.factories import UserFactory, committed, membership
from tests.knowledge.rolematrix import fingerprint
from tests.servingfixtures import alpha_rows, publish

pytestmark = pytest.mark.django_db

EDITOR, REVIEWER, ADMIN = Role.EDITOR, Role.REVIEWER, Role.ADMIN
# Who holds what in alpha (beta roles say nothing about alpha).
CAST: dict[str, set[str]] = {
    "edna": {EDITOR},
    "rita": {REVIEWER},
    "ada": {ADMIN},
    "otto": set(),  # editor, reviewer and admin of beta only
    "staff": set(),
}
IMPLIED: dict[str, set[str]] = {ADMIN: {EDITOR, REVIEWER, ADMIN}}
LINE = {"id": "AL-050", "category": "fact", "title": "Imported", "body": "From a file."}


def _holds(person: str, role: str) -> bool:
    held = set().union(*(IMPLIED.get(r, {r}) for r in CAST[person]))
    return role in held


@pytest.fixture
def world(ns_a: Namespace, ns_b: Namespace, tmp_path: Path) -> dict[str, Any]:
    alpha = publish(ns_a, alpha_rows())
    release_build(namespace_id=alpha.pk)  # unchanged: a second build is a no-op
    GoldenQuestion.objects.create(namespace=alpha, key="q1", text="alpha product facts", relevant={"AL-001": 2})
    for name, roles in CAST.items():
        person = UserFactory(username=name)
        membership(person, alpha, *sorted(roles))
        if name == "otto":
            membership(person, ns_b, EDITOR, REVIEWER, ADMIN)
    (tmp_path / "one.jsonl").write_text(json.dumps(LINE) + "\n")
    return {"alpha": alpha, "file": str(tmp_path / "one.jsonl")}


# command → (arguments, the role --user needs in alpha)
COMMANDS: dict[str, tuple[Callable[[dict[str, Any]], list[str]], str]] = {
    "build_release": (lambda w: ["--namespace", "alpha"], REVIEWER),
    "retire_entry": (lambda w: ["AL-001", "--namespace", "alpha", "--reason", "Obsolete."], REVIEWER),
    "rollback_release": (lambda w: ["--namespace", "alpha", "--to", "1"], REVIEWER),
    "activate_release": (
        lambda w: ["--namespace", "alpha", "--release", str(w["held"]), "--reason", "Expected."],
        REVIEWER,
    ),
    "calibrate_threshold": (lambda w: ["--namespace", "alpha"], ADMIN),
    "import_entries": (lambda w: [w["file"], "--namespace", "alpha"], EDITOR),
    "evaluate": (lambda w: ["--namespace", "alpha", "--record", "--no-reference"], EDITOR),
}


def _second_release(world: dict[str, Any]) -> None:
    publish(world["alpha"], [{**alpha_rows()[0], "body": "Changed for a second release."}])


def _held_release(world: dict[str, Any]) -> None:
    """A release the golden question q1 holds: AL-001 no longer speaks of the alpha product."""
    unrelated = {"title": "Harbour hours", "summary": "Boats leave at dawn.", "body": "Boats.", "tags": []}
    publish(world["alpha"], [{**alpha_rows()[0], **unrelated}])
    held = Release.objects.filter(namespace=world["alpha"]).order_by("-sequence").first()
    assert held is not None and held.gate.status == GateStatus.HELD
    world["held"] = held.sequence


@pytest.mark.parametrize("person", sorted(CAST))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_acts_only_with_the_role_of_its_user(world: dict[str, Any], command: str, person: str) -> None:
    if command == "rollback_release":
        _second_release(world)
    if command == "activate_release":
        _held_release(world)
    arguments, role = COMMANDS[command]
    before = fingerprint()
    run = [command, *arguments(world), "--user", person]
    if _holds(person, role):
        with committed():
            call_command(*run, stdout=StringIO(), stderr=StringIO())
        assert fingerprint() != before
    else:
        with pytest.raises(CommandError, match="You are not"):
            call_command(*run, stdout=StringIO(), stderr=StringIO())
        assert fingerprint() == before


def test_an_unknown_or_inactive_user_is_refused(world: dict[str, Any]) -> None:
    UserFactory(username="gone", is_active=False)
    for username in ("nobody-by-that-name", "gone", SYSTEM_USERNAME):
        with pytest.raises(CommandError, match="No active user"):
            call_command("build_release", "--namespace", "alpha", "--user", username, stderr=StringIO())


def test_publishing_an_import_needs_a_second_person(world: dict[str, Any]) -> None:
    with pytest.raises(CommandError, match="four eyes"):
        call_command("import_entries", world["file"], "--namespace", "alpha", "--publish", "--user", "ada")
    with committed():
        call_command(
            "import_entries", world["file"], "--namespace", "alpha", "--publish", "--user", "edna",
            "--reviewer", "rita", stdout=StringIO(),
        )  # fmt: skip
    record = AuditRecord.objects.filter(action="import-publish").get()
    assert record.actor is not None and record.actor.username == "edna"


def test_without_a_user_the_system_actor_is_recorded(world: dict[str, Any]) -> None:
    since = AuditRecord.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    with committed():
        call_command("retire_entry", "AL-002", "--namespace", "alpha", "--reason", "Gone.", stdout=StringIO())
        call_command("import_entries", world["file"], "--namespace", "alpha", "--publish", stdout=StringIO())
        call_command("build_release", "--namespace", "alpha", stdout=StringIO(), stderr=StringIO())
        call_command("load_demo", stdout=StringIO(), stderr=StringIO())
    records = AuditRecord.objects.filter(pk__gt=since)
    assert records.exists()
    assert not records.filter(actor__isnull=True).exists()
    assert set(records.filter(namespace__slug="alpha").values_list("actor__username", flat=True)) == {SYSTEM_USERNAME}
