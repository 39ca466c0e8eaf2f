"""Role and tool-call mimicry: text dressed up as a system message, a chat turn or a tool call.

Code samples (Markdown code blocks and inline code) may show JSON-RPC or chat messages: that is
documentation. Outside code, the same shapes only serve to impersonate the conversation.
"""

from __future__ import annotations

import re

from knowledge.safety.context import ScanContext
from knowledge.safety.findings import Kind, Severity

MESSAGES = {
    "mimicry.chat_token": "Contains a chat-template control token that marks a new role or turn.",
    "mimicry.role_line": "A line poses as a message from the system, a developer or an administrator.",
    "mimicry.transcript": "A line poses as a turn of the conversation (user or assistant).",
    "mimicry.tool_call": "Looks like a tool or function call, or a tool result, of the model's own protocol.",
    "mimicry.jsonrpc": "Looks like a JSON-RPC (MCP) message outside a code sample.",
}

_TOKENS = re.compile(
    r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|end_of_text|eot_id|eom_id|start_header_id|"
    r"end_header_id|begin_of_text|tool_call|tool_calls|python_tag|start|end|channel|message|return|call|constrain|"
    r"fim_\w+|developer|tool|observation)\|>|<</?sys>>|\[/?inst\]|<(?:start|end)_of_turn>|"
    r"\[/?(?:system_prompt|tool_calls|tool_results|available_tools)\]|<\|(?:im|eot)\b"
)
_AUTHORITY = (
    r"system|system message|system prompt|system note|system notice|system update|system override|developer|"
    r"developer message|developer note|admin|administrator|operator|root|sys|openai|anthropic|security team|"
    r"系统|系统提示|系统消息|系统通知|系统指令|系统公告|管理员|管理员指令|管理员通知|开发者|开发者消息|官方|官方通知|官方指令|平台通知"
)
_CONVERSATION = r"assistant|user|human|ai|chatgpt|claude|助手|用户|人类|ai助手"
_ROLE_LINE = re.compile(
    rf"^(?P<lead>[ \t>*#_\-\[(<【]*)(?P<role>{_AUTHORITY}|{_CONVERSATION})(?P<trail>[ \t*_\])>】]*)"
    rf"(?:[:：]|(?<=[\]】>)])(?=[ \t]*\S))(?P<rest>[^\n]*)",
    re.MULTILINE | re.IGNORECASE,
)
_AUTHORITY_ROLES = re.compile(rf"^(?:{_AUTHORITY})$", re.IGNORECASE)
_DIRECTIVE = re.compile(
    r"\b(?:you|your|must|always|never|ignore|instructions?|rules?|polic(?:y|ies)|override|assistant|model|ai|"
    r"respond|answer|reply|follow|do not|don't|from now|new|priority|important|disregard|reveal|tell|user|"
    r"immediately|required|mandatory)\b|你|您|必须|忽略|指令|规则|立即|务必|不要|回答|回复|用户|助手|模型|优先|遵守|执行",
    re.IGNORECASE,
)
_SPOKEN = re.compile(
    r"\b(?:i|i'm|i'll|me|my|you|your|please|can|could|sure|okay|ok|yes|here)\b|\?|我|你|您|请|好的|吗|？", re.IGNORECASE
)
_JSON_TOOL = re.compile(
    r"\"role\"\s*:\s*\"(?:system|developer|assistant|tool|function)\"|"
    r"\"(?:tool_calls|function_call|tool_use|tool_result|tool_call_id)\"\s*:|"
    r"\"type\"\s*:\s*\"(?:function|tool_use|tool_result|function_call|tool_call)\"|"
    r"</?(?:tool_call|tool_calls|function_call|function_calls|tool_use|tool_result|tool_response|tool_code|"
    r"function_results|invoke|antml:invoke|antml:function_calls|parameter)\b[^>]{0,200}>",
    re.IGNORECASE,
)
_JSONRPC = re.compile(r"\"jsonrpc\"\s*:\s*\"2\.0\"")
_REACT = re.compile(r"^[ \t]*(action|action input|observation)\s*:", re.MULTILINE | re.IGNORECASE)


def find_mimicry(context: ScanContext) -> None:
    view = context.marked
    text = view.text
    for match in _TOKENS.finditer(text):
        start, end = view.span(*match.span())
        severity = Severity.MEDIUM if context.in_code(start, end) else Severity.HIGH
        context.add(start, end, Kind.MIMICRY, severity, "mimicry.chat_token", MESSAGES["mimicry.chat_token"])
    for match in _ROLE_LINE.finditer(text):
        _role_line(context, match)
    for pattern, code in ((_JSON_TOOL, "mimicry.tool_call"), (_JSONRPC, "mimicry.jsonrpc")):
        for match in pattern.finditer(text):
            start, end = view.span(*match.span())
            if not context.in_code(start, end):
                context.add(start, end, Kind.MIMICRY, Severity.HIGH, code, MESSAGES[code])
    labels = {m[1].lower(): m for m in _REACT.finditer(text)}
    if "action" in labels and len(labels) >= 2:
        first = min(m.start() for m in labels.values())
        last = max(m.end() for m in labels.values())
        start, end = view.span(first, last)
        if not context.in_code(start, end):
            context.add(start, end, Kind.MIMICRY, Severity.MEDIUM, "mimicry.tool_call", MESSAGES["mimicry.tool_call"])


def _role_line(context: ScanContext, match: re.Match[str]) -> None:
    view = context.marked
    start, end = view.span(match.start("role"), match.end())
    if context.in_code(start, end):
        return
    rest = match["rest"].strip()
    if _AUTHORITY_ROLES.match(match["role"]):
        if _DIRECTIVE.search(rest):
            context.add(start, end, Kind.MIMICRY, Severity.HIGH, "mimicry.role_line", MESSAGES["mimicry.role_line"])
        return
    formatted = ">" in match["lead"] or "*" in match["lead"] or "-" in match["lead"] or "*" in match["trail"]
    long_enough = len(rest.split()) >= 4 or len(re.findall(r"[\u3400-\u9fff]", rest)) >= 8
    if not formatted and long_enough and _SPOKEN.search(rest):
        context.add(start, end, Kind.MIMICRY, Severity.MEDIUM, "mimicry.transcript", MESSAGES["mimicry.transcript"])
