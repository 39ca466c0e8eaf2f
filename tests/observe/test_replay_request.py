"""Replay: any logged request rendered again byte for byte from its release, and diffed with today's answer."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Namespace
from tests.mcp_bridge.http_calls import tool
from tests.observe.logged import logging_on, written
from tests.observe.releases import second_release

pytestmark = pytest.mark.django_db
__all__ = ["logging_on"]


def test_a_logged_request_replays_byte_for_byte_after_the_release_changed(
    client: Any, alpha: Namespace, logging_on: None, capsysbinary: Any
) -> None:
    original = client.get("/t/alpha/api/context?topic=alpha%20pricing&budget=800")
    (row,) = written()
    second_release(alpha)

    out, err = io.StringIO(), io.StringIO()
    call_command("replay_request", str(row.pk), "--body", "--diff", stdout=out, stderr=err)
    body = capsysbinary.readouterr().out
    assert body.rstrip(b"\n") == original.content
    assert "byte for byte the same" in err.getvalue()
    diff = json.loads(out.getvalue())
    assert diff["servingReleaseId"] == 2 and diff["fields"]["releaseId"] == [1, 2]
    assert "AL-002" in diff["changed"]


def test_requests_logged_from_mcp_and_for_one_version_replay_too(
    client: Any, alpha: Namespace, logging_on: None
) -> None:
    second_release(alpha)
    tool(client, "/t/alpha/mcp", "search_context", {"query": "support hours"})
    client.get("/t/alpha/api/entries/AL-002?version=1")
    for row in written():
        err = io.StringIO()
        call_command("replay_request", str(row.pk), stderr=err)
        assert "byte for byte the same" in err.getvalue(), (row.channel, row.route)


def test_an_unknown_row_is_a_clear_error(db: Any) -> None:
    with pytest.raises(CommandError, match="No request log row 999"):
        call_command("replay_request", "999")


def test_the_admin_replays_next_to_the_log_entry_for_reviewers_only(
    client: Any, alpha: Namespace, reviewer: Any, editor: Any, logging_on: None
) -> None:
    client.get("/t/alpha/api/context?topic=alpha%20pricing")
    (row,) = written()
    second_release(alpha)
    client.force_login(reviewer)
    listing = client.get("/admin/knowledge/requestlog/").content.decode()
    assert f"/admin/knowledge/requestlog/{row.pk}/replay/" in listing
    page = client.get(f"/admin/knowledge/requestlog/{row.pk}/replay/").content.decode()
    assert 'id="replay-identical"' in page and 'id="replay-diff"' in page and "AL-002" in page
    client.force_login(editor)
    assert client.get(f"/admin/knowledge/requestlog/{row.pk}/replay/").status_code in (403, 404)
