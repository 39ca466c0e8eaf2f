"""sync_entries against a server: read the namespace through the management API and propose through it.

The same plan as a local sync (knowledge.services.sync), made from what `/api/manage/` answers; each
proposal is the API's create / draft / edit (If-Match) / submit, so the server applies its own rules
and records the token's owner. Proposals are written one entry at a time: if the server refuses one,
the sync withdraws the draft it opened for it and stops, saying which were already proposed (a second
run finds them pending).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from knowledge.services.content import VersionContent
from knowledge.services.sync import (
    CHANGE,
    CONTENT_FIELDS,
    DRAFT_OPENED_SINCE,
    NEW,
    WRITES,
    EntryFile,
    EntrySide,
    NamespaceSide,
    Progress,
    SyncPlan,
    VersionSide,
    content_for,
    content_value,
)

TIMEOUT_SECONDS = 30.0
DISCARD_NOTE = "Discarded by sync_entries: the server refused the proposal."
OPEN = ("draft", "in_review", "approved")
# Tests hand in an in-process transport (httpx.WSGITransport); real runs use the network.
transport: httpx.BaseTransport | None = None


class RemoteError(Exception):
    """The server refused a request; the message is its error and what was done before."""


class ManageClient:
    def __init__(self, base: str, token: str) -> None:
        self.base = base.rstrip("/") + "/"
        self.http = httpx.Client(
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=TIMEOUT_SECONDS,
            transport=transport,
        )

    def call(
        self, method: str, path: str, *, json: Any = None, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        url = path if path.startswith("http") else self.base + path
        response = self.http.request(method, url, json=json, headers=headers)
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
                detail = f"{error['code']}: {error['message']}" + (f" ({error['param']})" if error.get("param") else "")
            except (ValueError, KeyError, TypeError):
                detail = response.text[:200]
            raise RemoteError(f"{method} {url} answered {response.status_code} {detail}")
        return response

    def pages(self, path: str) -> Iterator[dict[str, Any]]:
        url: str | None = path
        while url:
            body = self.call("GET", url).json()
            yield from body["results"]
            url = body["next"]


SERVER_TOO_OLD = (
    "The server's management API does not show {fields} of a version; a sync through it would lose them. "
    "Upgrade the server, or sync with --user on it."
)


def _version_side(row: dict[str, Any]) -> VersionSide:
    """The version as the API shows it: every content field, the trust fields included (a lossless sync)."""
    missing = [name for name in CONTENT_FIELDS if name not in row]
    if missing:
        raise RemoteError(SERVER_TOO_OLD.format(fields=", ".join(missing)))
    return VersionSide(
        id=row["id"],
        number=row["number"],
        state=row["state"],
        content_hash=row["content_hash"],
        content={name: content_value(name, row[name]) for name in CONTENT_FIELDS},
        author=row.get("author") or "",
    )


def remote_side(client: ManageClient) -> NamespaceSide:
    """The namespace as the API shows it: entries, and per entry the version a file is compared with."""
    root = client.call("GET", "").json()
    entries = list(client.pages("entries/?limit=200"))
    versions: dict[str, list[dict[str, Any]]] = {}
    for row in client.pages("versions/?limit=200&ordering=id"):
        versions.setdefault(row["entry"], []).append(row)
    sides: dict[str, EntrySide] = {}
    for entry in entries:
        rows = sorted(versions.get(entry["id"], []), key=lambda row: row["number"])
        if not rows:
            continue
        open_rows = [row for row in rows if row["state"] in OPEN]
        live = [row for row in rows if row["number"] == entry["live_version"]]
        current = (open_rows or live or rows)[-1]
        sides[entry["id"]] = EntrySide(
            public_id=entry["id"],
            category=entry["category"],
            retired=entry["retired"],
            live=entry["live_version"] is not None,
            current=_version_side(current),
        )
    return NamespaceSide(
        slug=root["namespace"],
        prefix=root["prefix"],
        blocks={c["slug"]: tuple((start, end) for start, end in c["blocks"]) for c in root["categories"]},
        entries=sides,
    )


def _body(content: VersionContent) -> dict[str, Any]:
    return {
        "title": content.title,
        "summary": content.summary,
        "body": content.body,
        "tags": list(content.tags),
        "aliases": list(content.aliases),
        "links": list(content.links),
        "paths": list(content.paths),
        "overrides": content.overrides,
        "confidence": str(content.confidence),
        "updated": content.updated.isoformat(),
        "sensitivity": content.sensitivity,
        "review_by": content.review_by.isoformat() if content.review_by else None,
        "valid_until": content.valid_until.isoformat() if content.valid_until else None,
    }


def sentence(error: Exception) -> str:
    """The error as a sentence ending in exactly one period (the server's message may end with its own)."""
    return str(error).rstrip(".") + "."


def _discard(client: ManageClient, draft: dict[str, Any]) -> str:
    """Withdraw a draft this run opened, so a refusal leaves no open draft behind; what to add to the error.

    Evergreen never deletes a version: withdrawing is how the management API discards a draft.
    """
    try:
        client.call("POST", f"versions/{draft['id']}/withdraw/", json={"note": DISCARD_NOTE})
    except (RemoteError, httpx.HTTPError) as error:
        reason = str(error).rstrip(".")
        return f" The draft v{draft['number']} it opened could not be discarded ({reason}); withdraw it."
    return f" The draft v{draft['number']} it opened was discarded (withdrawn)."


def remote_apply(
    *, client: ManageClient, plan: SyncPlan, files: list[EntryFile], note: str, progress: Progress | None = None
) -> SyncPlan:
    """Propose each difference through the API; RemoteError names the refusal and what was proposed before it."""
    by_name = {file.name: file for file in files}
    writes = [change for change in plan.changes if change.kind in WRITES]
    done: list[str] = []
    for count, change in enumerate(writes, start=1):
        item = by_name[change.file].item
        opened: dict[str, Any] | None = None  # the draft this run opened: discarded if the proposal fails
        try:
            if change.kind == NEW:
                body = {**_body(item.content), "category": change.category}
                if item.public_id:
                    body["id"] = item.public_id
                entry = client.call("POST", "entries/", json=body).json()
                change.public_id = entry["id"]
                version = entry["versions"][0]
            else:
                response = client.call("POST", f"entries/{change.public_id}/draft/")
                version = response.json()
                if response.status_code == httpx.codes.CREATED:
                    opened = version
                if change.base is None or version["content_hash"] != change.base.content_hash:
                    raise RemoteError(DRAFT_OPENED_SINCE.format(id=change.public_id))
                if change.kind == CHANGE:
                    content = content_for(item, _version_side(version))
                    version = client.call(
                        "PATCH",
                        f"versions/{version['id']}/",
                        json=_body(content),
                        headers={"If-Match": version["etag"]},
                    ).json()
            client.call("POST", f"versions/{version['id']}/submit/", json={"note": note})
        except RemoteError as error:
            discarded = _discard(client, opened) if opened else ""
            already = f" Already proposed: {', '.join(done)}." if done else " Nothing was proposed."
            raise RemoteError(f"{change.public_id or change.file}: {sentence(error)}{discarded}{already}") from None
        change.version = version["number"]
        done.append(change.public_id)
        if progress:
            progress(count, len(writes))
    return plan
