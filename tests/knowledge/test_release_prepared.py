"""A release that ranks with feedback is made ready to search where it loads, off the request path (issue 18 §4):
its first search transposes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.retrieval.feedback import ForwardIndex
from knowledge.selectors.serving import release_cache_key, release_loaded, serving_caches_clear
from tests.servingfixtures import publish

pytestmark = pytest.mark.django_db


def crowded_rows() -> list[dict[str, Any]]:
    """Sixty abstracts sharing their words in overlapping runs (tests/retrieval/test_calibration_carry.py):
    a crowded collection, which ranks with feedback."""
    words = ["laminar", "turbulent", "boundary", "layer", "plate", "friction", "heat", "transfer", "mach", "shock"]
    rows = []
    for n in range(60):
        run = [words[(n + k) % len(words)] for k in range(6)]
        body = ". ".join(f"The {run[k]} {run[(k + 1) % 6]} {run[(k + 2) % 6]} flow was measured" for k in range(6))
        rows.append(
            {"id": f"AL-{n + 1:03d}", "category": "fact", "title": f"{run[0]} {run[1]} study", "body": body + "."}
        )
    return rows


def test_a_loaded_crowded_release_answers_without_transposing_its_postings(
    ns_a: Namespace, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    namespace = publish(ns_a, crowded_rows())
    release = namespace.active_release
    assert release is not None
    serving_caches_clear()
    loaded = release_loaded(release_id=release.pk, key=release_cache_key(release), namespace_id=namespace.pk)
    assert loaded.index.options.feedback

    def transposed(*_: Any, **__: Any) -> ForwardIndex:
        raise AssertionError("a search transposed the postings")

    monkeypatch.setattr(ForwardIndex, "transposed", transposed)
    response = client.get(f"/t/{namespace.slug}/api/context?topic=laminar+boundary+layer")
    assert response.status_code == 200 and response.json()["matched"]
    serving_caches_clear()
