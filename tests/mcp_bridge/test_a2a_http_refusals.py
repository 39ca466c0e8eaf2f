"""POST /a2a refusals as an a2a-sdk client sees them: the JSON-RPC error in a 200, never a bare HTTP error,
and a private namespace still indistinguishable from a missing one (docs/protocols.md, A2A HTTP status)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from a2a.client.errors import A2AClientJSONRPCError
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.types import Message, MessageSendParams, Part, Role, TextPart
from django.test import Client

from knowledge.models import Namespace
from knowledge.services.api_keys import api_key_create
from tests.configure import configure
from tests.mcp_bridge.http_calls import post
from tests.servingfixtures import alpha, beta, clean_serving_state, demo, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "demo", "no_rate_limit"]

pytestmark = pytest.mark.django_db


def send_request(request_id: str = "r-1") -> dict[str, Any]:
    message = {"kind": "message", "role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": "zeppelin"}]}
    return {"jsonrpc": "2.0", "id": request_id, "method": "message/send", "params": {"message": message}}


def sdk_sees(response: Any) -> BaseException:
    """What a2a-sdk's JSON-RPC client raises for the answer Django gave (replayed through httpx)."""

    def replay(_: httpx.Request) -> httpx.Response:
        headers = {name: value for name, value in response.items() if name.lower() != "content-length"}
        return httpx.Response(response.status_code, content=response.content, headers=headers)

    async def scenario() -> BaseException:
        async with httpx.AsyncClient(transport=httpx.MockTransport(replay)) as http:
            transport = JsonRpcTransport(http, url="http://testserver/t/beta/a2a")
            message = Message(role=Role.user, message_id="m-1", parts=[Part(root=TextPart(text="zeppelin"))])
            try:
                await transport.send_message(MessageSendParams(message=message))
            except Exception as exc:  # noqa: BLE001 - the test inspects what the SDK raised
                return exc
        raise AssertionError("the SDK accepted a refusal")

    return asyncio.run(scenario())


def test_a_private_namespace_without_its_key_answers_like_a_missing_one_in_a_200(
    client: Client, beta: Namespace
) -> None:
    beta.is_public = False
    beta.save(update_fields=["is_public"])
    _, key = api_key_create(namespace=beta, name="agent", actor=None, check_permission=False)

    anonymous = post(client, "/t/beta/a2a", send_request())
    wrong_key = post(client, "/t/beta/a2a", send_request(), headers={"Authorization": "Bearer egk_wrong"})
    nowhere = post(client, "/t/nosuchns/a2a", send_request())
    admitted = post(client, "/t/beta/a2a", send_request(), headers={"Authorization": f"Bearer {key}"})

    assert anonymous.status_code == wrong_key.status_code == nowhere.status_code == 200
    assert anonymous.content == wrong_key.content == nowhere.content
    assert dict(anonymous.items()).keys() == dict(nowhere.items()).keys()
    body = anonymous.json()
    assert body["id"] == "r-1"
    assert body["error"]["code"] == -32000 and body["error"]["data"]["code"] == "not_found"
    assert admitted.status_code == 200 and admitted.json()["result"]["status"]["state"] == "completed"


def test_an_sdk_client_gets_the_gateway_error_not_a_bare_404(client: Client, beta: Namespace) -> None:
    beta.is_public = False
    beta.save(update_fields=["is_public"])

    raised = sdk_sees(post(client, "/t/beta/a2a", send_request()))

    assert isinstance(raised, A2AClientJSONRPCError), repr(raised)
    assert raised.error.code == -32000
    assert raised.error.message == post(client, "/t/nosuchns/a2a", send_request()).json()["error"]["message"]


@pytest.mark.services
def test_over_the_rate_limit_a2a_answers_200_with_retry_after(client: Client, demo: Namespace, settings: Any) -> None:
    configure(settings, rate_limit="1/hour")

    first = post(client, "/a2a", send_request("a"))
    refused = post(client, "/a2a", send_request("b"))

    assert first.status_code == 200 and "result" in first.json()
    assert refused.status_code == 200
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert refused.json()["id"] == "b" and refused.json()["error"]["data"]["code"] == "rate_limited"
    assert isinstance(sdk_sees(refused), A2AClientJSONRPCError)


def test_a_body_over_the_cap_is_a_200_invalid_request_on_a2a(client: Client, demo: Namespace, settings: Any) -> None:
    configure(settings, mcp_max_body_bytes=1024)
    big = send_request()
    big["params"]["message"]["parts"][0]["text"] = "x" * 2000

    response = post(client, "/a2a", json.dumps(big).encode())

    assert response.status_code == 200
    assert response.json()["error"] == {
        "code": -32600,
        "message": "Request body too large: at most 1024 bytes",
        "data": {"code": "body_too_large"},
    }


def test_a_notification_over_http_is_202_without_a_body(client: Client, demo: Namespace) -> None:
    notification = send_request()
    del notification["id"]

    response = post(client, "/a2a", notification)

    assert response.status_code == 202
    assert response.content == b""
