"""The README's management API examples work as written (issue 15, done means): the curl flow that proposes,
reviews and publishes a change, and the GitHub Actions workflow that syncs a folder through a server."""

from __future__ import annotations

import re
import shlex
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from knowledge.models import EntryVersion, Namespace
from knowledge.services.demo import demo_load
from knowledge.services.personal_tokens import personal_token_create

pytestmark = pytest.mark.django_db

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
LOCAL = "http://127.0.0.1:8000"
EXAMPLE_VERSION = "187"  # the version id the README's answers show; the test's draft has its own


def _block(after: str, language: str) -> str:
    """The first ```<language> block after the line `after`."""
    found = re.search(re.escape(after) + r".*?^```" + language + r"\n(.*?)^```", README, flags=re.M | re.S)
    assert found, f"the README has no {language} block after {after!r}"
    return found.group(1)


def _commands(block: str) -> tuple[dict[str, str], list[list[str]]]:
    """The block's VAR=value assignments and its commands as words (comments dropped)."""
    variables: dict[str, str] = {}
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if len(words) == 1 and re.match(r"^[A-Z_]+=", words[0]):
            name, _, value = words[0].partition("=")
            variables[name] = value
        elif words:
            commands.append(words)
    return variables, commands


def _curl(client: Client, words: list[str], variables: dict[str, str]) -> Any:
    def expand(word: str) -> str:
        for name in sorted(variables, key=len, reverse=True):
            word = word.replace(f"${name}", variables[name])
        return word

    method, headers, data, url = "GET", {}, None, ""
    rest = iter(expand(word) for word in words[1:])
    for word in rest:
        if word == "-X":
            method = next(rest)
        elif word == "-H":
            name, _, value = next(rest).partition(":")
            headers[name.strip()] = value.strip()
        elif word == "-d":
            data = next(rest)
        elif word.startswith(LOCAL):
            url = word.removeprefix(LOCAL)
    content_type = headers.pop("Content-Type", "application/json")
    return client.generic(method, url, data or "", content_type=content_type, headers=headers)


@pytest.fixture
def demo_tokens() -> dict[str, str]:
    """The demo, and personal tokens of its editor and reviewer (named as the README's variables)."""
    namespace = demo_load(password="demo-password").namespace
    people = get_user_model().objects.in_bulk(["editor", "reviewer"], field_name="username")
    return {
        f"{role.upper()}_TOKEN": personal_token_create(
            user=people[role], name=f"readme {role}", namespaces=[namespace], scope=role, expires_at=None
        )[1]
        for role in ("editor", "reviewer")
    }


def test_the_curl_flow_proposes_reviews_and_publishes_as_the_readme_says(demo_tokens: dict[str, str]) -> None:
    variables, commands = _commands(_block("Propose a change, review it, publish it:", "sh"))
    variables |= demo_tokens
    client = Client()
    draft_id = None
    for words in commands:
        assert words[0] == "curl", words
        asked = words if draft_id is None else [word.replace(EXAMPLE_VERSION, str(draft_id)) for word in words]
        response = _curl(client, asked, variables)
        assert response.status_code in (200, 201), (asked, response.content[:300])
        if draft_id is None:
            draft = response.json()
            draft_id = draft["id"]
            # The README's `"v187.0"` is this draft's ETag in the documented form: v<id>.<lock version>.
            assert draft["etag"] == f'"v{draft_id}.0"'

    assert draft_id is not None
    version = EntryVersion.objects.get(pk=draft_id)
    assert (version.entry.public_id, version.state) == ("EG-202", "published")
    assert version.summary == "Ask for 2000 tokens; raise the budget when truncated is true."
    assert {record.actor.username for record in version.audit.all()} == {"editor", "reviewer"}


def test_the_github_actions_workflow_checks_on_pull_requests_and_proposes_on_main(
    demo_tokens: dict[str, str], manage_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workflow = yaml.safe_load(_block("In GitHub Actions:", "yaml"))
    assert set(workflow[True]) == {"pull_request", "push"}  # YAML 1.1 reads the key `on` as true
    step = workflow["jobs"]["sync"]["steps"][-1]
    assert step["env"]["EVERGREEN_TOKEN"] == "${{ secrets.EVERGREEN_TOKEN }}"
    command = step["run"].strip().splitlines()[-1]
    words = shlex.split(command.replace("https://kb.example.com", manage_server))
    assert words[:2] == ["django-admin", "sync_entries"]

    kb = tmp_path / "kb"
    call_command("export_entries", str(kb), "--namespace", "evergreen", "--format", "markdown", stdout=StringIO())
    path = kb / "EG-202.md"
    path.write_text(re.sub(r"(?m)^summary: .*$", "summary: Raise the budget when truncated is true.", path.read_text()))
    monkeypatch.setenv("EVERGREEN_TOKEN", demo_tokens["EDITOR_TOKEN"])
    monkeypatch.chdir(tmp_path)
    versions = EntryVersion.objects.count()

    def run(mode: list[str]) -> str:
        out = StringIO()
        args = [word for word in words[2:] if word != "$mode"]
        call_command("sync_entries", *args, *mode, stdout=out, stderr=StringIO())
        return out.getvalue()

    planned = run(["--dry-run"])  # a pull request
    assert "EG-202" in planned and "1 change" in planned and EntryVersion.objects.count() == versions
    proposed = run(["--note", "From 0123abc"])  # a push to main
    assert "EG-202" in proposed
    newest = EntryVersion.objects.filter(
        entry__public_id="EG-202", entry__namespace=Namespace.objects.get(slug="evergreen")
    ).latest("number")
    assert (newest.state, newest.summary) == ("in_review", "Raise the budget when truncated is true.")
