"""The publish gate: a release whose golden questions regress is built but held, and the serving
release keeps serving until a reviewer who wrote none of its changes activates it with a reason."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from knowledge.errors import NotAllowedError
from knowledge.models import (
    AuditRecord,
    BuildRequest,
    BuildStatus,
    Entry,
    EntryVersion,
    GateStatus,
    GoldenQuestion,
    Namespace,
    Release,
    ReleaseActivation,
    ReleaseBuild,
    Role,
    TokenScope,
)
from knowledge.services.entries import entry_create, entry_retire
from knowledge.services.gate_override import ReasonRequiredError, ReleaseNotHeldError, release_gate_override
from knowledge.services.golden_preview import golden_preview
from knowledge.services.personal_tokens import personal_token_create
from knowledge.services.releases import release_build
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from tests.factories import UserFactory, committed, content, membership
from tests.knowledge.adminforms import as_user
from tests.servingfixtures import alpha, clean_serving_state  # noqa: F401  # fixtures

pytestmark = pytest.mark.django_db

QUESTIONS = [
    ("q-price", "How much does alpha cost for agents?", {"AL-002": 2}),
    ("q-ship", "When does alpha ship?", {"AL-001": 2}),
    ("q-budget", "Raise the token budget when truncated", {"AL-201": 2}),
]
UNRELATED = {
    "title": "Harbour opening hours",
    "summary": "The harbour opens at dawn.",
    "body": "Boats leave the harbour at dawn and return at dusk.",
    "tags": ["harbour"],
}


@pytest.fixture
def golden(alpha: Namespace) -> Namespace:  # noqa: F811
    for key, text, relevant in QUESTIONS:
        GoldenQuestion.objects.create(namespace=alpha, key=key, text=text, relevant=relevant)
    return alpha


def publish_edit(ns: Namespace, public_id: str, author: Any, reviewer: Any, **fields: Any) -> None:
    """A new version of an entry, written by `author` and published by `reviewer` (the build runs on commit)."""
    entry = Entry.objects.get(namespace=ns, public_id=public_id)
    with committed():
        draft = version_draft_for_entry(entry=entry, actor=author)
        saved = version_save(
            version=draft, content=content(**fields), expected_lock_version=draft.lock_version, actor=author
        )
        version_submit(version=saved, actor=author)
        version_approve(version=saved, actor=reviewer)
        version_publish(version=saved, actor=reviewer)


def publish_new(ns: Namespace, author: Any, reviewer: Any, **fields: Any) -> None:
    with committed():
        version = entry_create(
            namespace=ns, category=ns.categories.get(slug="fact"), content=content(**fields), actor=author
        )
        version_submit(version=version, actor=author)
        version_approve(version=version, actor=reviewer)
        version_publish(version=version, actor=reviewer)


def latest(ns: Namespace) -> Release:
    return Release.objects.filter(namespace=ns).order_by("-sequence")[0]


def serving(ns: Namespace) -> Release:
    release = Namespace.objects.get(pk=ns.pk).active_release
    assert release is not None
    return release


def last_build_status(ns: Namespace) -> str:
    return ReleaseBuild.objects.filter(namespace=ns).values_list("status", flat=True)[0]


def served_ids(topic: str) -> list[str]:
    pack = Client().get("/t/alpha/api/context", {"topic": topic}).json()
    return [entry["id"] for entry in pack["entries"]]


def test_the_first_release_has_nothing_to_compare_with(golden: Namespace) -> None:
    assert serving(golden).gate.status == GateStatus.SKIPPED


def test_a_harmless_publish_passes_and_is_activated(golden: Namespace, editor: Any, reviewer: Any) -> None:
    before = serving(golden)
    publish_new(golden, editor, reviewer, title="Alpha colour palette", summary="Alpha is green.", tags=["colour"])
    release = serving(golden)
    assert release.sequence == before.sequence + 1
    assert release.gate.status == GateStatus.PASSED
    assert release.gate.compared_with == before
    assert release.gate.regressions == 0
    assert {q["key"] for q in release.gate.report["questions"]} == {key for key, _, _ in QUESTIONS}
    assert last_build_status(golden) == BuildStatus.SUCCEEDED


def test_a_regressing_publish_is_held_and_the_serving_release_keeps_serving(
    golden: Namespace, editor: Any, reviewer: Any
) -> None:
    before = serving(golden)
    assert "AL-002" in served_ids("How much does alpha cost for agents?")
    publish_edit(golden, "AL-002", editor, reviewer, **UNRELATED)

    held = latest(golden)
    assert held.sequence == before.sequence + 1
    assert serving(golden) == before
    assert held.gate.status == GateStatus.HELD
    assert held.gate.regressions == 1
    price = next(q for q in held.gate.report["questions"] if q["key"] == "q-price")
    assert price["regression"] in {"refused", "lost_expected"}
    assert "AL-002" in price["before"]["packed"] and "AL-002" not in price["after"]["packed"]
    assert last_build_status(golden) == BuildStatus.HELD
    # The held release answers the build requests: the reconciler does not build it again and again.
    assert not BuildRequest.objects.filter(namespace=golden, built_at__isnull=True).exists()
    assert BuildRequest.objects.filter(namespace=golden, release=held).exists()
    assert "AL-002" in served_ids("How much does alpha cost for agents?")
    note = AuditRecord.objects.filter(action="release", release=held).get().note
    assert "held; the serving release stays active" in note and "q-price" in note

    # Building the same content again reuses the held release, checks it again and keeps it held.
    outcome = release_build(namespace_id=golden.pk)
    assert (outcome.release, outcome.created, outcome.activated, outcome.held) == (held, False, False, True)
    assert serving(golden) == before


def test_retiring_an_entry_a_golden_question_expects_is_not_held(golden: Namespace, reviewer: Any) -> None:
    # A retirement is a reviewed withdrawal: losing the entry is its point, so the gate lets it through.
    before = serving(golden)
    with committed():
        entry_retire(entry=Entry.objects.get(namespace=golden, public_id="AL-002"), actor=reviewer, reason="Sold out")

    release = serving(golden)
    assert release.sequence == before.sequence + 1
    assert release.gate.status == GateStatus.PASSED
    assert "q-price" not in {q["key"] for q in release.gate.report["questions"]}
    assert Client().get("/t/alpha/api/entries/AL-002").status_code == 410


def test_a_reviewer_activates_a_held_release_with_a_reason(golden: Namespace, editor: Any, reviewer: Any) -> None:
    before = serving(golden)
    publish_edit(golden, "AL-002", editor, reviewer, **UNRELATED)
    held = latest(golden)

    with pytest.raises(ReasonRequiredError):
        release_gate_override(release=held, actor=reviewer, reason="  ")
    with committed():
        release_gate_override(release=held, actor=reviewer, reason="Pricing moved to the new price list.")

    held.gate.refresh_from_db()
    assert serving(golden) == held
    assert (held.gate.status, held.gate.decided_by, held.gate.reason) == (
        GateStatus.OVERRIDDEN,
        reviewer,
        "Pricing moved to the new price list.",
    )
    record = AuditRecord.objects.filter(action="gate-override").get()
    assert record.actor == reviewer and record.release == held
    assert "Pricing moved to the new price list." in record.note
    activation = ReleaseActivation.objects.filter(namespace=golden).order_by("-pk")[0]
    assert (activation.release, activation.previous) == (held, before)
    assert "AL-002" not in served_ids("How much does alpha cost for agents?")

    with pytest.raises(ReleaseNotHeldError):
        release_gate_override(release=held, actor=reviewer, reason="Again.")
    # A rebuild of the same content does not check a release a reviewer let through again.
    assert release_build(namespace_id=golden.pk).held is False


def test_only_a_reviewer_who_wrote_none_of_the_changes_may_activate_a_held_release(
    golden: Namespace, editor: Any, reviewer: Any, outsider: Any
) -> None:
    both = membership(UserFactory(username="bea"), golden, Role.EDITOR, Role.REVIEWER)
    publish_edit(golden, "AL-002", both, reviewer, **UNRELATED)
    held = latest(golden)
    before = serving(golden)

    for person, message in ((editor, "You are not"), (outsider, "You are not"), (both, "four eyes")):
        with pytest.raises(NotAllowedError, match=message):
            release_gate_override(release=held, actor=person, reason="Looks fine to me.")
    assert serving(golden) == before
    assert not AuditRecord.objects.filter(action="gate-override").exists()
    held.gate.refresh_from_db()
    assert held.gate.status == GateStatus.HELD


def test_the_commands_say_release_held_and_activate_with_a_reason(
    golden: Namespace, editor: Any, reviewer: Any
) -> None:
    entry = Entry.objects.get(namespace=golden, public_id="AL-002")
    draft = version_draft_for_entry(entry=entry, actor=editor)
    saved = version_save(
        version=draft, content=content(**UNRELATED), expected_lock_version=draft.lock_version, actor=editor
    )
    version_submit(version=saved, actor=editor)
    version_approve(version=saved, actor=reviewer)
    version_publish(version=saved, actor=reviewer)  # not committed: build_release builds it

    out = StringIO()
    with pytest.raises(CommandError, match="release_held") as error:
        call_command("build_release", "--namespace", "alpha", "--user", "rita", stdout=out, stderr=StringIO())
    assert error.value.returncode == 3
    held = latest(golden)
    assert f"release #{held.sequence}" in out.getvalue() and "held" in out.getvalue()
    assert "release_held: q-price" in out.getvalue()

    with pytest.raises(CommandError, match="not_allowed: You are not a reviewer"):
        call_command(
            "activate_release", "--namespace", "alpha", "--release", str(held.sequence),
            "--reason", "Mine.", "--user", "edna",
        )  # fmt: skip
    out = StringIO()
    with committed():
        call_command(
            "activate_release", "--namespace", "alpha", "--release", str(held.sequence),
            "--reason", "Expected: the price list moved.", "--user", "rita", stdout=out,
        )  # fmt: skip
    assert f"now serves release #{held.sequence}" in out.getvalue()
    with pytest.raises(CommandError, match="release_not_held"):
        call_command(
            "activate_release", "--namespace", "alpha", "--release", str(held.sequence), "--reason", "Again.",
        )  # fmt: skip


def draft_of(ns: Namespace, public_id: str, author: Any, **fields: Any) -> EntryVersion:
    entry = Entry.objects.get(namespace=ns, public_id=public_id)
    draft = version_draft_for_entry(entry=entry, actor=author)
    saved = version_save(
        version=draft, content=content(**fields), expected_lock_version=draft.lock_version, actor=author
    )
    return version_submit(version=saved, actor=author)


def test_the_review_page_lists_the_golden_questions_a_version_would_change(
    golden: Namespace, editor: Any, reviewer: Any
) -> None:
    regressing = draft_of(golden, "AL-002", editor, **UNRELATED)
    preview = golden_preview(version=regressing)
    assert preview.held
    assert preview.changed[0]["key"] == "q-price"
    assert preview.changed[0]["regression"] in {"refused", "lost_expected"}
    assert "q-ship" not in {q["key"] for q in preview.changed}

    page = as_user(reviewer).get(reverse("admin:knowledge_entryversion_change", args=[regressing.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert "Golden questions if published" in html
    assert "Publishing it would hold the release" in html
    assert "q-price" in html and "How much does alpha cost for agents?" in html

    # Publishing it gives the gate the same verdict as the preview.
    with committed():
        version_approve(version=regressing, actor=reviewer)
        version_publish(version=regressing, actor=reviewer)
    assert latest(golden).gate.status == GateStatus.HELD


def test_a_version_that_changes_no_answer_says_so(golden: Namespace, editor: Any) -> None:
    same_answers = draft_of(
        golden, "AL-201", editor,
        title="Token budget discipline", summary="Ask for 2000 tokens and raise the budget when truncated.",
        body="Raise the token budget when truncated is true. " * 6, tags=["token", "budget"],
    )  # fmt: skip
    preview = golden_preview(version=same_answers)
    assert preview.report is not None and not preview.held
    assert preview.changed == []
    html = as_user(editor).get(reverse("admin:knowledge_entryversion_change", args=[same_answers.pk])).content
    assert "None of the 3 golden questions would change." in html.decode()


def test_the_preview_compares_with_the_published_state_while_a_release_is_held(
    golden: Namespace, editor: Any, reviewer: Any
) -> None:
    """The serving release still packs AL-002 for q-price, the published (held) AL-002 no longer answers
    it: a draft's preview starts from what is published, not from what serves."""
    publish_edit(golden, "AL-002", editor, reviewer, **UNRELATED)
    assert latest(golden).gate.status == GateStatus.HELD
    assert "AL-002" in served_ids("How much does alpha cost for agents?")
    draft = draft_of(golden, "AL-001", editor, title="Bakery recipes", summary="Bread needs flour.", tags=[])
    preview = golden_preview(version=draft)
    assert preview.report is not None
    answers = {q["key"]: q for q in preview.report["questions"]}
    assert "AL-002" not in answers["q-price"]["before"]["packed"]
    assert answers["q-ship"]["regression"] is not None  # AL-001 answered it in the published state


def test_the_management_api_shows_release_held_and_activates_with_a_reason(
    golden: Namespace, editor: Any, reviewer: Any
) -> None:
    publish_edit(golden, "AL-002", editor, reviewer, **UNRELATED)
    held = latest(golden)
    _, raw = personal_token_create(
        user=reviewer, name="rita", namespaces=[golden], scope=TokenScope.REVIEWER, expires_at=None
    )
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    base = "/t/alpha/api/manage/releases/"

    listed = {r["sequence"]: r for r in api.get(base).json()["results"]}
    assert listed[held.sequence]["gate"]["code"] == "release_held"
    assert listed[held.sequence]["active"] is False
    detail = api.get(f"{base}{held.sequence}/").json()
    assert detail["gate"]["report"]["questions"][0]["key"] == "q-budget"

    refused = api.post(f"{base}{held.sequence}/activate/", {}, content_type="application/json")
    assert (refused.status_code, refused.json()["error"]["param"]) == (400, "reason")
    with committed():
        done = api.post(f"{base}{held.sequence}/activate/", {"reason": "Expected."}, content_type="application/json")
    assert done.status_code == 200
    assert (done.json()["active"], done.json()["gate"]["status"], done.json()["gate"]["code"]) == (
        True,
        "overridden",
        None,
    )
    again = api.post(f"{base}{held.sequence}/activate/", {"reason": "Again."}, content_type="application/json")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "release_not_held")
