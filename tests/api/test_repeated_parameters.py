"""A single-valued query parameter sent twice is refused on every read route, never "last one wins" (QA).

README, Parameters declared once: each route's parameters, every route's `?release=` included, are
declarations whose refusals the server answers; a repeat is `400 repeated_parameter` naming it, as
/api/context has answered for its own parameters. Parameters documented as repeatable (`paths`) stay so.
"""

from __future__ import annotations

from typing import Any

import pytest

from gateway.declared import REPEATED
from knowledge.models import Namespace

pytestmark = pytest.mark.django_db

REPEATS = [
    ("api/context?release=1&release=2", "release"),
    ("llms.txt?release=1&release=2", "release"),
    ("api/entries/AL-001?release=1&release=2", "release"),
    ("api/entries/AL-001.md?release=1&release=1", "release"),
    ("entries/?release=1&release=2", "release"),
    ("api/changes?since=1&since=2", "since"),
    ("api/changes?since=0&limit=1&limit=2", "limit"),
    ("api/changes?since=0&after=AL-001&after=AL-002", "after"),
    ("entries/?q=a&q=b", "q"),
    ("entries/?page=1&page=2", "page"),
    ("entries/?category=fact&category=fact", "category"),
    ("?topic=a&topic=b", "topic"),
    ("?budget=800&budget=900", "budget"),
]


@pytest.mark.parametrize(("url", "param"), REPEATS, ids=[url for url, _ in REPEATS])
def test_a_repeated_single_valued_parameter_is_refused_on_every_route(
    client: Any, alpha: Namespace, url: str, param: str
) -> None:
    response = client.get(f"/t/alpha/{url}")

    assert response.status_code == 400, response.content
    assert response.json() == {
        "error": {"code": "repeated_parameter", "message": REPEATED.format(param=param), "param": param}
    }


def test_the_refusal_is_the_same_body_as_api_contexts_own(client: Any, alpha: Namespace) -> None:
    own = client.get("/t/alpha/api/context?topic=a&topic=b").json()["error"]
    pinned = client.get("/t/alpha/api/context?release=1&release=2").json()["error"]

    assert own.keys() == pinned.keys()
    assert (own["code"], own["message"].replace("topic", "release")) == (pinned["code"], pinned["message"])


def test_repeatable_paths_and_a_single_release_still_answer(client: Any, alpha: Namespace) -> None:
    assert client.get("/t/alpha/api/context?paths=src/a.py&paths=src/b.py").status_code == 200
    pinned = client.get("/t/alpha/llms.txt?release=1")
    assert pinned.status_code == 200
    assert pinned["Evergreen-Release"] == "1"
    assert client.get("/t/alpha/entries/?q=alpha&page=1").status_code == 200
    assert client.get("/t/alpha/api/changes?since=0&limit=5").status_code == 200


def test_unknown_parameters_may_repeat(client: Any, alpha: Namespace) -> None:
    """Only what a route declares is refused: tracking tags and the like are not the route's to judge."""
    assert client.get("/t/alpha/llms.txt?utm=a&utm=b").status_code == 200
    assert client.get("/t/alpha/entries/?utm=a&utm=b").status_code == 200
