"""manage.py build_release: build a namespace's release now, in this process."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from knowledge.management.actor import add_user_argument, command_actor
from knowledge.management.targets import add_namespace_target, target_namespaces
from knowledge.models import Role
from knowledge.services.releases import release_build


class Command(BaseCommand):
    help = (
        "Build and activate the release of a namespace's published content (no-op when unchanged). "
        "Run it with --all after upgrading Evergreen: a new engine version rebuilds every release."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_namespace_target(parser)
        add_user_argument(parser, needs="the reviewer role")

    def handle(self, *args: Any, **options: Any) -> None:
        namespaces = target_namespaces(options)
        actor = command_actor(options["user"])
        for namespace in namespaces:
            actor.require(namespace=namespace, role=Role.REVIEWER)
        for namespace in namespaces:
            self.stderr.write(f"Building the release of {namespace.slug}…")
            outcome = release_build(namespace_id=namespace.pk, actor=actor.user)
            release = outcome.release
            self.stdout.write(
                f"{namespace.slug}: release #{release.sequence} v{release.knowledge_version} {outcome.describe()}, "
                f"{release.entry_count} entries, {release.total_tokens} tokens, {release.build_seconds:.2f}s."
            )
