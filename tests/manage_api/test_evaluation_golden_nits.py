"""QA's findings on evaluation and golden questions: pruned releases, who evaluates, graded IDs, strict bodies,
and a calibration target that cannot be reached."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from knowledge.models import EvaluationRun, GoldenQuestion, Namespace, Release, ReleaseActivation
from knowledge.services.entries import entry_retire
from knowledge.services.release_storage import releases_prune
from tests.configure import configure
from tests.manage_api.routes import BASE, _held_release, _questions, _second_release

pytestmark = pytest.mark.django_db

LONG_AGO = timedelta(days=30)


def error_of(response: Any) -> dict[str, Any]:
    return response.json()["error"]


def pruned_first_release(world: Any, settings: Any) -> Release:
    """Alpha's release 1 with its files pruned by the retention policy (release 2 serves), and a question."""
    _second_release(world)
    configure(settings, release_retention_days=1)
    Release.objects.filter(namespace=world.alpha, sequence=1).update(built_at=timezone.now() - LONG_AGO)
    ReleaseActivation.objects.filter(namespace=world.alpha).update(at=timezone.now() - LONG_AGO)
    report = releases_prune(namespace=world.alpha, keep=1, actor=world.callers["admin_a"].user)
    assert report.pruned == [1]
    _questions(world)
    return Release.objects.get(namespace=world.alpha, sequence=1)


def golden_post(world: Any, relevant: Any, caller: str = "editor_a") -> Any:
    body = {"key": "q1", "text": "How big a budget?", "relevant": relevant}
    return world.callers[caller].post(BASE + "golden-questions/", body)


# -- 1. a pruned release ----------------------------------------------------------------------------------------


def test_evaluating_a_pruned_release_is_410_release_expired(world: Any, settings: Any) -> None:
    pruned_first_release(world, settings)

    response = world.callers["admin_a"].post(BASE + "evaluation-runs/", {"release": 1})

    assert response.status_code == 410, response.content
    assert (error_of(response)["code"], error_of(response)["param"]) == ("release_expired", "release")
    assert "pruned" in error_of(response)["message"]
    assert not EvaluationRun.objects.exists()


def test_the_evaluate_command_refuses_a_pruned_release_with_a_clear_error(world: Any, settings: Any) -> None:
    pruned_first_release(world, settings)

    with pytest.raises(CommandError, match=r"release #1 were pruned"):
        call_command(
            "evaluate", "--namespace", "alpha", "--release", "1", "--no-reference", stdout=StringIO(), stderr=StringIO()
        )


def test_the_admin_refuses_to_evaluate_a_pruned_release_with_a_message(world: Any, settings: Any) -> None:
    release = pruned_first_release(world, settings)
    reviewer = Client()
    reviewer.force_login(world.callers["reviewer_a"].user)

    response = reviewer.post(
        reverse("admin:knowledge_release_changelist"),
        {"action": "evaluate_golden_questions", "_selected_action": [release.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert "release #1 were pruned" in response.text
    assert not EvaluationRun.objects.filter(release=release).exists()


# -- 2. who evaluates -----------------------------------------------------------------------------------------


def test_an_editor_evaluates_through_the_api_as_with_the_command(world: Any) -> None:
    _questions(world)

    response = world.callers["editor_a"].post(BASE + "evaluation-runs/", {})

    assert response.status_code == 201, response.content
    call_command(
        "evaluate", "--namespace", "alpha", "--record", "--no-reference", "--user", "edna", stdout=StringIO(),
        stderr=StringIO(),
    )  # fmt: skip
    assert EvaluationRun.objects.filter(namespace=world.alpha).count() == 2


def test_a_reviewer_who_is_not_an_editor_is_refused_by_the_api_as_by_the_command(world: Any) -> None:
    _questions(world)

    response = world.callers["reviewer_a"].post(BASE + "evaluation-runs/", {})

    assert response.status_code == 403 and error_of(response)["code"] == "forbidden", response.content
    with pytest.raises(CommandError, match="editor"):
        call_command(
            "evaluate", "--namespace", "alpha", "--record", "--no-reference", "--user", "rita", stdout=StringIO(),
            stderr=StringIO(),
        )  # fmt: skip
    assert not EvaluationRun.objects.exists()


# -- 3. golden questions' graded IDs ------------------------------------------------------------------------------


def test_two_spellings_of_one_id_are_refused_not_merged(world: Any) -> None:
    live = world.live.entry.public_id

    response = golden_post(world, {live: 2, live.lower(): 1})

    assert response.status_code == 400, response.content
    assert (error_of(response)["code"], error_of(response)["param"]) == ("invalid_parameter", "relevant")
    assert live in error_of(response)["message"]
    assert not GoldenQuestion.objects.filter(namespace=world.alpha).exists()


def test_an_id_no_entry_has_is_refused(world: Any) -> None:
    response = golden_post(world, {f"{world.alpha.prefix}-999": 2})

    assert response.status_code == 422, response.content
    assert error_of(response)["code"] == "relevant.unknown"
    assert f"{world.alpha.prefix}-999" in error_of(response)["message"]
    assert not GoldenQuestion.objects.filter(namespace=world.alpha).exists()


def test_a_retired_or_unpublished_entry_may_be_expected(world: Any) -> None:
    """History: a question may expect a retired entry (an older release served it), or one still in review."""
    entry_retire(entry=world.live.entry, actor=world.callers["reviewer_a"].user, reason="Superseded.")
    retired, draft = world.live.entry.public_id, world.draft.entry.public_id

    response = golden_post(world, {retired: 2, draft: 1})

    assert response.status_code == 201, response.content
    assert response.json()["relevant"] == {retired: 2, draft: 1}


@pytest.mark.parametrize("grade", ["2", "1", "2.0", None, [2], 1.5])
def test_a_grade_is_a_json_number_not_a_string(world: Any, grade: Any) -> None:
    response = golden_post(world, {world.live.entry.public_id: grade})

    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "invalid_parameter"
    assert str(error_of(response)["param"]).startswith("relevant")
    assert not GoldenQuestion.objects.filter(namespace=world.alpha).exists()


def test_a_whole_float_grade_is_that_integer(world: Any) -> None:
    """JSON has one number type; JSON Schema's integer takes 2.0, as the gateway does (mcp_bridge.jsonrpc)."""
    live = world.live.entry.public_id

    response = golden_post(world, {live: 2.0})

    assert response.status_code == 201, response.content
    assert GoldenQuestion.objects.get(namespace=world.alpha).relevant == {live: 2}


# -- 4. an activation's reason ------------------------------------------------------------------------------------


@pytest.mark.parametrize("reason", [5, True, ["why"]])
def test_an_activation_reason_must_be_a_string(world: Any, reason: Any) -> None:
    sequence = _held_release(world)

    response = world.callers["reviewer_a"].post(BASE + f"releases/{sequence}/activate/", {"reason": reason})

    assert response.status_code == 400, response.content
    assert (error_of(response)["code"], error_of(response)["param"]) == ("invalid_parameter", "reason")
    world.alpha.refresh_from_db()
    assert world.alpha.active_release.sequence != sequence


# -- 5. calibrate_threshold with a target it cannot reach -------------------------------------------------------

UNREACHABLE = [
    ("c1", "token budget discipline", True),
    ("c2", "zeppelin harbour opening hours", True),
    ("c3", "chess olympiad in Budapest", True),
    ("c4", "volcano eruption forecast", True),
    ("c5", "medieval tapestry restoration", True),
    ("u1", "submarine cable repair", False),
]


def unreachable_questions(namespace: Namespace, live_id: str) -> None:
    """Five covered questions, four of which no entry of alpha can ever match: the target 0.95 is out of reach."""
    for key, text, covered in UNREACHABLE:
        relevant = {live_id: 2} if covered else {}
        GoldenQuestion.objects.create(namespace=namespace, key=key, text=text, relevant=relevant)


def test_calibration_below_its_target_is_refused_and_stores_nothing(world: Any) -> None:
    unreachable_questions(world.alpha, world.live.entry.public_id)
    err = StringIO()

    with pytest.raises(CommandError, match="--accept-below-target") as caught:
        call_command("calibrate_threshold", "--namespace", "alpha", stdout=StringIO(), stderr=err)

    warning = str(caught.value) + err.getvalue()
    assert "0.200 of 5 covered" in warning and "target 0.95" in warning
    world.alpha.refresh_from_db()
    assert world.alpha.match_threshold is None


def test_calibration_below_its_target_is_stored_when_accepted_with_a_warning(world: Any) -> None:
    unreachable_questions(world.alpha, world.live.entry.public_id)
    err = StringIO()

    call_command("calibrate_threshold", "--namespace", "alpha", "--accept-below-target", stdout=StringIO(), stderr=err)

    assert "0.200 of 5 covered" in err.getvalue() and "target 0.95" in err.getvalue()
    world.alpha.refresh_from_db()
    assert world.alpha.match_threshold is not None
    assert "below the target" in world.alpha.match_threshold_note
