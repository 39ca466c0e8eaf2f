"""manage.py build_release: build a namespace's release now, in this process."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.models import Namespace
from knowledge.services.releases import release_build


class Command(BaseCommand):
    help = "Build and activate the release of a namespace's published content (no-op when unchanged)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        self.stderr.write(f"Building the release of {namespace.slug}…")
        outcome = release_build(namespace_id=namespace.pk)
        release = outcome.release
        state = "built" if outcome.created else "unchanged"
        self.stdout.write(
            f"{namespace.slug}: release #{release.sequence} v{release.knowledge_version} {state}, "
            f"{release.entry_count} entries, {release.total_tokens} tokens, {release.build_seconds:.2f}s."
        )
