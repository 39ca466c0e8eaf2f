"""A2A tasks keep the clearance they were made with: a caller not cleared as far gets TaskNotFound, exactly as
for a task id nobody made (tasks/get, tasks/cancel, a continuation in message/send)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client

from knowledge.models import A2ATask, ApiKey, Namespace
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.api_keys import api_key_create, api_key_revoke
from tests.servingfixtures import alpha_rows, beta_rows, clean_serving_state, no_rate_limit, publish

__all__ = ["clean_serving_state", "no_rate_limit"]

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_rate_limit")]

INTERNAL_MARK = "HANGARCODE4417"
RESTRICTED_MARK = "MOONBASESEVEN"
UNKNOWN_ID = "0" * 32


def _hidden(prefix: str) -> list[dict[str, Any]]:
    base = {"category": "fact", "tags": ["zeppelin"], "updated": "2026-08-01"}
    return [
        {
            **base,
            "id": f"{prefix}-901",
            "title": "Zeppelin hangar access",
            "summary": "How staff open the zeppelin hangar.",
            "body": f"The hangar opens with code {INTERNAL_MARK}.",
            "sensitivity": "internal",
        },
        {
            **base,
            "id": f"{prefix}-902",
            "title": "Zeppelin board meetings",
            "summary": "Where the zeppelin board meets.",
            "body": f"The board meets at {RESTRICTED_MARK}.",
            "sensitivity": "restricted",
        },
    ]


def _key(namespace: Namespace, clearance: str, name: str = "") -> str:
    _, raw = api_key_create(
        namespace=namespace, name=name or clearance, actor=None, clearance=clearance, check_permission=False
    )
    return raw


@pytest.fixture
def keys(ns_a: Namespace, ns_b: Namespace) -> dict[str, str]:
    """Alpha (public) and beta (private), both with an internal and a restricted entry, and keys of each level."""
    publish(ns_a, [*alpha_rows(), *_hidden("AL")])
    Namespace.objects.filter(pk=ns_b.pk).update(is_public=False)
    publish(ns_b, [*beta_rows(), *_hidden("BE")])
    return {
        f"{slug} {level}": _key(namespace, level)
        for slug, namespace in (("alpha", ns_a), ("beta", ns_b))
        for level in ("public", "internal", "restricted")
    }


def _post(client: Client, slug: str, key: str | None, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = client.post(f"/t/{slug}/a2a", json.dumps(body), content_type="application/json", headers=headers)
    assert response.status_code == 200, response.content
    return response


def _send(client: Client, slug: str, key: str | None, entry_id: str) -> str:
    """message/send: the get_entry skill for `entry_id`; returns the task id (the answer holds the entry)."""
    data = {"skill": "get_entry", "arguments": {"id": entry_id}}
    message = {"kind": "message", "role": "user", "messageId": "m-1", "parts": [{"kind": "data", "data": data}]}
    result = _post(client, slug, key, "message/send", {"message": message}).json()["result"]
    assert result["status"]["state"] == "completed"
    return str(result["id"])


def _not_found_like_unknown(client: Client, slug: str, key: str | None, method: str, task_id: str) -> None:
    """`method` on `task_id` answers byte for byte as on a task id nobody made, but for the id."""
    hidden = _post(client, slug, key, method, {"id": task_id}).content.decode()
    unknown = _post(client, slug, key, method, {"id": UNKNOWN_ID}).content.decode()

    assert json.loads(hidden)["error"]["code"] == -32001
    assert hidden == unknown.replace(UNKNOWN_ID, task_id)


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel"])
@pytest.mark.parametrize("caller", ["beta public", "beta internal"])
def test_a_restricted_task_of_a_private_namespace_is_not_found_below_restricted(
    client: Client, keys: dict[str, str], method: str, caller: str
) -> None:
    task_id = _send(client, "beta", keys["beta restricted"], "BE-902")

    _not_found_like_unknown(client, "beta", keys[caller], method, task_id)
    fetched = _post(client, "beta", keys["beta restricted"], "tasks/get", {"id": task_id}).json()
    assert RESTRICTED_MARK in json.dumps(fetched["result"])


def test_an_internal_task_of_a_public_namespace_is_not_found_without_a_key_even_after_the_key_is_revoked(
    client: Client, keys: dict[str, str], ns_a: Namespace
) -> None:
    task_id = _send(client, "alpha", keys["alpha internal"], "AL-901")

    _not_found_like_unknown(client, "alpha", None, "tasks/get", task_id)
    _not_found_like_unknown(client, "alpha", keys["alpha public"], "tasks/get", task_id)
    api_key_revoke(key=ApiKey.objects.get(namespace=ns_a, name="internal"), actor=None, check_permission=False)
    serving_caches_clear()  # the key check is cached per process for a moment
    _not_found_like_unknown(client, "alpha", keys["alpha internal"], "tasks/get", task_id)
    for key in (_key(ns_a, "internal", "another"), keys["alpha restricted"]):
        assert INTERNAL_MARK in json.dumps(_post(client, "alpha", key, "tasks/get", {"id": task_id}).json())


def test_a_continuation_of_a_task_above_the_clearance_is_not_found_either(client: Client, keys: dict[str, str]) -> None:
    task_id = _send(client, "alpha", keys["alpha restricted"], "AL-902")

    def continued(ref: str) -> str:
        message = {"kind": "message", "role": "user", "messageId": "m-2", "taskId": ref, "parts": [{"text": "more"}]}
        return str(_post(client, "alpha", None, "message/send", {"message": message}).content.decode())

    hidden, unknown = continued(task_id), continued(UNKNOWN_ID)
    assert json.loads(hidden)["error"]["code"] == -32001
    assert hidden == unknown.replace(UNKNOWN_ID, task_id)


def test_a_public_task_is_read_back_by_anyone_who_may_read_the_namespace(client: Client, keys: dict[str, str]) -> None:
    task_id = _send(client, "alpha", None, "AL-001")

    for key in (None, keys["alpha public"], keys["alpha restricted"]):
        assert _post(client, "alpha", key, "tasks/get", {"id": task_id}).json()["result"]["id"] == task_id


def test_a_task_stored_before_clearances_were_recorded_reads_as_restricted(
    client: Client, keys: dict[str, str], ns_a: Namespace
) -> None:
    task = {"kind": "task", "id": "legacy", "contextId": "c", "status": {"state": "completed"}}
    A2ATask.objects.create(namespace=ns_a, task_id="legacy", task=task, saved_at=datetime.now(UTC))

    _not_found_like_unknown(client, "alpha", keys["alpha internal"], "tasks/get", "legacy")
    assert _post(client, "alpha", keys["alpha restricted"], "tasks/get", {"id": "legacy"}).json()["result"] == task


def test_a_stored_task_keeps_the_clearance_it_was_made_with(client: Client, keys: dict[str, str]) -> None:
    task_id = _send(client, "beta", keys["beta internal"], "BE-901")

    assert A2ATask.objects.get(task_id=task_id).clearance == "internal"


@pytest.mark.parametrize("method", ["tasks/resubscribe", "tasks/pushNotificationConfig/get"])
def test_methods_that_never_load_a_task_answer_alike_for_any_id(
    client: Client, keys: dict[str, str], method: str
) -> None:
    task_id = _send(client, "beta", keys["beta restricted"], "BE-902")

    hidden = _post(client, "beta", keys["beta public"], method, {"id": task_id}).content
    unknown = _post(client, "beta", keys["beta public"], method, {"id": UNKNOWN_ID}).content

    assert hidden == unknown and b"error" in hidden
