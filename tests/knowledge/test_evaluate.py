"""Evaluation as a product feature (issue 5): `manage.py evaluate`, `manage.py calibrate_threshold`,
the golden-question and release admin actions, and /metrics.json, all through /api/context's path."""

from __future__ import annotations

import html
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from knowledge.models import AuditRecord, EvaluationRun, GoldenQuestion, Namespace
from knowledge.services.releases import release_build
from tests.factories import UserFactory, membership
from tests.servingfixtures import BUILT_AT, alpha, alpha_rows, beta, clean_serving_state, demo, publish

__all__ = ["alpha", "beta", "clean_serving_state", "demo"]  # fixtures used below

pytestmark = pytest.mark.django_db

ALPHA_QUESTIONS = [
    ("al-q-1", "When does alpha ship?", {"AL-001": 2}),
    ("al-q-2", "How should I raise the token budget when truncated?", {"AL-201": 2}),
    ("al-q-3", "What does alpha cost agents?", {"AL-002": 2}),
    ("al-q-4", "Who won the chess olympiad in Budapest?", {}),
]


def golden(namespace: Namespace, rows: list[tuple[str, str, dict[str, int]]], split: str = "dev") -> None:
    for key, text, relevant in rows:
        GoldenQuestion.objects.create(namespace=namespace, key=key, text=text, relevant=relevant, split=split)


def evaluate_json(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("evaluate", *args, "--json", stdout=out, stderr=StringIO())
    document: dict[str, Any] = json.loads(out.getvalue())
    return document


def admin_client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_demo_dev_questions_give_sensible_numbers(demo: Namespace) -> None:
    document = evaluate_json("--namespace", "evergreen", "--split", "dev")
    metrics = document["metrics"]
    by_key = {item["key"]: item for item in document["results"]}

    assert (metrics["queries"], metrics["covered"], metrics["uncovered"]) == (61, 52, 9)
    assert metrics["hit_rate"] >= 0.9
    assert metrics["ndcg_at_10"] >= 0.7
    assert metrics["unmatched_when_uncovered"] == 1.0  # every off-topic dev question is refused
    assert metrics["filler"] is not None and metrics["filler"] < 0.5
    assert metrics["budget"] == 2000
    assert all(item["split"] == "dev" for item in document["results"])
    quantum = next(item for item in by_key.values() if "量子色动力学" in item["text"])
    assert (quantum["expected"], quantum["matched"], quantum["mode"]) == ({}, False, "fallback")


def test_evaluation_packs_exactly_what_api_context_returns(client: Any, demo: Namespace) -> None:
    document = evaluate_json("--namespace", "evergreen", "--split", "dev", "--budget", "800")

    for item in document["results"][:8]:
        served = client.get("/api/context", {"topic": item["text"], "budget": 800}).json()
        assert item["packed"] == [entry["id"] for entry in served["entries"]], item["key"]
        assert item["matched"] is served["matched"], item["key"]


def test_a_queries_file_is_read_in_the_datasets_format_and_other_splits_are_dropped(
    alpha: Namespace, tmp_path: Path
) -> None:
    path = tmp_path / "queries.jsonl"
    lines = [
        {"id": "q1", "text": "When does alpha ship?", "split": "dev", "relevant": {"AL-001": 2}},
        {"id": "q2", "text": "quantum chromodynamics", "split": "dev", "relevant": {}},
        {"id": "q3", "text": "held out", "split": "test", "relevant": "not even valid"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")

    document = evaluate_json("--namespace", "alpha", str(path), "--split", "dev")

    assert [item["key"] for item in document["results"]] == ["q1", "q2"]
    assert document["results"][0]["packed"][0] == "AL-001"
    assert document["results"][1]["matched"] is False


def test_the_text_report_names_every_metric(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    out = StringIO()

    call_command("evaluate", "--namespace", "alpha", stdout=out, stderr=StringIO())

    text = out.getvalue()
    for label in ("nDCG@10", "MRR@10", "recall in pack", "hit rate", "not covered refused", "filler", "latency p50 ms"):
        assert label in text
    assert "questions: 4 (3 covered, 1 not covered)" in text
    # bm25s runs on the same release's entries in the same run, in a column of its own.
    assert "evergreen" in text and "bm25s" in text
    assert "match threshold: " in text and "calibrated automatically" in text


def test_the_json_report_carries_the_reference_and_how_the_threshold_was_obtained(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)

    document = evaluate_json("--namespace", "alpha")

    assert document["reference"]["system"] == "bm25s"
    assert document["reference"]["metrics"]["queries"] == 4
    assert document["matching"]["source"] == "automatic"
    assert document["matching"]["probes_refused"] >= 0.9
    assert "filler" in document["metrics"]
    assert evaluate_json("--namespace", "alpha", "--no-reference")["reference"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--namespace", "nope"], "No namespace"),
        (["--namespace", "alpha", "--release", "99"], "no release #99"),
        (["--namespace", "alpha", "missing.jsonl"], "No such file"),
        (["--namespace", "alpha", "--split", "nothing-here"], "No questions"),
    ],
)
def test_bad_requests_are_clear_errors(alpha: Namespace, args: list[str], message: str) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", *args, stdout=StringIO(), stderr=StringIO())


def test_a_bad_line_names_its_line_and_evaluates_nothing(alpha: Namespace, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "q1", "text": "alpha"}\n{"id": "q2"}\nnot json\n', encoding="utf-8")
    err = StringIO()

    with pytest.raises(CommandError, match="2 bad line"):
        call_command("evaluate", "--namespace", "alpha", str(path), stdout=StringIO(), stderr=err)
    assert f"{path}:2:" in err.getvalue() and f"{path}:3:" in err.getvalue()


def test_record_stores_a_run_that_metrics_json_reports(client: Any, demo: Namespace) -> None:
    call_command(
        "evaluate", "--namespace", "evergreen", "--split", "dev", "--record", stdout=StringIO(), stderr=StringIO()
    )

    run = EvaluationRun.objects.get(namespace=demo)
    reported = client.get("/metrics.json").json()["evaluation"]

    assert reported["runId"] == run.pk
    assert reported["metrics"]["queries"] == 61
    assert len(run.results) == 61
    assert {"key", "expected", "packed", "ranked", "matched", "mode", "ms"} <= set(run.results[0])


def test_calibration_stores_the_threshold_audits_it_and_queues_a_build(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    serial = alpha.content_serial
    out = StringIO()

    call_command("calibrate_threshold", "--namespace", "alpha", stdout=out, stderr=StringIO())

    alpha.refresh_from_db()
    assert alpha.match_threshold is not None and alpha.match_threshold >= 0
    assert f"threshold {alpha.match_threshold:.4f}" in out.getvalue()
    assert "margin" in out.getvalue()
    assert alpha.match_threshold_note.startswith("calibrate_threshold on 4 dev questions")
    assert alpha.content_serial == serial + 1
    assert AuditRecord.objects.filter(namespace=alpha, action="set_match_threshold").exists()


def test_the_release_records_the_namespace_threshold_and_how_it_was_obtained(client: Any, alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    call_command("calibrate_threshold", "--namespace", "alpha", stdout=StringIO(), stderr=StringIO())
    release_build(namespace_id=alpha.pk, now=BUILT_AT)
    alpha.refresh_from_db()
    assert alpha.active_release is not None

    matching = alpha.active_release.metrics["matching"]

    assert (matching["source"], matching["threshold"]) == ("namespace", alpha.match_threshold)
    assert matching["note"] == alpha.match_threshold_note
    assert client.get("/t/alpha/metrics.json").json()["matching"] == matching


def test_the_new_release_serves_with_the_calibrated_threshold(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    call_command("calibrate_threshold", "--namespace", "alpha", stdout=StringIO(), stderr=StringIO())
    release_build(namespace_id=alpha.pk, now=BUILT_AT)

    document = evaluate_json("--namespace", "alpha")

    alpha.refresh_from_db()
    assert alpha.active_release is not None and alpha.active_release.sequence == 2
    assert document["metrics"]["matched_when_covered"] >= 0.95 - 1e-9


def test_calibration_dry_run_changes_nothing(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)

    call_command("calibrate_threshold", "--namespace", "alpha", "--dry-run", stdout=StringIO(), stderr=StringIO())

    alpha.refresh_from_db()
    assert alpha.match_threshold is None


def test_without_uncovered_questions_nothing_is_refused(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS[:3])
    out = StringIO()

    call_command("calibrate_threshold", "--namespace", "alpha", stdout=out, stderr=StringIO())

    alpha.refresh_from_db()
    assert alpha.match_threshold == 0.0
    assert "nothing to refuse" in out.getvalue()


def test_calibration_needs_covered_questions_and_a_sane_target(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS[3:])

    with pytest.raises(CommandError, match="covered questions"):
        call_command("calibrate_threshold", "--namespace", "alpha", stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="target-matched"):
        call_command("calibrate_threshold", "--namespace", "alpha", "--target-matched", "1.5", stdout=StringIO())


def test_the_golden_question_action_records_a_run_and_shows_expected_against_packed(
    alpha: Namespace, beta: Namespace
) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    golden(beta, [("be-q-1", "zeppelin launch", {"BE-001": 2})])
    admin = UserFactory(username="root", is_superuser=True)
    client = admin_client(admin)
    selected = GoldenQuestion.objects.filter(namespace=alpha, key__in=["al-q-1", "al-q-4"])

    response = client.post(
        reverse("admin:knowledge_goldenquestion_changelist"),
        {"action": "evaluate_active_release", "_selected_action": [q.pk for q in selected]},
        follow=True,
    )

    run = EvaluationRun.objects.get()
    page = client.get(reverse("admin:knowledge_evaluationrun_change", args=[run.pk])).content.decode()
    assert response.status_code == 200
    assert "Per-question results" in response.content.decode()
    assert (run.namespace, run.release) == (alpha, alpha.active_release)
    assert sorted(item["key"] for item in run.results) == ["al-q-1", "al-q-4"]
    assert "al-q-4" in page and "not covered" in page and "refused" in page
    assert "AL-001" in page and "nDCG@10" in page


def test_the_release_action_evaluates_an_older_release_as_it_served(alpha: Namespace) -> None:
    golden(alpha, [("al-q-9", "zeppelin harbour", {"AL-003": 2}), *ALPHA_QUESTIONS])
    older = alpha.active_release
    rows = [*alpha_rows(), {**alpha_rows()[0], "id": "AL-003", "title": "Zeppelin harbour", "tags": []}]
    publish(alpha, rows)
    newer = alpha.active_release
    assert older is not None and newer is not None and newer != older
    reviewer = membership(UserFactory(username="rita"), alpha, "reviewer")
    client = admin_client(reviewer)

    for release in (older, newer):
        client.post(
            reverse("admin:knowledge_release_changelist"),
            {"action": "evaluate_golden_questions", "_selected_action": [release.pk]},
        )

    old_run, new_run = EvaluationRun.objects.order_by("id")
    assert (old_run.release, new_run.release) == (older, newer)
    zeppelin = [next(i for i in run.results if i["key"] == "al-q-9") for run in (old_run, new_run)]
    assert "AL-003" not in zeppelin[0]["packed"]
    assert zeppelin[1]["packed"][0] == "AL-003"


def test_an_outsider_cannot_evaluate_another_namespaces_questions(alpha: Namespace, beta: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    outsider = membership(UserFactory(username="otto"), beta, "editor", "reviewer")
    client = admin_client(outsider)

    client.post(
        reverse("admin:knowledge_goldenquestion_changelist"),
        {"action": "evaluate_active_release", "_selected_action": [q.pk for q in GoldenQuestion.objects.all()]},
    )
    client.post(
        reverse("admin:knowledge_release_changelist"),
        {"action": "evaluate_golden_questions", "_selected_action": [alpha.active_release_id]},
    )

    assert not EvaluationRun.objects.exists()


def test_a_run_lists_only_its_own_namespaces_questions(alpha: Namespace, beta: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    golden(beta, [("be-q-1", "zeppelin launch", {"BE-001": 2})])

    document = evaluate_json("--namespace", "beta")

    assert [item["key"] for item in document["results"]] == ["be-q-1"]
    assert all(not packed.startswith("AL-") for item in document["results"] for packed in item["packed"])


def test_evaluating_a_release_is_a_reviewers_action(alpha: Namespace) -> None:
    golden(alpha, ALPHA_QUESTIONS)
    editor = membership(UserFactory(username="edna"), alpha, "editor")

    admin_client(editor).post(
        reverse("admin:knowledge_release_changelist"),
        {"action": "evaluate_golden_questions", "_selected_action": [alpha.active_release_id]},
    )

    assert not EvaluationRun.objects.exists()


def test_the_release_page_shows_the_threshold_and_how_the_build_obtained_it(alpha: Namespace) -> None:
    reviewer = membership(UserFactory(username="rhea"), alpha, "reviewer")

    page = admin_client(reviewer).get(reverse("admin:knowledge_release_change", args=[alpha.active_release_id])).text

    assert "Match threshold" in page
    assert "calibrated automatically from the entries and Evergreen&#x27;s off-topic probes" in page
    assert "probe questions" in page


@pytest.mark.parametrize(
    ("relevant", "says"),
    [
        ('{"AL-001": 2, "al-001": 1}', "names AL-001 twice"),
        ('{"AL-999": 2}', "AL-999 is no entry"),
        ('{"AL-001": "2"}', "relevant maps entry IDs to a grade"),
        ('["AL-001"]', "relevant maps entry IDs to a grade"),
    ],
    ids=["twice", "unknown", "string-grade", "not-a-map"],
)
def test_the_admin_form_checks_expected_entries_as_the_api_does(alpha: Namespace, relevant: str, says: str) -> None:
    """QA: the admin stored what the API refuses (a grade lost to a second spelling, IDs of no entry)."""
    editor = membership(UserFactory(username="edna"), alpha, "editor")
    form = {"namespace": alpha.pk, "key": "al-q-new", "text": "Budgets?", "relevant": relevant, "split": "dev"}

    response = admin_client(editor).post(reverse("admin:knowledge_goldenquestion_add"), form)

    assert response.status_code == 200  # the form again, with the error
    assert says in html.unescape(response.content.decode())
    assert not GoldenQuestion.objects.filter(key="al-q-new").exists()


def test_the_admin_form_stores_expected_entries_as_the_namespace_spells_them(alpha: Namespace) -> None:
    editor = membership(UserFactory(username="edna"), alpha, "editor")
    form = {"namespace": alpha.pk, "key": "al-q-new", "text": "Budgets?", "relevant": '{"al-001": 2}', "split": "dev"}

    response = admin_client(editor).post(reverse("admin:knowledge_goldenquestion_add"), form)

    assert response.status_code == 302
    assert GoldenQuestion.objects.get(key="al-q-new").relevant == {"AL-001": 2}
