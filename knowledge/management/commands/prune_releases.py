"""manage.py prune_releases: drop the files of old releases under the retention policy (what beat does daily)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.management.actor import add_user_argument, command_actor
from knowledge.management.targets import add_namespace_target, target_namespaces
from knowledge.models import Role
from knowledge.services.release_storage import releases_prune


class Command(BaseCommand):
    help = (
        "Drop the file contents of releases that are not active, not among the newest --keep and not pinned "
        "(served within EVERGREEN_RELEASE_RETENTION_DAYS). Release records, manifests and history stay."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_namespace_target(parser)
        parser.add_argument(
            "--keep",
            type=int,
            default=None,
            help="Newest releases per namespace that keep their files (default EVERGREEN_RELEASE_KEEP).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Say what would be pruned; change nothing.")
        add_user_argument(parser, needs="the namespace-admin role")

    def handle(self, *args: Any, **options: Any) -> None:
        keep = settings.EVERGREEN.release_keep if options["keep"] is None else options["keep"]
        if keep < 1:
            raise CommandError("--keep must be at least 1: the newest release always keeps its files.")
        namespaces = target_namespaces(options)
        actor = command_actor(options["user"])
        for namespace in namespaces:
            actor.require(namespace=namespace, role=Role.ADMIN)
        for namespace in namespaces:
            self.stderr.write(f"Pruning the release files of {namespace.slug}…")
            report = releases_prune(namespace=namespace, keep=keep, actor=actor.user, dry_run=options["dry_run"])
            prefix = "would prune: " if options["dry_run"] and report.pruned else ""
            self.stdout.write(prefix + report.describe())
