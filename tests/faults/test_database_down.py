"""PostgreSQL stopped or hung under a running worker: reads answer from memory, writes answer 503, nothing
half-written, and no request waits on a hung server longer than its deadline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.stack import FaultStack, fault_stack
from tests.mcp_bridge.live import run_setup
from tests.worker import wait_for

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
# What agents read, at the bare host and under the path prefix: cached files and computed packs.
READS = (
    "/llms.txt",
    "/context.json",
    "/api/context?topic=token%20budget",
    "/t/evergreen/llms-full.txt",
    "/t/evergreen/api/entries/EG-101",
    "/.well-known/agent-card.json",
)
CSRF = "f" * 32  # any token works when cookie and header agree (Django's double-submit check)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    with fault_stack(Path(tmp_path_factory.mktemp("database-down"))) as running:
        yield running


def mcp_call(http: httpx.Client, path: str, name: str, arguments: dict[str, Any], **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return http.post(path, json=body, headers={**MCP_HEADERS, **headers})


def a2a_send(http: httpx.Client, text: str) -> httpx.Response:
    message = {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": text}]}
    return http.post("/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}})


def degraded(http: httpx.Client) -> bool:
    return "Evergreen-Degraded" in http.get("/llms.txt").headers


def test_reads_answer_from_memory_and_writes_refuse_while_postgresql_is_stopped(stack: FaultStack) -> None:
    vault = {"Authorization": f"Bearer {stack.vault_key}"}
    admin = {"Cookie": f"sessionid={stack.session}; csrftoken={CSRF}", "X-CSRFToken": CSRF}
    before_content = run_setup("inspect", stack.env)["published"]
    with stack.http() as http:
        warm = {path: http.get(path) for path in READS}
        assert {path: r.status_code for path, r in warm.items()} == dict.fromkeys(READS, 200)
        assert mcp_call(http, "/mcp", "search_context", {"query": "token budget"}).json()["result"]["isError"] is False
        assert http.get("/t/vault/api/context?topic=archive", headers=vault).status_code == 200
        assert http.get("/admin/jsi18n/", headers=admin).status_code == 200  # the session is valid
        assert "Evergreen-Degraded" not in warm["/llms.txt"].headers

        stack.postgres.stop()
        try:
            wait_for(lambda: degraded(http), what="the worker to notice the database is gone")
            again = {path: http.get(path) for path in READS}
            assert {path: r.status_code for path, r in again.items()} == dict.fromkeys(READS, 200), stack.log_tail()
            assert all(again[path].content == warm[path].content for path in READS)
            assert all(r.headers["Evergreen-Degraded"].startswith("database;stale=") for r in again.values())
            # Not cached, computed from the index in memory.
            assert http.get("/api/context?topic=release%20rollback").status_code == 200
            answer = mcp_call(http, "/t/evergreen/mcp", "search_context", {"query": "citation rules"})
            assert answer.status_code == 200 and answer.json()["result"]["isError"] is False
            assert http.get("/t/vault/api/context?topic=archive", headers=vault).status_code == 200
            # A2A answers from memory too; its task is not stored, so nothing is half-written.
            task = a2a_send(http, "token budget")
            assert task.status_code == 200 and task.json()["result"]["status"]["state"] == "completed"

            # Names and keys this worker never read need the database: 503 with a code, not 500.
            unknown = http.get("/t/never-read/llms.txt")
            assert unknown.status_code == 503 and unknown.json()["error"]["code"] == "database_unavailable"
            assert unknown.headers["Retry-After"]
            other_key = http.get("/t/vault/llms.txt", headers={"Authorization": "Bearer not-a-key"})
            assert other_key.status_code == 503

            health = http.get("/healthz")
            assert health.status_code == 200
            assert health.json()["status"] == "degraded" and health.json()["serving"] is True
            assert health.json()["database"].startswith("error")
            assert http.get("/readyz").status_code == 503

            page = http.get("/admin/jsi18n/", headers=admin)
            assert page.status_code == 503 and "database_unavailable" in page.text
            write = http.post("/admin/knowledge/namespace/add/", data={"slug": "written-while-down"}, headers=admin)
            assert write.status_code == 503 and "database_unavailable" in write.text
        finally:
            stack.postgres.start()

        wait_for(lambda: http.get("/readyz").status_code == 200, what="/readyz after PostgreSQL is back")
        wait_for(lambda: not degraded(http), what="answers without Evergreen-Degraded")
        assert http.get("/t/never-read/llms.txt").status_code == 404
    assert run_setup("inspect", stack.env)["published"] == before_content


def test_reads_answer_from_memory_while_postgresql_hangs(stack: FaultStack) -> None:
    """QA paused the whole cluster (SIGSTOP): every request hung on the open connection until gunicorn
    killed the worker, which came back with nothing in memory and answered 503 to everything."""
    admin = {"Cookie": f"sessionid={stack.session}; csrftoken={CSRF}", "X-CSRFToken": CSRF}
    with stack.http() as http:
        wait_for(lambda: http.get("/readyz").status_code == 200, what="/readyz before the pause")
        warm = {path: http.get(path) for path in READS}
        assert {path: r.status_code for path, r in warm.items()} == dict.fromkeys(READS, 200)
        assert http.get("/admin/jsi18n/", headers=admin).status_code == 200
        worker = http.get("/healthz").json()

        stack.postgres.pause()
        try:
            wait_for(lambda: degraded(http), what="the worker to give up waiting on the hung database")
            again = {path: http.get(path) for path in READS}
            assert {path: r.status_code for path, r in again.items()} == dict.fromkeys(READS, 200), stack.log_tail()
            assert all(again[path].content == warm[path].content for path in READS)
            assert http.get("/api/context?topic=release%20rollback").status_code == 200
            answer = mcp_call(http, "/t/evergreen/mcp", "search_context", {"query": "citation rules"})
            assert answer.status_code == 200 and answer.json()["result"]["isError"] is False

            unknown = http.get("/t/not-read-either/llms.txt")  # the first test read never-read
            assert unknown.status_code == 503 and unknown.json()["error"]["code"] == "database_unavailable"
            page = http.get("/admin/jsi18n/", headers=admin)
            assert page.status_code == 503 and "database_unavailable" in page.text
            health = http.get("/healthz").json()
            assert health["serving"] is True and health["releases_in_memory"] == worker["releases_in_memory"]
        finally:
            stack.postgres.resume()

        wait_for(lambda: http.get("/readyz").status_code == 200, what="/readyz after PostgreSQL resumes")
        wait_for(lambda: not degraded(http), what="answers without Evergreen-Degraded")
        assert http.get("/admin/jsi18n/", headers=admin).status_code == 200
    assert "WORKER TIMEOUT" not in stack.log.read_text()
