"""The /api/context parameters of seed §4, declared (gateway.declared) and validated once for REST and MCP alike."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from urllib.parse import parse_qsl, unquote_to_bytes

from django.core.handlers.wsgi import get_bytes_from_wsgi
from django.http import HttpRequest

from gateway.declared import REPEATED, Operation, Parameter
from gateway.explain import EXPLAIN, WHY
from knowledge.retrieval.contract.shapes import BUDGET_MODES, LIMIT_MAX, LIMIT_MIN, PATH_MAX_LENGTH, PATHS_MAX
from knowledge.retrieval.packing import clamp_budget
from knowledge.retrieval.paths import paths_normalize
from knowledge.retrieval.payload import ContextQuery

TOPIC_MAX = 500
MAX_FIELDS = 100
TOO_MANY_FIELDS = "The query string has more than 100 parameters."
# ASCII digits only, nothing around them: \d and str.strip() would also take "１２００", "٣٠٠" and " 100".
# Up to 64 of them, clamped like any other whole number (JSON bodies clamp a 30-digit budget too); past
# that, int() would cost more than the number means.
_INTEGER = re.compile(r"[+-]?[0-9]{1,64}(?:\.0*)?")

TOPIC_TOO_LONG = "topic is longer than 500 characters; shorten it to the key words."
TOPIC_CONTROL = "topic contains control characters; send plain text."
BUDGET_NOT_INTEGER = "budget must be an integer number of tokens (it is clamped to 200..8000)."
QUERY_NOT_UTF8 = "The parameter {param} is not valid UTF-8 text (percent-encode the UTF-8 bytes of the text)."
CATEGORY_UNKNOWN = "category {category!r} is not a category of this namespace; use one of: {known}."
PATHS_NOT_STRINGS = "paths must be a list of strings: the files the agent works on, relative to the project root."
BUDGET_MODE_UNKNOWN = "budgetMode must be entries (the budget bounds the entries) or payload (the whole response)."
PATHS_INVALID = "{reason}"  # knowledge.retrieval.paths words each refusal
LIMIT_INVALID = f"limit must be a whole number of entries from {LIMIT_MIN} to {LIMIT_MAX}; omit it for no cap."

# Text without control characters (Unicode category Cc), which the views refuse as invalid_topic.
PLAIN_TEXT = r"^[^\u0000-\u001f\u007f-\u009f]*$"
TOPIC_REFUSALS = {"topic_too_long": TOPIC_TOO_LONG, "invalid_topic": TOPIC_CONTROL}

TOPIC = Parameter(
    "topic",
    {"type": "string", "maxLength": TOPIC_MAX, "pattern": PLAIN_TEXT, "default": ""},
    "Key words or a question, Chinese or English; empty browses by confidence (seed §4). At most 500 characters, "
    "no control characters.",
    TOPIC_REFUSALS,
)
# budget accepts any whole number of up to 12 digits and clamps it to [200, 8000] (seed §4).
BUDGET = Parameter(
    "budget",
    {"type": "integer", "minimum": -999_999_999_999, "maximum": 999_999_999_999, "default": 2000},
    "Token limit for the entries; clamped to [200, 8000]; empty means 2000.",
    {"invalid_budget": BUDGET_NOT_INTEGER},
)
CATEGORY = Parameter(
    "category",
    {"type": "string"},
    "Only entries of this category: one of the namespace's categories; any other value answers 400 "
    "unknown_category. Empty means every category.",
    {"unknown_category": CATEGORY_UNKNOWN},
    enum="categories",
)
BUDGET_MODE = Parameter(
    "budgetMode",
    {"type": "string", "enum": [*BUDGET_MODES, ""], "default": "entries"},
    "What the budget bounds: `entries` (seed §4, the default) or `payload`, the whole response (issue 12 §3).",
    {"invalid_budget_mode": BUDGET_MODE_UNKNOWN},
)
PATHS = Parameter(
    "paths",
    {
        "type": "array",
        "maxItems": PATHS_MAX,
        "items": {"type": "string", "minLength": 1, "maxLength": PATH_MAX_LENGTH},
    },
    "The files the agent works on, relative to the project root; repeat it for each "
    "(`paths=src/api/users.py&paths=db/0001.sql`). Entries whose path globs match one come first, before topic "
    "hits; entries with globs that match none are left out; entries without globs rank by topic as always. "
    "Without a topic the pack is exactly the entries that apply. Absolute paths, `..`, an empty path (`paths=`, "
    'as MCP\'s `[""]`) or more than 50 answer 400 invalid_paths.',
    {"invalid_paths": PATHS_INVALID},
    repeated=True,
    allow_empty=False,
)
LIMIT = Parameter(
    "limit",
    {"type": "integer", "minimum": LIMIT_MIN, "maximum": LIMIT_MAX},
    f"At most this many entries ({LIMIT_MIN}-{LIMIT_MAX}), as MCP search_context's `limit`; empty means no cap. "
    "Echoed in `query.limit`; `overLimit` names the matching entries the budget would also have held.",
    {"invalid_limit": LIMIT_INVALID},
)
# GET /api/context: the parameters above, explain and why (gateway.explain), and the query string's own rules.
CONTEXT = Operation(
    (TOPIC, BUDGET, CATEGORY, BUDGET_MODE, PATHS, LIMIT, EXPLAIN, WHY),
    {"repeated_parameter": REPEATED, "too_many_parameters": TOO_MANY_FIELDS},
)
# Every read route: a query string that is not UTF-8 (query_text_check), naming the parameter.
QUERY_TEXT = Operation((), {"invalid_text": QUERY_NOT_UTF8})
_SINGLE = (TOPIC.name, BUDGET.name, CATEGORY.name, BUDGET_MODE.name, LIMIT.name)


# Unicode's Cc category is exactly these 65 code points (C0, DEL, C1), a stable property.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def topic_parse(topic: str | None, *, declared: Parameter = TOPIC) -> str:
    """`declared`: the parameter that carries the text (TOPIC, or the entry list's q)."""
    topic = topic or ""
    if len(topic) > TOPIC_MAX:
        raise declared.refusal("topic_too_long")
    if _control(topic):
        raise declared.refusal("invalid_topic")
    return topic.strip()


def budget_parse(budget: str | float | None, *, default: int) -> int:
    """A whole number clamped to [200, 8000]; empty means the default.

    Whole floats count (``600.0`` from JSON, ``budget=600.0`` in a URL: clients and models send them);
    anything else, fractions, spaces and digits other than ASCII's included, is a 400 ``invalid_budget``.
    """
    if budget is None or budget == "":
        return clamp_budget(default)
    if isinstance(budget, bool):
        raise BUDGET.refusal("invalid_budget")
    if isinstance(budget, int):
        return clamp_budget(budget)
    if isinstance(budget, float):
        if not math.isfinite(budget) or not budget.is_integer():
            raise BUDGET.refusal("invalid_budget")
        return clamp_budget(int(budget))
    if not isinstance(budget, str) or not _INTEGER.fullmatch(budget):
        raise BUDGET.refusal("invalid_budget")
    return clamp_budget(int(budget.split(".")[0]))


def category_parse(category: str | None, *, categories: Iterable[str], declared: Parameter = CATEGORY) -> str | None:
    if category is None or category.strip() == "":
        return None  # seed §4: an absent category echoes as null, never ""
    known = list(categories)
    if category not in known:
        raise declared.refusal("unknown_category", category=category, known=", ".join(known))
    return category


def budget_mode_parse(mode: str | None) -> str:
    """Issue 12 §3: ``entries`` (seed §4, the default) or ``payload``; anything else is a 400."""
    if mode is None or mode == "":
        return "entries"
    if mode not in BUDGET_MODES:
        raise BUDGET_MODE.refusal("invalid_budget_mode")
    return mode


def limit_parse(limit: str | float | None) -> int | None:
    """The cap on entries, LIMIT_MIN..LIMIT_MAX (MCP's input schema holds the same bounds); empty means none."""
    if limit is None or limit == "":
        return None
    if isinstance(limit, bool):
        raise LIMIT.refusal("invalid_limit")
    if isinstance(limit, str):
        if not (limit.isascii() and limit.isdigit() and len(limit) <= 2):
            raise LIMIT.refusal("invalid_limit")
        limit = int(limit)
    if isinstance(limit, float) and limit.is_integer():  # 2.0 from JSON is an integer to JSON Schema
        limit = int(limit)
    if not isinstance(limit, int) or not LIMIT_MIN <= limit <= LIMIT_MAX:
        raise LIMIT.refusal("invalid_limit")
    return limit


def paths_parse(paths: Sequence[str] | str | None) -> tuple[str, ...]:
    """Issue 16 §2: the paths an agent works on, normalized (knowledge.retrieval.paths); 400 ``invalid_paths``."""
    if paths is None:
        return ()
    listed = [paths] if isinstance(paths, str) else list(paths)
    if not all(isinstance(path, str) for path in listed):
        raise PATHS.refusal("invalid_paths", PATHS_NOT_STRINGS)
    try:
        return paths_normalize(listed)
    except ValueError as error:
        raise PATHS.refusal("invalid_paths", str(error)) from None


def context_query(
    *,
    topic: str | None,
    budget: str | float | None,
    category: str | None,
    categories: Sequence[str],
    default_budget: int = 2000,
    limit: str | float | None = None,
    budget_mode: str | None = None,
    paths: Sequence[str] | str | None = None,
) -> ContextQuery:
    """Validate and normalize one request; raises BadParameterError (HTTP 400) on bad input."""
    return ContextQuery(
        topic=topic_parse(topic),
        budget=budget_parse(budget, default=default_budget),
        category=category_parse(category, categories=categories),
        limit=limit_parse(limit),
        budget_mode=budget_mode_parse(budget_mode),
        paths=paths_parse(paths),
    )


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")  # strict: invalid bytes and encoded surrogates (ED A0 80) both fail
    except UnicodeDecodeError:
        return False
    return True


def query_text_check(request: HttpRequest) -> None:
    """Refuse a query string whose names or values are not UTF-8 (400 ``invalid_text`` naming the parameter).

    Django and parse_qsl would silently turn such bytes into U+FFFD, so an agent would get an answer
    to a question it did not ask; a clear refusal is more useful (issue 9: no input is guessed at).
    """
    query_bytes_check(get_bytes_from_wsgi(request.META, "QUERY_STRING", ""))


def query_bytes_check(raw: bytes) -> None:
    """query_text_check on the raw query string (the replay layer has no request object)."""
    if not raw or (raw.isascii() and b"%" not in raw):
        return
    # The pairs are split at ASCII bytes, which no UTF-8 sequence contains: the whole query decodes
    # exactly when every name and value does. Only a refusal needs the pair that does not.
    if _utf8(unquote_to_bytes(raw.replace(b"+", b" "))):
        return
    for pair in raw.split(b"&"):
        name, _, value = pair.partition(b"=")
        name_bytes = unquote_to_bytes(name.replace(b"+", b" "))
        if not (_utf8(name_bytes) and _utf8(unquote_to_bytes(value.replace(b"+", b" ")))):
            param = name_bytes.decode("utf-8", "replace")[:64]
            raise QUERY_TEXT.refusal("invalid_text", param=param)


def query_string(request: HttpRequest) -> str:
    """The raw query string as text: WSGI hands it over as latin-1 (PEP 3333); agents send UTF-8."""
    return get_bytes_from_wsgi(request.META, "QUERY_STRING", "").decode("utf-8", "replace")


def context_query_from_string(query_string: str, *, categories: Sequence[str], default_budget: int) -> ContextQuery:
    """Parse the raw query string (parse_qsl is several times cheaper than building a QueryDict on the hot path)."""
    try:
        pairs = parse_qsl(query_string, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:
        raise CONTEXT.refusal("too_many_parameters") from None
    return _context_query_of(pairs, categories=categories, default_budget=default_budget)


def context_query_from_bytes(raw: bytes, *, categories: Sequence[str], default_budget: int) -> ContextQuery:
    """query_bytes_check, then context_query_from_string of the query as text, decoding it once.

    When the query is UTF-8 and every name and value decodes strictly, that is the whole check (the
    pieces are split at ASCII bytes, so the whole query decodes too) and nothing was replaced; any
    other query takes the two steps, which refuse it or parse it as before.
    """
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=MAX_FIELDS, errors="strict")
    except ValueError:  # not UTF-8 (UnicodeDecodeError), or too many parameters
        query_bytes_check(raw)
        return context_query_from_string(
            raw.decode("utf-8", "replace"), categories=categories, default_budget=default_budget
        )
    return _context_query_of(pairs, categories=categories, default_budget=default_budget)


def _context_query_of(pairs: list[tuple[str, str]], *, categories: Sequence[str], default_budget: int) -> ContextQuery:
    values: dict[str, str] = {}
    paths: list[str] | None = None
    for name, value in pairs:
        if name == PATHS.name:  # an empty paths= is an empty path (400), as MCP's [""]: README, Paths
            paths = [*(paths or []), value]
        elif name in _SINGLE:
            if name in values:
                raise CONTEXT.refusal("repeated_parameter", param=name)
            values[name] = value
    return context_query(
        topic=values.get("topic"),
        budget=values.get("budget"),
        category=values.get("category"),
        categories=categories,
        default_budget=default_budget,
        budget_mode=values.get("budgetMode"),
        paths=paths,
        limit=values.get("limit"),
    )
