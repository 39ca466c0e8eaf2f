"""The tool registry (seed §5 ②): each tool's schemas, annotations and a handler calling the backend."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Literal, cast

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from knowledge.retrieval.contract.lookups import EntryFound, EntryGone
from knowledge.retrieval.contract.quoting import (
    DATA_NOTICE,
    UNTRUSTED_NOTICE,
    one_line,
    quoted_entry_json,
    untrusted,
)
from knowledge.retrieval.contract.records import AgentNamespace
from mcp_bridge import schemas
from mcp_bridge.jsonrpc import dumps, problem_message, request_problem, whole_number
from mcp_bridge.ports import Backend, FeedbackKind, ParamError, RateLimitedError

logger = logging.getLogger(__name__)

ToolErrorKind = Literal["invalid_arguments", "gone", "not_found", "rate_limited"]

INVALID_ARGUMENTS_MESSAGE: Final = "Invalid arguments for {tool}: {where}: {problem}"
GONE_MESSAGE: Final = "{id} is gone: it was retired on {retired_at} ({reason})."
GONE_REPLACED_MESSAGE: Final = " It was replaced by {replaced_by}; call get_entry with that ID."
MISSING_MESSAGE: Final = "There is no entry {id} in this knowledge base. The nearest IDs are: {nearest}."
MISSING_NO_NEIGHBOURS_MESSAGE: Final = "There is no entry {id} in this knowledge base."
ID_OR_IDS_MESSAGE: Final = "Give either id (optionally with version) or ids, not both and not neither."
ENTRIES_MESSAGE: Final = "Found: {found}. Retired: {gone}. Not in this knowledge base: {missing}."
NO_PROMPT_PACK_MESSAGE: Final = "This knowledge base has no prompt pack for the scenario {scenario}."
RATE_LIMITED_MESSAGE: Final = "Too many feedback submissions; retry after {seconds} seconds."
FEEDBACK_QUEUED_MESSAGE: Final = (
    "Feedback {id} is queued for review by the editors. Published content is unchanged until they act."
)
EXPLAIN_SUMMARY_MESSAGE: Final = "Ranking mode {mode}; match score {score} against threshold {threshold}."
VERIFY_SUMMARY_MESSAGE: Final = "{valid} of {count} citations hold up against release {release}."
PACK_SUMMARY_MESSAGE: Final = "{count} entries, {used}/{budget} tokens; matched={matched}, truncated={truncated}."
CITE_AS: Final = "Cite as:"
RULES: Final = "Rules:"
_PROBLEM_MAX_CHARS: Final = 200
# The REST parameter a ParamError names, as the tools' argument it came from.
REST_PARAMS: Final = {"topic": "query"}

READ_ONLY: Final = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
ADDITIVE_WRITE: Final = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": False,
}


class OutputSchemaError(Exception):
    """A backend payload that does not match the tool's declared ``outputSchema`` (a server bug)."""


@dataclass(frozen=True)
class ToolResult:
    """One tool call's outcome before framing: success carries ``structured``; errors carry ``error``.

    ``note`` is a short human-readable line (A2A's text part); ``details`` is the machine-readable
    side of an error: ``code`` (stable; ``error`` repeats it for clients written before ``code``), then
    the tombstone, nearest IDs or parameter. The ``error`` field (the kind) picks the A2A channel.
    """

    structured: dict[str, Any] | None
    note: str
    error: ToolErrorKind | None = None
    details: dict[str, Any] | None = None
    # ``note`` renders entry text as quoted data (contract.quoting): MCP's text content is the note
    # then, not the JSON, so a model reading text sees the entries fenced off as data.
    quoted: bool = False


Handler = Callable[[Backend, Mapping[str, Any]], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, Any]
    handler: Handler
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    # What the caller did wrong (MCP: isError results; A2A: JSON-RPC -32602) and what can go wrong with
    # a valid call (MCP: isError results; A2A: a failed task). Each channel words them its own way.
    refusals: str = ""
    failures: str = ""
    validator: Draft202012Validator = field(init=False, repr=False, compare=False)
    output_validator: Draft202012Validator = field(init=False, repr=False, compare=False)
    # Checking a whole context pack with the Python validator cost more than building it; the compiled
    # one confirms valid payloads, and the Python one still judges (and words) any it doubts.
    output_check: Any = field(init=False, repr=False, compare=False)
    input_check: Any = field(init=False, repr=False, compare=False)  # the same for arguments

    def __post_init__(self) -> None:
        object.__setattr__(self, "validator", Draft202012Validator(self.input_schema))
        object.__setattr__(self, "output_validator", Draft202012Validator(self.output_schema))
        object.__setattr__(self, "output_check", jsonschema_rs.Draft202012Validator(self.output_schema))
        object.__setattr__(self, "input_check", jsonschema_rs.Draft202012Validator(self.input_schema))

    def mcp_description(self) -> str:
        """MCP tools.mdx §Error Handling: both kinds of problem come back as ``isError`` results."""
        errors = "; ".join(text for text in (self.refusals, self.failures) if text)
        return f"{self.description} Errors (isError): {errors}." if errors else self.description

    def a2a_description(self) -> str:
        """A2A v0.3.0: bad arguments are JSON-RPC errors (-32602); a valid call that fails is a failed task."""
        text = self.description
        if self.refusals:
            text += f" Invalid arguments ({self.refusals}) are answered with JSON-RPC error -32602."
        if self.failures:
            text += f" The task ends as failed, with the reason in status.message, when: {self.failures}."
        return text

    def definition(self) -> dict[str, Any]:
        """The MCP ``Tool`` object of ``tools/list`` (both eras)."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.mcp_description(),
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": {"title": self.title, **self.annotations},
        }


def _failure(
    kind: ToolErrorKind, note: str, details: Mapping[str, Any] | None = None, *, code: str | None = None
) -> ToolResult:
    """An error result whose details lead with its stable ``code`` (the kind unless a finer one is given)."""
    stable = code or kind
    return ToolResult(
        structured=None, note=note, error=kind, details={"code": stable, "error": stable, **(details or {})}
    )


def _search(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    pack = backend.context(
        topic=args["query"],
        budget=args.get("budget"),
        category=args.get("category"),
        limit=args.get("limit"),
        budget_mode=args.get("budgetMode"),
        paths=args.get("paths"),
    )
    return ToolResult(structured=pack, note=pack_text(pack), quoted=True)


def pack_text(pack: Mapping[str, Any]) -> str:
    """A pack as a model reads it: the facts, every entry as a quoted block, the citations and the rules."""
    summary = PACK_SUMMARY_MESSAGE.format(
        count=pack.get("entryCount"),
        used=pack.get("usedTokens"),
        budget=pack.get("budget"),
        matched=str(pack.get("matched")).lower(),
        truncated=str(pack.get("truncated")).lower(),
    )
    hint = pack.get("hint")
    blocks = [quoted_entry_json(entry) for entry in pack.get("entries", [])]
    citations = [f"{c['marker']} {one_line(c['text'])}" for c in pack.get("citations", [])]
    rules = [f"{n}. {one_line(rule)}" for n, rule in enumerate(pack.get("rules", []), start=1)]
    parts = [summary, *([hint] if hint else []), DATA_NOTICE, *blocks, CITE_AS, *citations, RULES, *rules]
    return "\n\n".join(part for part in parts if part)


def _entry(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    if ("id" in args) == ("ids" in args) or ("ids" in args and "version" in args):
        raise ParamError("invalid_arguments", ID_OR_IDS_MESSAGE, "id")
    if "ids" in args:
        return _entries(backend, args["ids"])
    entry_id = args["id"]
    found = backend.entry(entry_id=entry_id, version=args.get("version"))
    if isinstance(found, EntryFound):
        payload = dict(found.payload)
        return ToolResult(structured=payload, note=f"{DATA_NOTICE}\n\n{quoted_entry_json(payload)}", quoted=True)
    if isinstance(found, EntryGone):
        stone = found.tombstone
        note = GONE_MESSAGE.format(id=stone.id, retired_at=stone.retired_at[:10], reason=stone.reason)
        if stone.replaced_by:
            note += GONE_REPLACED_MESSAGE.format(replaced_by=stone.replaced_by)
        return _failure("gone", note, {"tombstone": found.payload})
    nearest = list(found.nearest[:3])
    note = (
        MISSING_MESSAGE.format(id=entry_id, nearest=", ".join(nearest))
        if nearest
        else MISSING_NO_NEIGHBOURS_MESSAGE.format(id=entry_id)
    )
    return _failure("not_found", note, {"id": entry_id, "nearest": nearest})


def _entries(backend: Backend, entry_ids: Sequence[str]) -> ToolResult:
    """Several IDs in one call: a partial answer is a success that says which IDs are gone or missing."""
    found: list[dict[str, Any]] = []
    gone: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for entry_id in entry_ids:
        lookup = backend.entry(entry_id=entry_id, version=None)
        if isinstance(lookup, EntryFound):
            found.append(dict(lookup.payload))
        elif isinstance(lookup, EntryGone):
            gone.append(lookup.payload)
        else:
            missing.append({"id": entry_id, "nearest": list(lookup.nearest[:3])})
    note = ENTRIES_MESSAGE.format(
        found=", ".join(e["id"] for e in found) or "none",
        gone=", ".join(t["id"] for t in gone) or "none",
        missing=", ".join(m["id"] for m in missing) or "none",
    )
    text = "\n\n".join([note, *([DATA_NOTICE] if found else []), *(quoted_entry_json(e) for e in found)])
    return ToolResult(structured={"entries": found, "gone": gone, "missing": missing}, note=text, quoted=True)


def _prompt_pack(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    scenario = args["scenario"]
    pack = backend.prompt_pack(scenario=scenario)
    if pack is None:
        return _failure("not_found", NO_PROMPT_PACK_MESSAGE.format(scenario=scenario), {"scenario": scenario})
    return ToolResult(structured={"scenario": scenario, "title": pack.info.title, "text": pack.text}, note=pack.text)


def _metrics(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    metrics = backend.metrics()
    return ToolResult(structured=metrics, note=", ".join(sorted(metrics)))


def _feedback(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    try:
        receipt = backend.submit_feedback(
            entry_id=args.get("entryId"),
            query=args.get("query"),
            kind=cast("FeedbackKind", args["kind"]),
            message=args["message"],
        )
    except RateLimitedError as exc:
        note = RATE_LIMITED_MESSAGE.format(seconds=exc.retry_after)
        return _failure("rate_limited", note, {"retryAfter": exc.retry_after})
    structured = {"feedbackId": receipt.id, "status": "queued_for_review"}
    echoed = untrusted(args["message"], source=f"agent feedback {receipt.id}")
    note = f"{FEEDBACK_QUEUED_MESSAGE.format(id=receipt.id)}\n\n{UNTRUSTED_NOTICE}\n\n{echoed}"
    return ToolResult(structured=structured, note=note, quoted=True)


def _explain(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    document = backend.explain(
        topic=args["query"],
        budget=args.get("budget"),
        category=args.get("category"),
        limit=args.get("limit"),
        ids=args.get("ids", []),
    )
    explained = document["explain"]
    lines = [f"{item['id']}: {item['reason']}" for item in explained["entries"]]
    matching = explained["matching"]
    note = EXPLAIN_SUMMARY_MESSAGE.format(
        mode=matching["mode"], score=matching["matchScore"], threshold=matching["threshold"]
    )
    return ToolResult(structured=document, note="\n".join([note, *lines]))


def _verify(backend: Backend, args: Mapping[str, Any]) -> ToolResult:
    report = backend.verify(answer=args["answer"], release=args.get("release"), pack=args.get("pack"))
    note = VERIFY_SUMMARY_MESSAGE.format(
        valid=report["validCount"], count=report["citationCount"], release=report["releaseId"]
    )
    lines = [f"{c['marker']}: {p['message']}" for c in report["citations"] for p in c["problems"]]
    return ToolResult(structured=report, note="\n".join([note, *lines]))


@lru_cache(maxsize=128)
def build_tools(info: AgentNamespace) -> tuple[Tool, ...]:
    """The namespace's tools, in a fixed order (MCP 2026-07-28 tools.mdx: deterministic ordering).

    Descriptions state units, ranges, the result and the errors; they never quote entry text. Cached
    per ``AgentNamespace`` (frozen, so a changed namespace is a new key) to compile the validators once.
    """
    example_id = f"{info.id_prefix}-202"
    categories = ", ".join(info.categories)
    return (
        Tool(
            name="search_context",
            title="Search the knowledge base",
            description=(
                f"Search the {info.title} knowledge base and get a token-budgeted context pack, the same JSON as "
                "GET /api/context. `query`: keywords or a question, up to 500 characters (empty = browse by ID). "
                f"`budget`: tokens for the entries, default {schemas.BUDGET_DEFAULT}, clamped to "
                f"[{schemas.BUDGET_MIN}, {schemas.BUDGET_MAX}]. `limit`: at most {schemas.LIMIT_MIN}-"
                f"{schemas.LIMIT_MAX} entries. `category`: one of {categories}. `budgetMode`: entries (default) or "
                "payload (the whole result, not only the entries, fits the budget). `paths`: the files you work "
                "on, relative to the project root (src/api/users.py); entries whose path globs match come "
                "first, entries meant for other files are left out, and with an empty query the pack is "
                "exactly the entries that apply to those files. Returns entries (stable ID, "
                "confidence 0-1, token cost, updated date, score, relevance), one citation per entry with a "
                "ready [ID] marker, and the citation rules. matched=false: nothing matched, the entries are a "
                "fallback that must not be cited. truncated=true: raise budget or narrow query before "
                "answering. With `limit`, overLimit names the matching entries the budget would also have held: "
                "raise limit or fetch them with get_entry ids."
            ),
            refusals=(
                "an unknown category, a query that is too long or has control characters, or paths that are "
                "absolute, contain .. or number more than 50"
            ),
            input_schema=schemas.search_input(info.categories),
            output_schema=schemas.CONTEXT_PACK_OUTPUT,
            annotations=READ_ONLY,
            handler=_search,
            tags=("search", "context", "citations", "token-budget"),
            examples=('{"topic": "token budget", "budget": 2000}', "How should an agent cite entries?"),
        ),
        Tool(
            name="get_entry",
            title="Get one entry",
            description=(
                f"Fetch one entry by its stable ID (for example {example_id}) with its full body, tags, "
                "confidence (0-1), token cost and updated date; `version` (integer >= 1) selects an older "
                "published version. Returns the entry JSON, as GET /api/entries/<ID>. "
                f"`ids` (instead of `id`, up to {schemas.ENTRY_IDS_MAX}, e.g. the `omitted` IDs of a search) "
                "fetches several at once and returns {entries, gone, missing}: found entries, tombstones of "
                "retired IDs, and unknown IDs with their nearest existing IDs."
            ),
            refusals="both or neither of id and ids, version with ids, or a version that was never published",
            failures=(
                "a retired ID (reported as gone with its tombstone: retiredAt, reason, replacedBy; call again "
                "with replacedBy); an unknown ID (reported with the three nearest existing IDs)"
            ),
            input_schema=schemas.entry_input(info.id_prefix),
            output_schema=schemas.ENTRY_OUTPUT,
            annotations=READ_ONLY,
            handler=_entry,
            tags=("entry", "lookup"),
            examples=(f'{{"skill": "get_entry", "arguments": {{"id": "{example_id}"}}}}',),
        ),
        Tool(
            name="get_prompt_pack",
            title="Get a prompt pack",
            description=(
                "Get the rules pack to inject into a system prompt for one scenario: chat, coding, research or "
                "support. Returns {scenario, title, text}."
            ),
            failures="the knowledge base has no pack for that scenario",
            input_schema=schemas.PROMPT_PACK_INPUT,
            output_schema=schemas.PROMPT_PACK_OUTPUT,
            annotations=READ_ONLY,
            handler=_prompt_pack,
            tags=("prompt", "system-prompt", "rules"),
            examples=('{"skill": "get_prompt_pack", "arguments": {"scenario": "coding"}}',),
        ),
        Tool(
            name="get_metrics",
            title="Get the metrics",
            description=(
                "Get the knowledge base's measured metrics, the same JSON as GET /api/metrics: contextShape "
                "(token cost of each representation), budgetScan (entries and tokens packed at 800, 2000, "
                "4000 and 8000 tokens with an empty query) and evaluation results when there are any. "
                "No arguments."
            ),
            input_schema=schemas.NO_ARGUMENTS,
            output_schema=schemas.METRICS_OUTPUT,
            annotations=READ_ONLY,
            handler=_metrics,
            tags=("metrics", "evaluation"),
            examples=('{"skill": "get_metrics"}',),
        ),
        Tool(
            name="submit_feedback",
            title="Report a problem to the editors",
            description=(
                "Report an outdated, incorrect or missing fact to the editors. `kind`: outdated, incorrect, "
                f"missing or other; `message`: 1-{schemas.FEEDBACK_MESSAGE_MAX_LENGTH} characters; optional "
                f"`entryId` (for example {example_id}) and `query` (up to {schemas.QUERY_MAX_LENGTH} "
                "characters). It is stored for human review only and never changes published content. Returns "
                "{feedbackId, status: queued_for_review}."
            ),
            refusals="an entryId that is not an entry here",
            failures="too many submissions (retry after the given seconds)",
            input_schema=schemas.FEEDBACK_INPUT,
            output_schema=schemas.FEEDBACK_OUTPUT,
            annotations=ADDITIVE_WRITE,
            handler=_feedback,
            tags=("feedback", "review"),
            examples=('{"skill": "submit_feedback", "arguments": {"kind": "outdated", "message": "…"}}',),
        ),
        Tool(
            name="verify_citations",
            title="Check an answer's citations",
            description=(
                f"Check every [ID] citation (e.g. [{example_id}]) of an answer against the release or context pack "
                "it was written from, as POST /api/verify. `answer`: the text, up to "
                f"{schemas.ANSWER_MAX_LENGTH} characters; `release`: the releaseId or knowledgeVersion of the pack "
                "used (default: the serving release); `pack`: the pack's ETag instead. Returns per citation "
                "valid=true or its problems: not_in_release, not_in_pack, retired (since; with replacedBy), "
                "figures_not_verbatim (numbers in the citing sentence that none of its cited entries contains "
                "verbatim); and the share of valid citations."
            ),
            refusals="an unknown release or pack, or a release outside the retention window",
            input_schema=schemas.VERIFY_INPUT,
            output_schema=schemas.VERIFY_OUTPUT,
            annotations=ADDITIVE_WRITE,
            handler=_verify,
            tags=("citations", "verification", "quality"),
            examples=(f'{{"answer": "Ask for 2000 tokens [{example_id}].", "release": 3}}',),
        ),
        Tool(
            name="explain_context",
            title="Explain a context pack",
            description=(
                "Explain what search_context returns for the same arguments, as GET /api/context?explain=1: how "
                "the query was analysed (terms, idf, which are unknown), the best candidates' scores by term, "
                "field and confidence factor, the matched rule (match score, threshold, coverage floor), the "
                f"relevance floors and the budget; `ids` (up to {schemas.ENTRY_IDS_MAX}) asks why those entries "
                "are or are not in the pack: in_pack, over_budget, over_limit, below_relative_floor, "
                "below_coverage_floor, not_among_weak_hits, no_common_term, other_category, not_public, retired, "
                "not_found. Deterministic for a release. Returns the pack with an `explain` object."
            ),
            refusals="an unknown category, or a query that is too long or has control characters",
            input_schema=schemas.explain_input(info.categories, info.id_prefix),
            output_schema=schemas.EXPLAIN_OUTPUT,
            annotations=READ_ONLY,
            handler=_explain,
            tags=("search", "explain", "debugging"),
            examples=(f'{{"query": "token budget", "ids": ["{example_id}"]}}',),
        ),
    )


def find_tool(tools: Sequence[Tool], name: str) -> Tool | None:
    return next((tool for tool in tools if tool.name == name), None)


def _argument_problem(tool: Tool, arguments: Mapping[str, Any]) -> ToolResult | None:
    if tool.input_check.is_valid(arguments):
        return None
    error = best_match(tool.validator.iter_errors(arguments))
    if error is None:
        return None
    where = error.json_path
    problem = error.message[:_PROBLEM_MAX_CHARS]
    note = INVALID_ARGUMENTS_MESSAGE.format(tool=tool.name, where=where, problem=problem)
    return _failure("invalid_arguments", note, {"param": where})


def _unusable_argument(tool: Tool, arguments: Mapping[str, Any]) -> ToolResult | None:
    """A NUL or lone surrogate, an infinite number or too deep a nesting: refused like a schema violation
    (``jsonrpc.request_problem``'s code), before any handler, database or encoder meets it."""
    found = request_problem(dict(arguments))
    if found is None:
        return None
    code, path = found
    where = "$" if path == "$" else f"$.{path}"
    note = INVALID_ARGUMENTS_MESSAGE.format(tool=tool.name, where=where, problem=problem_message(code, where))
    return _failure("invalid_arguments", note, {"param": where}, code=code)


def _with_whole_integers(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Integer arguments sent as whole floats (``600.0``) become ints; the schema already refused ``600.5``."""
    properties = tool.input_schema.get("properties", {})
    converted = dict(arguments)
    for name, value in arguments.items():
        number = whole_number(value) if isinstance(value, float) else None
        if number is not None and properties.get(name, {}).get("type") == "integer":
            converted[name] = number
    return converted


def call_tool(tool: Tool, arguments: Mapping[str, Any], backend: Backend) -> ToolResult:
    """Validate ``arguments`` against the tool's ``inputSchema`` and run it.

    Argument problems, the backend's ``ParamError`` and business failures come back as error results
    (MCP: ``isError: true``, tools.mdx §Error Handling). Anything else the backend raises propagates
    for the protocol layer to answer with ``-32603``; a payload that breaks the declared
    ``outputSchema`` raises ``OutputSchemaError`` for the same reason.
    """
    problem = _unusable_argument(tool, arguments) or _argument_problem(tool, arguments)
    if problem is not None:
        return problem
    try:
        result = tool.handler(backend, _with_whole_integers(tool, arguments))
    except ParamError as exc:
        where = f"$.{REST_PARAMS.get(exc.param, exc.param)}"
        note = INVALID_ARGUMENTS_MESSAGE.format(tool=tool.name, where=where, problem=exc.message)
        return _failure("invalid_arguments", note, {"param": where}, code=exc.code)
    if result.structured is not None and not tool.output_check.is_valid(result.structured):
        mismatch = best_match(tool.output_validator.iter_errors(result.structured))
        if mismatch is not None:
            logger.error("%s returned a payload outside its outputSchema: %s", tool.name, mismatch.message)
            raise OutputSchemaError(tool.name)
    return result


def render_mcp(result: ToolResult) -> dict[str, Any]:
    """A ``CallToolResult``: structured content plus text (the quoted rendering where the result carries
    entry or agent text, else the same JSON), or an ``isError`` result."""
    if result.error is None:
        text = result.note if result.quoted else dumps(result.structured)
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": result.structured,
            "isError": False,
        }
    content = [{"type": "text", "text": result.note}]
    if result.details is not None:
        content.append({"type": "text", "text": dumps(result.details)})
    return {"content": content, "isError": True}
