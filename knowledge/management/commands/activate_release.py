"""manage.py activate_release: serve a release the golden questions held, for a written reason."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.management.actor import add_user_argument, command_actor
from knowledge.models import Namespace, Release
from knowledge.services.gate_override import release_gate_override


class Command(BaseCommand):
    help = (
        "Activate a release the publish gate held (its golden questions regressed), with a reason that "
        "the audit trail and the release's gate record keep. Four eyes: someone who wrote none of the "
        "release's changed versions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--release", type=int, required=True, help="Sequence number of the held release.")
        parser.add_argument("--reason", required=True, help="Why its regressions are acceptable.")
        add_user_argument(parser, needs="the reviewer role")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = command_actor(options["user"])
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        release = Release.objects.filter(namespace=namespace, sequence=options["release"]).first()
        if release is None:
            raise CommandError(f"{namespace.slug} has no release #{options['release']}.")
        try:
            release_gate_override(
                release=release, actor=actor.user, reason=options["reason"], check_permission=actor.checked
            )
        except ServiceError as error:
            raise CommandError(f"{error.code}: {error}") from None
        self.stdout.write(
            f"{namespace.slug} now serves release #{release.sequence} (v{release.knowledge_version}), "
            "held by the golden questions and activated for the reason given."
        )
