"""manage.py rollback_release: serve an earlier release of a namespace again."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.management.actor import add_user_argument, command_actor
from knowledge.models import Namespace, Release
from knowledge.services.releases import release_rollback


class Command(BaseCommand):
    help = "Make an earlier release active again (default: the one before the active release)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--to", type=int, help="Release sequence number to activate.")
        parser.add_argument("--note", default="")
        add_user_argument(parser, needs="the reviewer role")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = command_actor(options["user"])
        namespace = Namespace.objects.select_related("active_release").filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        releases = Release.objects.filter(namespace=namespace)
        if options["to"] is not None:
            target = releases.filter(sequence=options["to"]).first()
        else:
            active = namespace.active_release
            target = releases.filter(sequence__lt=active.sequence).first() if active else None
        if target is None:
            raise CommandError("No such earlier release; see the release history in the admin.")
        try:
            release_rollback(
                namespace=namespace,
                release=target,
                actor=actor.user,
                note=options["note"],
                check_permission=actor.checked,
            )
        except ServiceError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{namespace.slug} now serves release #{target.sequence} (v{target.knowledge_version}).")
