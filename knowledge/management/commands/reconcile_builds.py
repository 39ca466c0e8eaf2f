"""manage.py reconcile_builds: hand over the release builds that no release has satisfied yet."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from knowledge.models import BuildRequest, Namespace
from knowledge.services.build_queue import build_requests_reconcile
from knowledge.services.releases import release_build


class Command(BaseCommand):
    help = (
        "Queue a build for every namespace with a publish (or other change) that no release has served yet, as "
        "Celery beat does every EVERGREEN_BUILD_RECONCILE_SECONDS; --in-process builds them here instead."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--in-process", action="store_true", help="Build here, without the broker and worker.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["in_process"]:
            self.stdout.write(build_requests_reconcile().describe())
            return
        waiting = BuildRequest.objects.filter(built_at__isnull=True).values("namespace_id")
        namespaces = Namespace.objects.filter(pk__in=waiting).order_by("slug")
        for namespace in namespaces:
            outcome = release_build(namespace_id=namespace.pk)
            release = outcome.release
            self.stdout.write(f"{namespace.slug}: release #{release.sequence} {outcome.describe()}.")
        if not namespaces:
            self.stdout.write("no release pending")
