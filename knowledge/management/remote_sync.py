"""sync_entries against a server: read the namespace through the management API and propose through it.

The same plan as a local sync (knowledge.services.sync), made from what `/api/manage/` answers; each
proposal is the API's create / draft / edit (If-Match) / submit, so the server applies its own rules
and records the token's owner. Proposals are written one entry at a time: if the server refuses one,
the sync withdraws the draft it opened for it and stops, saying which were already proposed (a second
run finds them pending). A dry run sends each proposal to `entries/validate/`, which runs the same write
and rolls it back, so --check refuses every file the real run would.
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
    PlannedChange,
    Progress,
    SyncFolderError,
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


class RefusedError(RemoteError):
    """The server answered an error; `status`, `code` and `detail` (its message, with the field) say which."""

    def __init__(self, message: str, *, status: int, code: str, detail: str) -> None:
        super().__init__(message)
        self.status, self.code, self.detail = status, code, detail


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
            code, message = "", response.text[:200]
            try:
                error = response.json()["error"]
                code = str(error["code"])
                message = f"{error['message']}" + (f" ({error['param']})" if error.get("param") else "")
            except (ValueError, KeyError, TypeError):
                pass
            detail = f"{code}: {message}" if code else message
            raise RefusedError(
                f"{method} {url} answered {response.status_code} {detail}",
                status=response.status_code,
                code=code,
                detail=message,
            )
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


def _new_body(change: PlannedChange, file: EntryFile) -> dict[str, Any]:
    """The create body of a new entry: its content, category and the file's ID if it names one."""
    body = {**_body(file.item.content), "category": change.category}
    if file.item.public_id:
        body["id"] = file.item.public_id
    return body


VALIDATED = frozenset({NEW, CHANGE})
# What the server answers for a proposal it refuses (the file's fault); any other error is the run's.
FILE_REFUSALS = frozenset({400, 404, 409, 410, 422})
NOT_AN_EDITOR = (
    "The server checks each proposal as the write would, without writing it, and that needs the token's owner to "
    "be an editor of the namespace (a token of scope read is enough): {detail}"
)
SERVER_CANNOT_VALIDATE = (
    "The server cannot check proposals without writing them (POST entries/validate/ answered {status}); upgrade "
    "it, or check against a copy of its database with --namespace and no --server."
)


def remote_validate(
    *, client: ManageClient, plan: SyncPlan, files: list[EntryFile], progress: Progress | None = None
) -> None:
    """Have the server check every new entry and change the plan would propose (it writes nothing); raise
    SyncFolderError naming each file it refuses, with its message and code, as a local sync names bad files.

    A refusal for who is asking (403) or an older server is the run's error, not a file's.
    """
    by_name = {file.name: file for file in files}
    checked = [change for change in plan.changes if change.kind in VALIDATED]
    errors: list[tuple[str, str]] = []
    for count, change in enumerate(checked, start=1):
        file = by_name[change.file]
        if change.kind == NEW:
            body = _new_body(change, file)
        else:
            body = {**_body(content_for(file.item, change.base)), "entry": change.public_id}
        try:
            client.call("POST", "entries/validate/", json=body)
        except RefusedError as error:
            if error.status == httpx.codes.FORBIDDEN:
                raise RemoteError(NOT_AN_EDITOR.format(detail=sentence(error))) from None
            if error.status == httpx.codes.METHOD_NOT_ALLOWED:
                raise RemoteError(SERVER_CANNOT_VALIDATE.format(status=error.status)) from None
            if error.status not in FILE_REFUSALS:
                raise
            errors.append((change.file, f"the server refuses it: {error.detail.rstrip('.')} ({error.code})"))
        if progress:
            progress(count, len(checked))
    if errors:
        raise SyncFolderError(errors)


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
                entry = client.call("POST", "entries/", json=_new_body(change, by_name[change.file])).json()
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
