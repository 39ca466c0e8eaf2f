"""Hypothesis strategies for hostile JSON-RPC requests to /mcp (both eras) and /a2a, as raw JSON text.

The text is written by hand rather than with json.dumps so that requests can hold what a hostile or
sloppy client sends and Python would never write: repeated keys, lone surrogate escapes, literals that
decode to infinity or to integers thousands of digits long, and nesting deeper than any real request.
Most values stay plausible, so requests reach the tool handlers, the database and the task store
instead of all stopping at the envelope check.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TASK_PLACEHOLDER = "@@task@@"  # replaced at send time by the id of the last task the server created

SURROGATES = ("\ud800", "\udfff", "\udc00\ud800", "\ud83d")  # lone halves, reversed pair, half an emoji
HOSTILE_TEXT = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "\u202e\u200b",
    "😀" * 40,
    "Ω" * 600,
    "x" * 5000,
    "EG-" + "9" * 80,
    "../../etc/passwd",
    "<img src=x onerror=alert(1)>",
    "' OR 1=1 --",
    "${base_url}",
    "%s%n{0}{}",
)
NUMBER_LITERALS = (
    "0",
    "-0",
    "-0.0",
    "600.0",
    "600.5",
    "2.0",
    "1e3",
    "1E400",
    "1e999",
    "-1e999",
    "1e-999",
    "9" * 30,
    "-" + "9" * 30,
    "9" * 4000,
    "12345678901234567890.0",
)


def _deep(depth: int, *, as_object: bool) -> str:
    if as_object:
        return '{"a":' * depth + "1" + "}" * depth
    return "[" * depth + "]" * depth


DEEP_LITERALS = tuple(_deep(d, as_object=o) for d in (31, 40, 200, 900, 5000) for o in (False, True))
HUGE_LITERALS = (json.dumps("y" * 70_000), "[" + ",".join(["1"] * 20_000) + "]")


def mostly(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any], one_in: int) -> st.SearchStrategy[Any]:
    """``rare`` about once in ``one_in`` draws (st.one_of weighs its branches alike, duplicates or not)."""
    return st.sampled_from(range(one_in)).flatmap(lambda i: rare if i == one_in - 1 else common)


def text_literal(text: str) -> str:
    """A JSON string; ensure_ascii writes a lone surrogate as the escape a hostile client would send."""
    return json.dumps(text)


surrogate_text = st.builds(
    lambda head, bad, tail: head + bad + tail, st.text(max_size=8), st.sampled_from(SURROGATES), st.text(max_size=8)
)
plain_text = st.text(st.characters(exclude_characters="\x00"), max_size=30)
strings = mostly(plain_text, st.one_of(st.text(max_size=30), st.sampled_from(HOSTILE_TEXT), surrogate_text), 6)
string_literals = strings.map(text_literal)
scalar_literals = st.one_of(
    string_literals,
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(NUMBER_LITERALS),
    st.sampled_from(("true", "false", "null")),
)


def object_literal(pairs: list[tuple[str, str]]) -> str:
    """A JSON object from (key, value literal) pairs: keys may repeat (the decoder keeps the last)."""
    return "{" + ",".join(f"{text_literal(key)}:{value}" for key, value in pairs) + "}"


def array_literal(items: list[str]) -> str:
    return "[" + ",".join(items) + "]"


keys = mostly(st.one_of(plain_text, st.sampled_from(("id", "kind", "text", "data"))), st.sampled_from(SURROGATES), 6)
nested_literals = st.recursive(
    scalar_literals,
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(array_literal),
        st.lists(st.tuples(keys, children), max_size=4).map(object_literal),
    ),
    max_leaves=12,
)
# Pathological sizes and depths are one draw in eight, so most requests stay under the body cap.
any_literals = mostly(nested_literals, st.sampled_from(DEEP_LITERALS + HUGE_LITERALS), 8)


def rarely(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws (and never the value Hypothesis starts from, so normal comes first)."""
    return bool(draw(st.sampled_from(range(one_in))) == one_in - 1)


def plausible_or_hostile(plausible: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Mostly a value the handler expects (eleven in twelve), sometimes anything at all."""
    return mostly(plausible, any_literals, 12)


@st.composite
def fields(
    draw: st.DrawFn, spec: dict[str, st.SearchStrategy[str]], *, required: tuple[str, ...] = (), extra: bool = True
) -> str:
    """An object of ``spec``'s fields: required ones 19 times in 20, optional ones half the time, in any
    order; now and then a field repeated or an unknown one added."""
    pairs = []
    for name in sorted(spec):
        if not rarely(draw, 20) if name in required else draw(st.booleans()):
            pairs.append((name, draw(plausible_or_hostile(spec[name]))))
    if pairs and rarely(draw, 20):
        pairs.append((draw(st.sampled_from(pairs))[0], draw(any_literals)))
    if extra and rarely(draw, 10):
        pairs.append((draw(keys), draw(any_literals)))
    return object_literal(draw(st.permutations(pairs)))


def _lit(value: Any) -> str:
    return json.dumps(value)


def _choice(*values: Any) -> st.SearchStrategy[str]:
    return st.sampled_from([_lit(value) for value in values])


words = st.sampled_from(["token budget", "alpha", "pricing", "预算", "", "Tuesday product", "zeppelin"]).map(_lit)
budgets = st.one_of(
    st.integers(100, 9000).map(str),
    st.integers(100, 9000).map(lambda n: f"{n}.0"),
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(NUMBER_LITERALS),
)
counts = st.one_of(st.integers(0, 60).map(str), st.integers(0, 60).map(lambda n: f"{n}.0"), budgets)
entry_ids = st.one_of(_choice("AL-001", "AL-002", "AL-201", "al-001 ", "BE-001", "AL-999"), string_literals)

ARGUMENTS = {
    "search_context": {"query": words, "budget": budgets, "limit": counts, "category": _choice("fact", "rule", "x")},
    "get_entry": {"id": entry_ids, "version": counts},
    "get_prompt_pack": {"scenario": _choice("chat", "coding", "research", "support", "nope")},
    "get_metrics": {},
    "submit_feedback": {
        "kind": _choice("outdated", "incorrect", "missing", "other", "spam"),
        "message": st.one_of(words, string_literals),
        "entryId": entry_ids,
        "query": words,
    },
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "search_context": ("query",),
    "get_entry": ("id",),
    "get_prompt_pack": ("scenario",),
    "submit_feedback": ("kind", "message"),
}
tool_names = mostly(st.sampled_from(sorted(ARGUMENTS)), st.sampled_from(["nope", "search_context "]), 8)


def tool_arguments(name: str) -> st.SearchStrategy[str]:
    spec = ARGUMENTS.get(name.strip(), {"query": words})
    return fields(spec, required=REQUIRED.get(name.strip(), ())) if spec else st.just("{}")


@dataclass(frozen=True)
class FuzzRequest:
    """One POST: the body text, the MCP headers to send and whether Accept / Content-Type are right."""

    body: str
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"

    def encoded(self, task_id: str | None) -> bytes:
        text = self.body.replace(TASK_PLACEHOLDER, task_id or "no-task-yet")
        return text.encode("utf-8", "surrogatepass")  # raw (not escaped) surrogates are bad UTF-8: a parse error


@st.composite
def tool_call_params(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    name = draw(tool_names)
    arguments = draw(tool_arguments(name))
    return name, [("name", _lit(name)), ("arguments", draw(plausible_or_hostile(st.just(arguments))))]


@st.composite
def mcp_params(draw: st.DrawFn, method: str) -> tuple[str | None, list[tuple[str, str]]]:
    """(the Mcp-Name the SDK would send, the params' fields) for one method."""
    if method == "tools/call":
        return draw(tool_call_params())
    if method == "resources/read":
        uri = draw(st.one_of(entry_ids.map(lambda lit: _lit("evergreen://alpha/" + json.loads(lit))), string_literals))
        return json.loads(uri) if uri.startswith('"') else None, [("uri", uri)]
    if method == "prompts/get":
        name = draw(_choice("chat", "coding", "nope"))
        return json.loads(name), [("name", name), ("arguments", draw(any_literals))]
    if method in ("resources/list", "tools/list", "prompts/list"):
        cursor = draw(st.one_of(st.just("null"), _choice("e1.QUwtMDAx", "e1.", "x"), any_literals))
        return None, [("cursor", cursor)] if draw(st.booleans()) else []
    if method == "initialize":
        version = draw(st.one_of(_choice(LEGACY, "2024-11-05", "1999-01-01"), any_literals))
        return None, [("protocolVersion", version), ("capabilities", draw(any_literals))]
    return None, draw(st.lists(st.tuples(keys, any_literals), max_size=2))


MCP_METHODS = (
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "notifications/initialized",
    "message/send",
    "nope/nope",
)
ids = mostly(
    st.one_of(st.integers(min_value=-(10**30), max_value=10**30).map(str), string_literals),
    st.sampled_from(("null", "true", "1.5", "[]", "{}", "9" * 4000, _lit("i" * 5000))),
    10,
)


def _header_name(name: str | None) -> str | None:
    """streamable-http §Value Encoding: non-ASCII header values travel base64-encoded."""
    if name is None:
        return None
    if name.isascii() and name.isprintable():
        return name
    return "=?base64?" + base64.b64encode(name.encode("utf-8", "surrogatepass")).decode() + "?="


@st.composite
def envelope(draw: st.DrawFn, method: str, params: list[tuple[str, str]]) -> str:
    """The request object, mostly well formed: sometimes a wrong version, id, params type or a repeated key."""
    pairs = [("jsonrpc", draw(_choice("1.0", 2.0, None)) if rarely(draw, 20) else _lit("2.0"))]
    if not rarely(draw, 10):  # one in ten is a notification
        pairs.append(("id", draw(ids)))
    pairs.append(("method", draw(any_literals) if rarely(draw, 20) else _lit(method)))
    if rarely(draw, 20):
        pairs.append(("params", draw(any_literals)))
    elif not rarely(draw, 20):
        pairs.append(("params", object_literal(params)))
    if rarely(draw, 15):  # a repeated member: the decoder keeps the last one
        repeated = (draw(st.sampled_from(["id", "method", "params", "jsonrpc"])), draw(any_literals))
        pairs.insert(draw(st.integers(0, len(pairs))), repeated)
    return object_literal(pairs)


def _meta(version: str) -> tuple[str, str]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    }
    return "_meta", _lit(meta)


def _wrapped(draw: st.DrawFn, body: str) -> str:
    """Now and then the body is not one request at all: a batch, garbage, or bytes cut short."""
    kind = draw(st.sampled_from(range(40)))
    if kind == 39:
        return "[" + body + "," + body + "]"
    if kind == 38:
        return draw(any_literals)
    if kind == 37:
        return body[: draw(st.integers(0, len(body)))]
    return body


@st.composite
def mcp_requests(draw: st.DrawFn, *, modern: bool) -> FuzzRequest:
    method = draw(st.sampled_from(MCP_METHODS))
    name, params = draw(mcp_params(method))
    version = MODERN if modern else LEGACY
    if modern and not rarely(draw, 10):
        params = [*params, _meta(draw(mostly(st.just(MODERN), st.sampled_from([LEGACY, "2099-01-01"]), 10)))]
    body = _wrapped(draw, draw(envelope(method, params)))
    headers = {"MCP-Protocol-Version": version}
    if modern:
        headers["Mcp-Method"] = method
        header_name = _header_name(name)
        if header_name is not None:
            headers["Mcp-Name"] = header_name
    if rarely(draw, 15):
        headers = {key: value for key, value in headers.items() if draw(st.booleans())}
    content_type = "text/plain" if rarely(draw, 30) else "application/json"
    return FuzzRequest(body, tuple(headers.items()), content_type)


search_data = {"topic": words, "budget": budgets, "category": _choice("fact", "rule"), "limit": counts}
data_payloads = st.one_of(
    fields(search_data, required=("topic",), extra=False),
    st.builds(
        lambda name, arguments: object_literal([("skill", _lit(name)), ("arguments", arguments)]),
        tool_names,
        tool_names.flatmap(tool_arguments),
    ),
    fields({"skill": tool_names.map(_lit), "arguments": any_literals, **search_data}, extra=False),
)
text_parts = fields({"kind": _choice("text"), "text": mostly(words, string_literals, 4)}, required=("kind", "text"))
data_parts = fields({"kind": _choice("data"), "data": data_payloads}, required=("kind", "data"))
file_parts = fields({"kind": _choice("file"), "file": _choice({"uri": "https://example.com/x"})}, required=("kind",))
parts = mostly(st.one_of(text_parts, data_parts), file_parts, 10)
task_refs = mostly(_choice(TASK_PLACEHOLDER), st.one_of(_choice("nope"), string_literals), 3)
user_messages = fields(
    {
        "role": mostly(_choice("user"), _choice("agent"), 8),
        "messageId": mostly(_choice("m-1"), string_literals, 3),
        "kind": _choice("message"),
        "parts": st.lists(parts, min_size=1, max_size=3).map(array_literal),
        "contextId": mostly(_choice("ctx-1"), string_literals, 3),
        "taskId": task_refs,
        "metadata": any_literals,
    },
    required=("role", "messageId", "parts"),
)
configurations = fields(
    {
        "acceptedOutputModes": _choice(["application/json"], ["text/plain"], ["image/png"], []),
        "historyLength": counts,
        "blocking": _choice(True),
        "pushNotificationConfig": _choice({"url": "https://example.com/hook"}),
    }
)
A2A_METHODS = (
    "message/send",
    "message/send",
    "message/send",
    "tasks/get",
    "tasks/get",
    "tasks/cancel",
    "message/stream",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "agent/getAuthenticatedExtendedCard",
    "tools/call",
    "nope",
)


@st.composite
def a2a_requests(draw: st.DrawFn) -> FuzzRequest:
    method = draw(mostly(st.just("message/send"), st.sampled_from(A2A_METHODS), 2))
    if method.startswith("message/"):
        params = [("message", draw(user_messages))]
        if draw(st.booleans()):
            params.append(("configuration", draw(plausible_or_hostile(configurations))))
    elif method.startswith("tasks/"):
        params = [("id", draw(task_refs))]
        if draw(st.booleans()):
            params.append(("historyLength", draw(counts)))
    else:
        params = draw(st.lists(st.tuples(keys, any_literals), max_size=2))
    return FuzzRequest(_wrapped(draw, draw(envelope(method, params))))
