"""Evergreen's A2A extensions: their URIs on this deployment and the specification each URI serves.

A2A v0.3.0 docs/topics/extensions.md: an extension is identified by a URI, versioned in its path, and
"the extension specification document SHOULD be hosted at the extension's URI". Evergreen has no
registry of its own, so every deployment hosts the specifications at its own origin
(``https://<host>/a2a/extensions/token-budget/v1``): the URI a card names always resolves to the
document that defines it, and ``/v2`` would be a new URI for a breaking change.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from mcp_bridge import schemas

EXTENSIONS_PATH: Final = "/a2a/extensions/"
TOKEN_BUDGET: Final = "token-budget/v1"  # noqa: S105  # a path, not a secret
CITATION: Final = "citation/v1"
EXTENSION_NAMES: Final = (TOKEN_BUDGET, CITATION)


def origin_of(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


def extension_uri(base_url: str, name: str) -> str:
    """The extension's URI on the deployment that serves ``base_url`` (any namespace of it)."""
    return origin_of(base_url) + EXTENSIONS_PATH + name


def supported_extensions(base_url: str) -> tuple[str, ...]:
    return tuple(extension_uri(base_url, name) for name in EXTENSION_NAMES)


SPECIFICATIONS: Final = {
    TOKEN_BUDGET: f"""# Evergreen token budget — A2A extension, version 1

An agent that declares this extension packs every answer to a token budget the client chooses.

- **Request**: put `budget` (tokens, integer) in the data part of `message/send`, next to `topic`,
  `category` and `limit`, or in `arguments` when calling the `search_context` skill. Default
  {schemas.BUDGET_DEFAULT}; values outside [{schemas.BUDGET_MIN}, {schemas.BUDGET_MAX}] are clamped, never refused.
- **Answer**: the artifact's data part carries `budget` (after clamping), `usedTokens`
  (never above `budget`), `truncated` (true when relevant entries were left out: raise the budget or
  narrow the topic and ask again), `minEntryTokens` (the cheapest relevant entry) and `omitted`
  (IDs and token costs of the entries left out, to fetch with the `get_entry` skill's `ids`).
- **Estimator**: tokens = round(CJK characters × 1.0 + other characters × 0.28).
- **Card parameters** (`capabilities.extensions[].params`): `field`, `unit`, `default`, `minimum`,
  `maximum`, `clamped`, `estimator`.
- **Activation**: optional (`required: false`). The behaviour applies to every request; a client
  that lists this URI in `X-A2A-Extensions` gets it echoed in the response's `X-A2A-Extensions`.
""",
    CITATION: """# Evergreen citations — A2A extension, version 1

An agent that declares this extension answers with citable facts.

- **Answer**: every entry has a stable ID that is never reused (a retired ID answers as gone, with
  its replacement). The artifact's data part carries `citations`: one per entry, with `marker`
  (the text to append to a sentence that rests on the entry, such as `[EG-202]`), `entryId`, `url`,
  `text` and `confidence` (0–1).
- **Rules**: the card parameter `rules` lists the knowledge base's citation rules in its own
  language; a client should pass them to its model unchanged. `matched: false` means the entries are
  a fallback that must not be cited.
- **Card parameters** (`capabilities.extensions[].params`): `field`, `marker` (the marker's
  pattern), `confidenceField`, `rules`.
- **Activation**: optional (`required: false`), echoed in `X-A2A-Extensions` when requested.
""",
}
