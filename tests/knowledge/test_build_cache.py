"""A build worker's caches kept on disk (issue 18 §3): the first build after a restart reads, analyses and
renders only what changed, and stores the bytes a full rebuild renders; a cache of other code, another
database or damaged is a full build, never a failed one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from knowledge.models import Namespace
from knowledge.services import build_cache, releases
from knowledge.services.releases import release_analysis_caches_clear
from tests.knowledge.test_incremental_publish import assert_stored_as_a_full_rebuild
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

pytestmark = pytest.mark.django_db

EDITED = "Agents read alpha for free, and the pricing page moved."


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path) -> Any:
    settings.EVERGREEN = replace(settings.EVERGREEN, build_cache_dir=tmp_path / "build-cache")
    release_analysis_caches_clear()
    yield tmp_path / "build-cache"
    release_analysis_caches_clear()


def restart_and_publish_an_edit(namespace: Namespace) -> releases._BuildCaches:
    release_analysis_caches_clear()  # what a worker restart leaves: nothing in the process
    rows = alpha_rows()
    rows[1]["body"] = EDITED
    publish(namespace, [rows[1]], now=BUILT_AT.replace(hour=12))
    return releases._build_caches(namespace.pk)


def test_the_first_build_after_a_restart_analyses_only_the_changed_entry_and_stores_a_full_rebuild(
    ns_a: Namespace, cache_dir: Path
) -> None:
    publish(ns_a, alpha_rows())
    assert build_cache.cache_path(ns_a.pk).is_file()
    entries = len(alpha_rows())

    caches = restart_and_publish_an_edit(ns_a)

    assert caches.analysis.analysed == 1 and caches.analysis.reused == entries - 1
    assert caches.parts.rendered == 1 and caches.parts.reused == entries - 1
    assert_stored_as_a_full_rebuild(ns_a)


@pytest.mark.parametrize("spoil", ["other code", "damaged", "another database"])
def test_a_cache_that_does_not_apply_means_a_full_build_that_stores_the_same_bytes(
    ns_a: Namespace, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, spoil: str
) -> None:
    publish(ns_a, alpha_rows())
    path = build_cache.cache_path(ns_a.pk)
    if spoil == "other code":
        monkeypatch.setattr(build_cache, "code_digest", lambda: "0" * 64)
    elif spoil == "damaged":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        monkeypatch.setattr(build_cache, "_database", lambda: "elsewhere:5432/evergreen")

    caches = restart_and_publish_an_edit(ns_a)

    assert caches.analysis.reused == 0 and caches.parts.reused == 0
    assert_stored_as_a_full_rebuild(ns_a)
