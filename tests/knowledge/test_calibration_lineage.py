"""A one-entry publish carries the serving release's calibration (issues 11 and 18): recorded with the
release, shown in /metrics.json, on the release's admin page and by `manage.py evaluate`."""

from __future__ import annotations

from io import StringIO
from typing import Any, cast

import pytest
from django.core.management import call_command
from django.test import Client

from knowledge.models import GoldenQuestion, Namespace
from knowledge.retrieval.calibration import CALIBRATED, CARRIED
from tests.factories import UserFactory
from tests.knowledge.test_publish_gate import publish_new, serving
from tests.servingfixtures import alpha_rows, clean_serving_state, publish  # noqa: F401  # fixtures

pytestmark = pytest.mark.django_db
WORKSHOP = 40  # entries beside alpha's: one changed entry is within the 5 % the calibration is carried for


@pytest.fixture
def workshop(ns_a: Namespace) -> Namespace:
    rows = alpha_rows() + [
        {
            "id": f"AL-{700 + n}",
            "category": "fact",
            "title": f"Workshop note {n}",
            "summary": f"Workshop {n} keeps lathe {n}.",
            "body": f"Workshop {n} keeps lathe {n} and drill press {n} oiled every week.",
            "tags": ["workshop"],
            "confidence": 0.9,
            "updated": "2026-08-01",
        }
        for n in range(WORKSHOP)
    ]
    return publish(ns_a, rows)


def test_a_one_entry_publish_carries_the_calibration_and_says_so(
    workshop: Namespace, editor: Any, reviewer: Any
) -> None:
    before = serving(workshop)
    first = before.metrics["matching"]
    assert (first["source"], first["provenance"], first["calibrated_in"]) == ("automatic", CALIBRATED, before.sequence)

    publish_new(workshop, editor, reviewer, title="Harbour opening hours", summary="The harbour opens at dawn.")

    release = serving(workshop)
    matching = release.metrics["matching"]
    assert release.sequence == before.sequence + 1
    assert (matching["provenance"], matching["carried_from"]) == (CARRIED, before.sequence)
    assert (matching["calibrated_in"], matching["changed_since"]) == (before.sequence, 1)
    assert {k: matching[k] for k in ("threshold", "crowding", "pack_best_share", "probes_refused")} == {
        k: first[k] for k in ("threshold", "crowding", "pack_best_share", "probes_refused")
    }
    assert Client().get("/t/alpha/metrics.json").json()["matching"] == matching

    admin = Client()
    admin.force_login(cast(Any, UserFactory(username="root", is_staff=True, is_superuser=True)))
    page = admin.get(f"/admin/knowledge/release/{release.pk}/change/").content.decode()
    carried = f"carried from release #{before.sequence} (calibrated in #{before.sequence}; 1 of"
    assert carried in page
    GoldenQuestion.objects.create(namespace=workshop, key="q", text="When does alpha ship?", relevant={"AL-001": 2})
    out = StringIO()
    call_command("evaluate", "--namespace", "alpha", "--no-reference", stdout=out, stderr=StringIO())
    assert carried in out.getvalue()
