"""A2A v0.3.0 JSON-RPC without HTTP objects: message/send, tasks/get and tasks/cancel over the tool registry."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypeGuard

from mcp_bridge.a2a_card import OUTPUT_MODES, PROTOCOL_VERSION, build_agent_card
from mcp_bridge.a2a_extensions import supported_extensions
from mcp_bridge.jsonrpc import (
    INTERNAL_ERROR,
    INTERNAL_ERROR_MESSAGE,
    INVALID_BODY_MESSAGE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    METHOD_NOT_FOUND_MESSAGE,
    JsonRpcError,
    Outcome,
    RequestId,
    clean_request_id,
    decode_json,
    envelope_is_valid,
    error_body,
    request_refusal,
    result_body,
    whole_number,
)
from mcp_bridge.ports import Backend, TaskQuotaError, TaskStore
from mcp_bridge.tools import ToolResult, build_tools, call_tool, find_tool

__all__ = ["activated_extensions", "build_agent_card", "handle_a2a_post"]

logger = logging.getLogger(__name__)

# A2A v0.3.0 §8.2.
TASK_NOT_FOUND: Final = -32001
TASK_NOT_CANCELABLE: Final = -32002
PUSH_NOTIFICATION_NOT_SUPPORTED: Final = -32003
UNSUPPORTED_OPERATION: Final = -32004
CONTENT_TYPE_NOT_SUPPORTED: Final = -32005
AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED: Final = -32007
# A2A 1.0 §5.4; a 1.0 client may send it our way, so we answer with it.
VERSION_NOT_SUPPORTED: Final = -32009
SERVED_VERSION: Final = ".".join(PROTOCOL_VERSION.split(".")[:2])

VERSION_NOT_SUPPORTED_MESSAGE: Final = (
    "A2A version {requested} is not supported: this agent speaks A2A {served} "
    "(send A2A-Version: {served} or no header, and the methods message/send, tasks/get, tasks/cancel)"
)
V1_METHOD_MESSAGE: Final = (
    "Method not found: {method} is an A2A 1.0 method; this agent speaks A2A {served}, where it is {equivalent}"
)
TASK_NOT_FOUND_MESSAGE: Final = "Task not found"
TASK_NOT_CANCELABLE_MESSAGE: Final = "Task cannot be canceled"
PUSH_NOT_SUPPORTED_MESSAGE: Final = "Push Notification is not supported"
STREAMING_NOT_SUPPORTED_MESSAGE: Final = "This operation is not supported: streaming is off (capabilities.streaming)"
TERMINAL_TASK_MESSAGE: Final = "This operation is not supported: task {id} is {state} and cannot accept messages"
EXTENDED_CARD_MESSAGE: Final = "Authenticated Extended Card is not configured"
FILE_PART_MESSAGE: Final = "Incompatible content types: file parts are not supported; send text or data parts"
OUTPUT_MODES_MESSAGE: Final = "Incompatible content types: this agent answers in {modes}"
INVALID_MESSAGE_MESSAGE: Final = (
    "params.message must be a message with a messageId, role and at least one part "
    "(messageId, contextId and taskId at most 128 characters)"
)
INVALID_PART_MESSAGE: Final = "Unrecognized part: each part needs kind text (text) or data (data object)"
ONE_DATA_PART_MESSAGE: Final = (
    "One skill call per message: send at most one data part (this message has {count}); send one message per skill call"
)
INVALID_ID_MESSAGE: Final = "Request id must be a string, an integer or null"
UNKNOWN_DATA_KEYS_MESSAGE: Final = "Unsupported data part keys: {keys}"
DATA_KEY_TYPE_MESSAGE: Final = "data.{key} must be {kind}"
UNKNOWN_SKILL_MESSAGE: Final = "Unknown skill: {skill}"
INVALID_TASK_ID_MESSAGE: Final = "params.id must be a task id string"
INVALID_HISTORY_LENGTH_MESSAGE: Final = "{param} must be a non-negative integer"

# Implementation-defined server error (JSON-RPC 2.0 §5.1), as the gateway's refusals; data says which quota.
QUOTA_EXCEEDED: Final = -32000
QUOTA_CODE: Final = "a2a_task_quota"
ID_MAX_LENGTH: Final = 128
HISTORY_TEXT_MAX: Final = 2000
HISTORY_PARTS_MAX: Final = 8

# A2A 1.0 §5.3 renamed the JSON-RPC methods; a 1.0 client without A2A-Version is told the 0.3 name.
V1_METHODS: Final = {
    "SendMessage": "message/send",
    "SendStreamingMessage": "message/stream (not offered: streaming is off)",
    "GetTask": "tasks/get",
    "ListTasks": "not offered",
    "CancelTask": "tasks/cancel",
    "SubscribeToTask": "tasks/resubscribe (not offered: streaming is off)",
    "CreateTaskPushNotificationConfig": "not offered (no push notifications)",
    "GetTaskPushNotificationConfig": "not offered (no push notifications)",
    "ListTaskPushNotificationConfigs": "not offered (no push notifications)",
    "DeleteTaskPushNotificationConfig": "not offered (no push notifications)",
    "GetExtendedAgentCard": "not offered (no extended card)",
}
TERMINAL_STATES: Final = frozenset({"completed", "canceled", "failed", "rejected"})
DEFAULT_SKILL: Final = "search_context"
# The data part of message/send (seed §5 ③ / issue 4): {topic, budget, category} (+ limit), or a skill call.
SEARCH_KEYS: Final = {
    "topic": "query",
    "budget": "budget",
    "category": "category",
    "limit": "limit",
    "budgetMode": "budgetMode",
    "paths": "paths",
}
DATA_KEYS: Final = frozenset({*SEARCH_KEYS, "skill", "arguments"})
STREAMING_METHODS: Final = frozenset({"message/stream", "tasks/resubscribe"})
PUSH_METHODS: Final = frozenset(
    {
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
    }
)


def _timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC, as the domain writes its own (knowledge.retrieval.timestamps)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


def activated_extensions(header: str | None, base_url: str) -> tuple[str, ...]:
    """v0.3 extensions: the ``X-A2A-Extensions`` URIs we support, to echo in the response header."""
    requested = [uri.strip() for uri in (header or "").split(",")]
    return tuple(uri for uri in supported_extensions(base_url) if uri in requested)


def _major_minor(version: str) -> str:
    return ".".join(version.strip().split(".")[:2])


def check_version(requested: str | None) -> None:
    """A2A 1.0 §3.6.2: requests carry ``A2A-Version`` (Major.Minor; empty means 0.3) and an agent that
    does not serve it MUST answer VersionNotSupportedError. Earlier revisions had no such header, so a
    0.3 client never sends anything but 0.3 or nothing."""
    if not requested or not requested.strip() or _major_minor(requested) == SERVED_VERSION:
        return
    data = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "VERSION_NOT_SUPPORTED",
            "domain": "a2a-protocol.org",
            "metadata": {"requestedVersion": requested.strip(), "supportedVersions": SERVED_VERSION},
        }
    ]
    message = VERSION_NOT_SUPPORTED_MESSAGE.format(requested=requested.strip()[:20], served=SERVED_VERSION)
    raise JsonRpcError(VERSION_NOT_SUPPORTED, message, data)


class _Dispatch:
    """One A2A request against one namespace's backend and task store."""

    def __init__(
        self, backend: Backend, tasks: TaskStore, now: Callable[[], datetime], new_id: Callable[[], str]
    ) -> None:
        self.backend = backend
        self.tasks = tasks
        self.now = now
        self.new_id = new_id

    def run(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if method == "message/send":
            return self.send(params)
        if method == "tasks/get":
            return self.get(params)
        if method == "tasks/cancel":
            return self.cancel(params)
        if method in STREAMING_METHODS:
            raise JsonRpcError(UNSUPPORTED_OPERATION, STREAMING_NOT_SUPPORTED_MESSAGE, reason="unsupported_operation")
        if method in PUSH_METHODS:
            raise _push_not_supported()
        if method == "agent/getAuthenticatedExtendedCard":
            raise JsonRpcError(
                AUTHENTICATED_EXTENDED_CARD_NOT_CONFIGURED, EXTENDED_CARD_MESSAGE, reason="extended_card_not_configured"
            )
        if method in V1_METHODS:
            message = V1_METHOD_MESSAGE.format(method=method, served=SERVED_VERSION, equivalent=V1_METHODS[method])
            raise JsonRpcError(METHOD_NOT_FOUND, message, {"supportedVersions": [SERVED_VERSION]})
        raise JsonRpcError(METHOD_NOT_FOUND, METHOD_NOT_FOUND_MESSAGE)

    def _load(self, params: Mapping[str, Any]) -> tuple[dict[str, Any], int | None]:
        """The task ``params.id`` names and the history length asked for (None: all of it)."""
        task_id = params.get("id")
        if not isinstance(task_id, str):
            raise JsonRpcError(INVALID_PARAMS, INVALID_TASK_ID_MESSAGE, {"param": "params.id"})
        length = _history_length(params.get("historyLength"))
        if length is False:
            raise _invalid_history_length("params.historyLength")
        task = self.tasks.load(task_id)
        if task is None:
            raise _task_not_found(task_id)
        return task, length

    def get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        task, length = self._load(params)
        return _trim_history(task, length)

    def cancel(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """§7.4; every Evergreen task finishes inside ``message/send``, so this answers -32002 in practice."""
        task, _ = self._load(params)
        state = task["status"]["state"]
        if state in TERMINAL_STATES:
            data = {"id": task["id"], "state": state}
            raise JsonRpcError(TASK_NOT_CANCELABLE, TASK_NOT_CANCELABLE_MESSAGE, data, reason="task_not_cancelable")
        task["status"] = {"state": "canceled", "timestamp": _timestamp(self.now())}
        self.tasks.save(task)
        return task

    def send(self, params: Mapping[str, Any]) -> dict[str, Any]:
        message = params.get("message")
        if not _is_user_message(message):
            raise _invalid_message("params.message")
        configuration = params.get("configuration") or {}
        if not isinstance(configuration, dict):
            raise _invalid_message("params.configuration")
        _check_configuration(configuration)
        texts, data, where = _read_parts(message["parts"])
        self._refuse_continuation(message)
        skill, arguments = _skill_call(texts, data, where)
        tool = find_tool(build_tools(self.backend.namespace()), skill)
        if tool is None:
            named = {"skill": skill, "param": f"{where}.skill"}
            raise JsonRpcError(INVALID_PARAMS, UNKNOWN_SKILL_MESSAGE.format(skill=skill), named, reason="unknown_skill")
        self._admit()
        result = call_tool(tool, arguments, self.backend)
        if result.error == "invalid_arguments":
            raise JsonRpcError(INVALID_PARAMS, result.note, result.details)
        task = self._task(_recorded(message, texts, data, skill, arguments), skill, result)
        self.tasks.save(task)
        return _trim_history(task, configuration.get("historyLength"))

    def _admit(self) -> None:
        """The storage quotas, checked before the skill runs so a refusal has no side effect."""
        try:
            self.tasks.admit()
        except TaskQuotaError as exc:
            data = {"code": QUOTA_CODE, "message": exc.message, "param": None, "scope": exc.scope}
            raise JsonRpcError(QUOTA_EXCEEDED, exc.message, {**data, "retryAfter": exc.retry_after}) from exc

    def _refuse_continuation(self, message: Mapping[str, Any]) -> None:
        """§7.1: a task in a terminal state cannot be restarted; an unknown one is not found."""
        task_id = message.get("taskId")
        if task_id is None:
            return
        task = self.tasks.load(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise _task_not_found(task_id)
        state = task["status"]["state"]
        message_text = TERMINAL_TASK_MESSAGE.format(id=task_id, state=state)
        raise JsonRpcError(UNSUPPORTED_OPERATION, message_text, {"id": task_id, "state": state}, reason="task_terminal")

    def _task(self, message: Mapping[str, Any], skill: str, result: ToolResult) -> dict[str, Any]:
        task_id = self.new_id()
        context_id = message.get("contextId")
        if not isinstance(context_id, str) or not context_id:
            context_id = self.new_id()
        stamp = _timestamp(self.now())
        history = [{**message, "kind": "message", "taskId": task_id, "contextId": context_id}]
        task: dict[str, Any] = {"kind": "task", "id": task_id, "contextId": context_id, "history": history}
        if result.error is None:
            parts = [{"kind": "data", "data": result.structured}, {"kind": "text", "text": result.note}]
            task["status"] = {"state": "completed", "timestamp": stamp}
            task["artifacts"] = [{"artifactId": self.new_id(), "name": skill, "parts": parts}]
            return task
        status_parts: list[dict[str, Any]] = [{"kind": "text", "text": result.note}]
        if result.details is not None:
            status_parts.append({"kind": "data", "data": result.details})
        reply = {
            "kind": "message",
            "messageId": self.new_id(),
            "role": "agent",
            "parts": status_parts,
            "taskId": task_id,
            "contextId": context_id,
        }
        task["status"] = {"state": "failed", "message": reply, "timestamp": stamp}
        return task


def _is_user_message(message: object) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(message, dict)
        and message.get("role") == "user"
        and isinstance(message.get("messageId"), str)
        and 0 < len(message["messageId"]) <= ID_MAX_LENGTH
        and isinstance(message.get("parts"), list)
        and bool(message["parts"])
        and message.get("kind", "message") == "message"
        and all(_is_short_id(message.get(name)) for name in ("contextId", "taskId"))
    )


def _is_short_id(value: object) -> bool:
    return value is None or not isinstance(value, str) or len(value) <= ID_MAX_LENGTH


def _recorded(
    message: Mapping[str, Any], texts: list[str], data: Mapping[str, Any], skill: str, arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """The user's message as the task keeps it: its ids, its text (bounded) and the call it was understood as.

    Metadata, unknown part fields and data keys that were not used are not stored: a task keeps what
    ``tasks/get`` needs, not whatever a client chose to send along (issue 9: storage quotas).
    """
    parts: list[dict[str, Any]] = [
        {"kind": "text", "text": text[:HISTORY_TEXT_MAX]} for text in texts[:HISTORY_PARTS_MAX]
    ]
    if data:
        parts.append({"kind": "data", "data": {"skill": skill, "arguments": dict(arguments)}})
    recorded = {"kind": "message", "role": "user", "messageId": message["messageId"], "parts": parts}
    return recorded | {name: message[name] for name in ("contextId", "taskId") if isinstance(message.get(name), str)}


def _task_not_found(task_id: object) -> JsonRpcError:
    return JsonRpcError(TASK_NOT_FOUND, TASK_NOT_FOUND_MESSAGE, {"id": task_id}, reason="task_not_found")


def _push_not_supported() -> JsonRpcError:
    return JsonRpcError(PUSH_NOTIFICATION_NOT_SUPPORTED, PUSH_NOT_SUPPORTED_MESSAGE, reason="push_not_supported")


def _content_type_not_supported(message: str) -> JsonRpcError:
    return JsonRpcError(CONTENT_TYPE_NOT_SUPPORTED, message, reason="content_type_not_supported")


def _invalid_message(param: str) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, INVALID_MESSAGE_MESSAGE, {"param": param}, reason="invalid_message")


def _check_configuration(configuration: Mapping[str, Any]) -> None:
    if configuration.get("pushNotificationConfig") is not None:
        raise _push_not_supported()
    accepted = configuration.get("acceptedOutputModes") or []
    if not isinstance(accepted, list) or not all(isinstance(mode, str) for mode in accepted):
        raise _invalid_message("params.configuration.acceptedOutputModes")
    if accepted and not ({mode.lower() for mode in accepted} & {*OUTPUT_MODES, "*/*"}):
        raise _content_type_not_supported(OUTPUT_MODES_MESSAGE.format(modes=", ".join(OUTPUT_MODES)))
    if _history_length(configuration.get("historyLength")) is False:
        raise _invalid_history_length("params.configuration.historyLength")


def _invalid_history_length(param: str) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, INVALID_HISTORY_LENGTH_MESSAGE.format(param=param), {"param": param})


def _part_kind(part: Mapping[str, Any]) -> str | None:
    kind = part.get("kind")
    if isinstance(kind, str):
        return kind
    return next((key for key in ("text", "data", "file") if key in part), None)


def _read_parts(parts: list[Any]) -> tuple[list[str], dict[str, Any], str]:
    """Text parts make the topic; the one data part (if any) says what runs, and where it is; file parts are refused.

    One message is one skill call (the agent card's description): a second data part is -32602 rather
    than merged, so no call is dropped or half-overwritten without the client knowing.
    """
    texts: list[str] = []
    data_parts: list[tuple[int, dict[str, Any]]] = []
    for index, part in enumerate(parts):
        kind = _part_kind(part) if isinstance(part, dict) else None
        if kind == "file":
            raise _content_type_not_supported(FILE_PART_MESSAGE)
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "data" and isinstance(part.get("data"), dict):
            data_parts.append((index, part["data"]))
        else:
            data = {"param": f"params.message.parts[{index}]"}
            raise JsonRpcError(INVALID_PARAMS, INVALID_PART_MESSAGE, data, reason="invalid_part")
    if len(data_parts) > 1:
        message = ONE_DATA_PART_MESSAGE.format(count=len(data_parts))
        raise JsonRpcError(INVALID_PARAMS, message, {"param": "params.message.parts"}, reason="too_many_data_parts")
    index, data = data_parts[0] if data_parts else (len(parts), {})
    where = f"params.message.parts[{index}].data"
    unknown = sorted(set(data) - DATA_KEYS)
    if unknown:
        message = UNKNOWN_DATA_KEYS_MESSAGE.format(keys=", ".join(unknown))
        raise JsonRpcError(INVALID_PARAMS, message, {"keys": unknown, "param": where}, reason="unknown_data_keys")
    return texts, data, where


def _wrong_type(where: str, key: str, kind: str) -> JsonRpcError:
    """A known data-part key holding the wrong type: which key, and which JSON type it takes."""
    message = DATA_KEY_TYPE_MESSAGE.format(key=key, kind=kind)
    data = {"param": f"{where}.{key}", "expected": kind.rsplit(maxsplit=1)[-1]}
    return JsonRpcError(INVALID_PARAMS, message, data, reason="invalid_data_part")


def _skill_call(texts: list[str], data: Mapping[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """Which tool runs and with what: ``data.skill`` + ``data.arguments``, else a context search."""
    skill = data.get("skill", DEFAULT_SKILL)
    if not isinstance(skill, str):
        raise _wrong_type(where, "skill", "a string")
    if "arguments" in data:
        arguments = data["arguments"]
        if not isinstance(arguments, dict):
            raise _wrong_type(where, "arguments", "an object")
        return skill, dict(arguments)
    if skill != DEFAULT_SKILL:
        return skill, {}
    arguments = {SEARCH_KEYS[key]: value for key, value in data.items() if key in SEARCH_KEYS}
    arguments.setdefault("query", " ".join(text.strip() for text in texts if text.strip()))
    return skill, arguments


def _history_length(value: object) -> int | None | Literal[False]:
    """``historyLength``: None when absent, a non-negative whole number (``2.0`` too), else False."""
    if value is None:
        return None
    length = whole_number(value)
    return length if length is not None and length >= 0 else False


def _trim_history(task: dict[str, Any], length: object) -> dict[str, Any]:
    wanted = _history_length(length)
    if isinstance(wanted, int) and not isinstance(wanted, bool):
        history = task.get("history") or []
        return {**task, "history": history[len(history) - wanted :] if wanted else []}
    return task


def _request_id(message: Mapping[str, Any]) -> RequestId | None:
    """The id to answer with: a string, an integer (``3.0`` reads as 3, the same JSON number) or null.

    JSON-RPC 2.0 §4 and A2A v0.3.0 §6.11: an id is a string, a number or null, and numbers SHOULD NOT
    have fractional parts. Any other value, and a fractional number, is Invalid Request answered with id
    null before anything runs — as a2a-sdk's server does (its ``JSONRPCRequest.id`` is ``str | int |
    None``; its client's response models cannot carry ``1.5`` back either). A string that is not clean
    text reads as null here and is refused by ``request_refusal``.
    """
    value = message.get("id")
    if value is None or isinstance(value, str):
        return clean_request_id(message)
    number = whole_number(value)
    if number is None:
        raise JsonRpcError(INVALID_REQUEST, INVALID_ID_MESSAGE)
    return number


def handle_a2a_post(
    body: bytes,
    backend: Backend,
    tasks: TaskStore,
    *,
    extensions_header: str | None = None,
    version: str | None = None,
    now: Callable[[], datetime] = _utcnow,
    new_id: Callable[[], str] = _new_id,
) -> Outcome:
    """Answer one POST to the card's ``url``. Never raises.

    Errors travel in HTTP 200 like the SDK's server does: the SDK client raises on any non-2xx status
    before it reads the JSON-RPC error (``a2a/client/transports/jsonrpc.py``). A notification (a valid
    request without an ``id`` member) runs nothing and gets no reply (JSON-RPC 2.0 §4.1, A2A v0.3.0 §6.11:
    every A2A method expects a response, so none is meant as a notification): 202 and no body, as on /mcp.
    """
    activated = activated_extensions(extensions_header, backend.namespace().base_url)
    headers = (("X-A2A-Extensions", ", ".join(activated)),) if activated else ()
    request_id: RequestId | None = None
    try:
        message = decode_json(body)
        if not isinstance(message, dict):
            raise JsonRpcError(INVALID_REQUEST, INVALID_BODY_MESSAGE)
        request_id = _request_id(message)
        if not envelope_is_valid(message):
            raise JsonRpcError(INVALID_REQUEST, INVALID_BODY_MESSAGE)
        if "id" not in message:
            return Outcome(202)
        refusal = request_refusal(message)
        if refusal is not None:
            raise refusal
        check_version(version)
        result = _Dispatch(backend, tasks, now, new_id).run(message["method"], message.get("params") or {})
    except JsonRpcError as exc:
        return Outcome(200, error_body(request_id, exc.code, exc.message, exc.data), headers)
    except Exception:
        logger.exception("A2A request failed")
        return Outcome(200, error_body(request_id, INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE), headers)
    return Outcome(200, result_body(request_id, result), headers)
