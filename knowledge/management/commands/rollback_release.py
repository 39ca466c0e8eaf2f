"""manage.py rollback_release: revert a namespace to an earlier release's entry versions, as a reviewer."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.management.actor import add_user_argument, person_actor
from knowledge.models import Namespace, Release, Role
from knowledge.services.releases import release_build
from knowledge.services.rollback import release_rollback


class Command(BaseCommand):
    help = (
        "Publish an earlier release's entry versions again (default: the release before the active one) and "
        "serve them; retired entries stay retired. Every change is audited under --user, a reviewer."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--to", type=int, help="Release sequence number to roll back to.")
        parser.add_argument("--note", default="", help="Why, for the audit trail.")
        add_user_argument(parser, needs="the reviewer role", person_required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.select_related("active_release").filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        releases = Release.objects.filter(namespace=namespace)
        active = namespace.active_release
        if options["to"] is not None:
            target = releases.filter(sequence=options["to"]).first()
        else:
            target = releases.filter(sequence__lt=active.sequence).first() if active else None
        if target is None:
            raise CommandError("No such earlier release; see the release history in the admin.")
        # A rollback publishes versions again: a reviewer does it, never the system actor.
        actor = person_actor(options["user"], role=Role.REVIEWER)
        try:
            outcome = release_rollback(namespace=namespace, release=target, actor=actor.user, note=options["note"])
        except ServiceError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"{namespace.slug}: {outcome.describe()}")
        if not outcome.activated:
            build = release_build(namespace_id=namespace.pk, actor=actor.user)
            release = build.release
            self.stdout.write(
                f"{namespace.slug}: release #{release.sequence} v{release.knowledge_version} {build.describe()}."
            )
