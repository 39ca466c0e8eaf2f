"""A base's publish rebuilds the namespaces built on it through a real Celery worker (issue 16 §1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowledge.models import BuildRequest, Namespace
from tests.factories import NamespaceFactory, UserFactory, membership
from tests.knowledge.test_worker import broker, publish
from tests.servingfixtures import bases_declare
from tests.worker import celery_worker, wait_for

__all__ = ["broker"]

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def served_ids(namespace: Namespace) -> list[str]:
    namespace.refresh_from_db()
    release = namespace.active_release
    return [item["id"] for item in release.manifest["entries"]] if release else []


def test_a_base_publish_reaches_the_dependant_through_the_worker(broker: Any, tmp_path: Path) -> None:
    company = NamespaceFactory.create(slug="company", prefix="CO", name="Company")
    product = NamespaceFactory.create(slug="product", prefix="PR", name="Product")
    editor = membership(UserFactory(username="ed"), company, "editor")
    reviewer = membership(UserFactory(username="rev"), company, "reviewer")
    membership(editor, product, "editor")
    membership(reviewer, product, "reviewer")
    bases_declare(product, company)

    # The worker queues the dependant's build itself: on this test's queue, which it consumes.
    with celery_worker(log=tmp_path / "worker.log", queue=broker, EVERGREEN_CELERY_QUEUE=broker):
        publish(product, editor, reviewer, "Product fact")
        wait_for(lambda: len(served_ids(product)) == 1, what="the product's first release")
        own = served_ids(product)
        publish(company, editor, reviewer, "Company fact")
        # Nobody asked the product to build: the company's new release did.
        wait_for(lambda: len(served_ids(product)) == 2, what="the product's rebuild")

    assert served_ids(product)[0] == own[0] and served_ids(product)[1].startswith("CO-")
    assert BuildRequest.objects.filter(namespace=product, reason="base-release").exists()
