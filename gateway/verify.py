"""Citation verification (POST /api/verify, MCP verify_citations): do an answer's [ID] citations hold up?

Each cited ID is checked against the release the answer was written from (or the pack, by its
ETag): not served by that release, not in that pack, retired since (in the serving release), or
quoting figures that appear in none of the sentence's cited entries (seed: figures are never
rewritten). Every check is recorded for the namespace's accuracy report.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

import orjson

from gateway.declared import Operation, Parameter
from gateway.gate import Gate
from gateway.packs import pack_recall
from knowledge.retrieval.citations import CitationFound, citations_find, figures_missing
from knowledge.retrieval.contract.fields import holds_unclean_text, is_clean_text
from knowledge.selectors.pinned import RELEASE_EXPIRED, RELEASE_INVALID, RELEASE_UNKNOWN, PinError, release_pinned
from knowledge.selectors.serving import LoadedRelease
from knowledge.services.citations import citation_check_record
from knowledge.telemetry.metrics import CITATIONS, tallies

ANSWER_MAX: Final = 20_000
CITATIONS_MAX: Final = 200
ANSWER_MISSING: Final = "answer is required: the text whose [ID] citations to check (up to 20,000 characters)."
ANSWER_TOO_LONG: Final = "answer is longer than 20,000 characters; check it in parts."
ANSWER_NOT_STRING: Final = "answer must be a string: the text whose [ID] citations to check."
PACK_UNKNOWN: Final = (
    "No pack with this ETag is known here (packs are remembered for 7 days after they were built); send "
    "the releaseId instead."
)
PACK_RELEASE_MISMATCH: Final = "The pack {etag} came from release {pack_release}, not {release}."
BODY_NOT_OBJECT: Final = "The body must be a JSON object {{answer, release?, pack?}}."  # a str.format template
BODY_TOO_LARGE: Final = "The body is larger than {limit} bytes."
NOT_JSON: Final = "The body is not valid JSON (UTF-8)."
RELEASE_NOT_REFERENCE: Final = "release must be a releaseId or a knowledgeVersion."
PACK_NOT_STRING: Final = "pack must be the pack's ETag, as a string."
# The wording and code MCP and A2A answer for the same text (mcp_bridge.jsonrpc.INVALID_TEXT_MESSAGE).
NOT_TEXT: Final = (
    "{param} is not text this server can store or send back: it holds a lone UTF-16 surrogate "
    "(such as \\ud800) or a NUL character; send well-formed Unicode."
)

ANSWER = Parameter(
    "answer",
    {"type": "string", "maxLength": ANSWER_MAX},
    "The answer with its [ID] citation markers.",
    {"missing_answer": ANSWER_MISSING, "invalid_parameter": ANSWER_NOT_STRING, "answer_too_long": ANSWER_TOO_LONG},
    required=True,
    location="body",
)
RELEASE = Parameter(
    "release",
    {"oneOf": [{"type": "integer"}, {"type": "string"}]},
    "releaseId (integer) or knowledgeVersion the answer was written from.",
    {
        "invalid_parameter": RELEASE_NOT_REFERENCE,
        "invalid_release": RELEASE_INVALID,
        "unknown_release": RELEASE_UNKNOWN,
        "release_expired": RELEASE_EXPIRED,
    },
    location="body",
)
PACK = Parameter(
    "pack",
    {"type": "string"},
    "The ETag of the /api/context pack the answer was written from.",
    {
        "invalid_parameter": PACK_NOT_STRING,
        "unknown_pack": PACK_UNKNOWN,
        "pack_release_mismatch": PACK_RELEASE_MISMATCH,
    },
    location="body",
)
# POST /api/verify: the body's fields, and the 400s of the body as a whole (api.views.verify reads it; a
# body over the limit is a 413 body_too_large, as on MCP, A2A and every other route).
VERIFY = Operation(
    (ANSWER, RELEASE, PACK),
    {
        "invalid_json": NOT_JSON,
        "invalid_body": BODY_NOT_OBJECT,
        "invalid_text": NOT_TEXT,
    },
)

PROBLEMS: Final = {
    "not_in_release": "{id} is not an entry of release {release}.",
    "not_in_pack": "{id} was not in the pack the answer was written from.",
    "retired": "{id} has been retired since{replaced}.",
    "figures_not_verbatim": "The sentence cites {id} for {figures}, which the cited entries do not contain verbatim.",
}


@dataclass(frozen=True, slots=True)
class VerifyRequest:
    answer: str
    release: str | None
    pack: str | None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def verify_body_decode(body: bytes) -> Any:
    """The JSON document of the body; 400 invalid_json when it is not JSON.

    orjson refuses a lone surrogate escape (``"\\ud800"``), which is JSON all the same: the standard
    library decodes it, so verify_request_parse can name the field (invalid_text, as MCP and A2A do).
    Nothing else orjson refuses is let through.
    """
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    try:
        document = json.loads(body, parse_constant=_refuse_constant)
        unclean = holds_unclean_text(document)
    except (ValueError, RecursionError):
        raise VERIFY.refusal("invalid_json") from None
    if not unclean:
        raise VERIFY.refusal("invalid_json")
    return document


def _unclean_field(document: dict[str, Any]) -> str | None:
    """The first field (in document order) whose name or value holds text that is not clean, else None."""
    for key, value in document.items():
        if not is_clean_text(key) or holds_unclean_text(value):
            return key.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")[:64]
    return None


def _release_reference(release: Any) -> str | None:
    """A releaseId (an integer, or a float with no fraction as JSON Schema's "integer" allows) or a version."""
    if release is None:
        return None
    if isinstance(release, float) and math.isfinite(release) and release.is_integer():
        return str(int(release))
    if isinstance(release, bool) or not isinstance(release, str | int):
        raise RELEASE.refusal("invalid_parameter")
    return str(release)


def verify_request_parse(document: Any) -> VerifyRequest:
    if not isinstance(document, dict):
        raise VERIFY.refusal("invalid_body")
    unclean = _unclean_field(document)
    if unclean is not None:
        raise VERIFY.refusal("invalid_text", param=unclean)
    answer = document.get(ANSWER.name)
    if answer is not None and not isinstance(answer, str):
        raise ANSWER.refusal("invalid_parameter")
    if answer is None or not answer.strip():
        raise ANSWER.refusal("missing_answer")
    if len(answer) > ANSWER_MAX:
        raise ANSWER.refusal("answer_too_long")
    release, pack = _release_reference(document.get(RELEASE.name)), document.get(PACK.name)
    if pack is not None and not isinstance(pack, str):
        raise PACK.refusal("invalid_parameter")
    return VerifyRequest(answer, release, pack)


def _problem(code: str, **fields: Any) -> dict[str, Any]:
    return {"code": code, "message": PROBLEMS[code].format(**fields), **{k: v for k, v in fields.items() if k != "id"}}


def _entry_text(release: LoadedRelease, entry_id: str) -> str | None:
    entry = release.entry(entry_id)
    return None if entry is None else f"{entry.title}\n{entry.summary}\n{entry.body}"


def _check(
    found: CitationFound, sentence_ids: list[str], *, written: LoadedRelease, serving: LoadedRelease, pack: Any
) -> dict[str, Any]:
    problems = []
    sequence = written.stamp.sequence
    if written.entry(found.id) is None:
        problems.append(_problem("not_in_release", id=found.id, release=sequence))
    elif pack is not None and found.id not in pack.entry_ids:
        problems.append(_problem("not_in_pack", id=found.id))
    stone = serving.tombstones.get(found.id)
    if stone is not None and written.entry(found.id) is not None:
        replaced = f" (replaced by {stone.replaced_by})" if stone.replaced_by else ""
        problems.append(
            _problem(
                "retired", id=found.id, replaced=replaced, retiredAt=stone.retired_at, replacedBy=stone.replaced_by
            )
        )
    texts = [text for entry_id in sentence_ids if (text := _entry_text(written, entry_id)) is not None]
    missing = figures_missing(found.figures, texts) if texts else []
    if missing:
        problems.append(
            _problem("figures_not_verbatim", id=found.id, figures=", ".join(missing)) | {"figures": missing}
        )
    return {
        "marker": found.marker,
        "id": found.id,
        "start": found.start,
        "end": found.end,
        "sentence": found.sentence,
        "valid": not problems,
        "problems": problems,
    }


def _written_from(gate: Gate, request: VerifyRequest) -> tuple[LoadedRelease, Any]:
    pack = None
    reference = request.release
    if request.pack:
        pack = pack_recall(namespace_id=gate.namespace.id, etag=request.pack)
        if pack is None:
            raise PACK.refusal("unknown_pack")
    try:
        if pack is not None:
            pinned = release_pinned(namespace_id=gate.namespace.id, release_id=pack.release_id, active=gate.release)
            if (
                reference is not None
                and str(pinned.release.sequence) != reference.strip()
                and (pinned.release.knowledge_version != reference.strip().removeprefix("v"))
            ):
                raise PACK.refusal(
                    "pack_release_mismatch", etag=request.pack, pack_release=pinned.release.sequence, release=reference
                )
            return pinned.loaded, pack
        if reference is None:
            return gate.release, None
        return release_pinned(namespace_id=gate.namespace.id, reference=reference, active=gate.release).loaded, None
    except PinError as error:
        raise RELEASE.refusal(error.code, str(error)) from None


def verify_answer(gate: Gate, request: VerifyRequest, *, channel: str) -> dict[str, Any]:
    """The report of POST /api/verify; the outcome is recorded for the namespace."""
    written, pack = _written_from(gate, request)
    found = citations_find(request.answer)[:CITATIONS_MAX]
    by_sentence: dict[str, list[str]] = {}
    for citation in found:
        by_sentence.setdefault(citation.sentence, []).append(citation.id)
    checked = [_check(c, by_sentence[c.sentence], written=written, serving=gate.release, pack=pack) for c in found]
    problems = Counter(problem["code"] for item in checked for problem in item["problems"])
    valid = sum(1 for item in checked if item["valid"])
    tallies.count(CITATIONS, "valid", amount=valid)
    tallies.count(CITATIONS, "invalid", amount=len(checked) - valid)
    citation_check_record(
        namespace_id=gate.namespace.id,
        release_id=written.release_id,
        channel=channel,
        citations=len(checked),
        valid=valid,
        problems=problems,
        pack_etag=request.pack or "",
        client=gate.client,
    )
    return {
        "namespace": gate.namespace.slug,
        "releaseId": written.stamp.sequence,
        "knowledgeVersion": written.stamp.knowledge_version,
        "pack": request.pack,
        "servingReleaseId": gate.release.stamp.sequence,
        "citationCount": len(checked),
        "validCount": valid,
        "accuracy": round(valid / len(checked), 4) if checked else None,
        "problems": dict(sorted(problems.items())),
        "citations": checked,
    }
