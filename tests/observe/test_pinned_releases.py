"""?release= on every read route, /api/entries/<ID>?version=N, and the release named in a header and the body."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Artifact, Namespace, Release
from tests.configure import configure
from tests.observe.releases import second_release

pytestmark = pytest.mark.django_db

ROUTES = ["api/context?topic=alpha", "llms.txt", "context.json", "api/entries/AL-001", "api/changes?since=0", ""]


@pytest.mark.parametrize("route", ROUTES)
def test_every_read_route_answers_from_the_release_asked_for(client: Any, alpha: Namespace, route: str) -> None:
    second_release(alpha)
    joiner = "&" if "?" in route else "?"
    pinned = client.get(f"/t/alpha/{route}{joiner}release=1")
    current = client.get(f"/t/alpha/{route}")
    assert pinned.status_code == current.status_code == 200
    assert pinned["Evergreen-Release"] == "1" and current["Evergreen-Release"] == "2"
    assert pinned["Evergreen-Knowledge-Version"] == Release.objects.get(namespace=alpha, sequence=1).knowledge_version
    assert pinned.content != current.content


def test_a_pinned_file_is_that_releases_bytes_and_json_bodies_name_it(client: Any, alpha: Namespace) -> None:
    second_release(alpha)
    first = Release.objects.get(namespace=alpha, sequence=1)
    llms = client.get("/t/alpha/llms.txt?release=1")
    assert llms.content == bytes(Artifact.objects.get(release=first, name="llms.txt").content)
    pack = client.get(f"/t/alpha/api/context?topic=support&release={first.knowledge_version}").json()
    assert (pack["releaseId"], pack["knowledgeVersion"]) == (1, first.knowledge_version)
    assert "AL-003" not in [e["id"] for e in pack["entries"]]
    assert client.get("/t/alpha/api/entries/AL-003?release=1").status_code == 404


@pytest.mark.parametrize(
    ("reference", "status", "code"),
    [("7", 400, "unknown_release"), ("9.9.9", 400, "unknown_release"), ("latest", 400, "invalid_release")],
)
def test_a_release_that_does_not_exist_is_refused(
    client: Any, alpha: Namespace, reference: str, status: int, code: str
) -> None:
    response = client.get(f"/t/alpha/api/context?topic=alpha&release={reference}")
    assert response.status_code == status and response.json()["error"]["code"] == code


def test_a_release_outside_the_retention_window_is_gone(client: Any, alpha: Namespace, settings: Any) -> None:
    second_release(alpha)
    configure(settings, release_retention_days=1)  # release 1 stopped serving in September
    response = client.get("/t/alpha/llms.txt?release=1")
    assert response.status_code == 410 and response.json()["error"]["code"] == "release_expired"
    assert client.get("/t/alpha/llms.txt?release=2").status_code == 200  # the serving one always


def test_release_numbers_are_the_namespaces_own(client: Any, alpha: Namespace, beta: Namespace) -> None:
    second_release(alpha)
    assert client.get("/t/beta/llms.txt?release=2").json()["error"]["code"] == "unknown_release"


def test_an_entry_version_is_really_that_version(client: Any, alpha: Namespace) -> None:
    second_release(alpha)  # AL-002 has versions 1 and 2
    old = client.get("/t/alpha/api/entries/AL-002?version=1").json()
    new = client.get("/t/alpha/api/entries/AL-002?version=2").json()
    assert (old["version"], new["version"]) == (1, 2)
    assert old["summary"] == "Alpha costs nothing for agents."
    assert "5 euros" in new["summary"]
    markdown = client.get("/t/alpha/api/entries/AL-002.md?version=1").content.decode()
    assert "Alpha costs nothing for agents." in markdown and "5 euros" not in markdown
    for version, code in (("3", "unknown_version"), ("0", "unknown_version"), ("one", "invalid_version")):
        refused = client.get(f"/t/alpha/api/entries/AL-002?version={version}")
        assert refused.status_code == 400 and refused.json()["error"]["code"] == code
