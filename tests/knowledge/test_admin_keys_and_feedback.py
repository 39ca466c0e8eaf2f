"""API keys are made and revoked by the namespace's admins and shown once; feedback status changes are audited."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from knowledge.models import ApiKey, AuditRecord, Feedback, Namespace, Role
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.feedback import feedback_submit
from tests.factories import UserFactory, membership
from tests.knowledge.adminforms import as_user
from tests.servingfixtures import alpha_rows, clean_serving_state, publish

__all__ = ["clean_serving_state"]

pytestmark = pytest.mark.django_db

KEY = re.compile(r"egk_[A-Za-z0-9_-]{40,}")


@pytest.fixture
def keeper(ns_a: Namespace) -> Any:
    return membership(UserFactory(username="kim"), ns_a, Role.ADMIN)


def _create_key(client: Client, namespace: Namespace) -> Any:
    return client.post(reverse("admin:knowledge_apikey_add"), {"namespace": namespace.pk, "name": "ci agent"})


def test_a_new_key_is_shown_once_in_the_answer_and_nowhere_else(
    ns_a: Namespace, keeper: Any, caplog: pytest.LogCaptureFixture
) -> None:
    namespace = publish(ns_a, alpha_rows())
    namespace.is_public = False
    namespace.save(update_fields=["is_public"])
    client = as_user(keeper)

    response = _create_key(client, namespace)

    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    (secret,) = set(KEY.findall(response.text))
    assert secret not in client.cookies.output()  # the signed messages cookie carried it before
    assert secret not in str(dict(client.session))
    assert secret not in caplog.text
    assert secret not in client.get(reverse("admin:knowledge_apikey_changelist")).text
    key = ApiKey.objects.get()
    assert secret.startswith(key.lookup)
    serving_caches_clear()
    served = Client().get(f"/t/{namespace.slug}/context.json", headers={"Authorization": f"Bearer {secret}"})
    assert served.status_code == 200  # the admin's digest and the gateway's are the same function
    assert AuditRecord.objects.filter(action="api-key-create", actor=keeper).exists()


def test_editors_and_reviewers_neither_see_nor_make_keys(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    for person in (editor, reviewer):
        client = as_user(person)
        assert client.get(reverse("admin:knowledge_apikey_changelist")).status_code == 403
        assert _create_key(client, ns_a).status_code == 403
    assert not ApiKey.objects.exists()


def test_a_namespace_admin_revokes_keys_and_the_revocation_is_audited(ns_a: Namespace, keeper: Any) -> None:
    client = as_user(keeper)
    _create_key(client, ns_a)
    key = ApiKey.objects.get()

    client.post(reverse("admin:knowledge_apikey_changelist"), {"action": "revoke", "_selected_action": [key.pk]})

    key.refresh_from_db()
    assert key.revoked_at is not None
    assert AuditRecord.objects.filter(action="api-key-revoke", actor=keeper).exists()


def test_there_is_one_definition_of_the_key_digest() -> None:
    """Issue 10: two copies meant keys would silently stop validating the day one of them changed."""
    root = Path(settings.BASE_DIR)
    sources = [p for folder in ("knowledge", "gateway", "api", "mcp_bridge") for p in (root / folder).rglob("*.py")]
    defining = [p for p in sources if "def api_key_digest" in p.read_text(encoding="utf-8")]
    assert [p.relative_to(root).as_posix() for p in defining] == ["knowledge/models/namespace.py"]


@pytest.fixture
def report(ns_a: Namespace) -> Feedback:
    return feedback_submit(namespace=ns_a, kind="outdated", message="AL-001 is old.", entry_public_id="AL-001")


def test_an_editor_marks_feedback_handled_and_the_change_is_audited(editor: Any, report: Feedback) -> None:
    as_user(editor).post(
        reverse("admin:knowledge_feedback_changelist"), {"action": "mark_done", "_selected_action": [report.pk]}
    )

    report.refresh_from_db()
    assert report.status == Feedback.Status.DONE
    record = AuditRecord.objects.get(action="feedback-status")
    assert (record.actor, record.field, record.old_value, record.new_value) == (editor, "status", "open", "done")


def test_feedback_of_a_namespace_where_one_only_reviews_cannot_be_dismissed(
    ns_b: Namespace, ns_a: Namespace, editor: Any, report: Feedback
) -> None:
    reviewer_of_alpha = membership(UserFactory(username="rho"), ns_a, Role.REVIEWER)
    membership(reviewer_of_alpha, ns_b, Role.EDITOR)

    as_user(reviewer_of_alpha).post(
        reverse("admin:knowledge_feedback_changelist"), {"action": "mark_dismissed", "_selected_action": [report.pk]}
    )
    page = as_user(reviewer_of_alpha).post(
        reverse("admin:knowledge_feedback_change", args=[report.pk]), {"status": Feedback.Status.DISMISSED}
    )

    assert page.status_code == 403
    report.refresh_from_db()
    assert report.status == Feedback.Status.OPEN
    assert not AuditRecord.objects.filter(action="feedback-status").exists()
