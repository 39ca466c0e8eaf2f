"""manage.py retire_entry: retire an entry for good; its ID answers 410 Gone from the next release."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.management.actor import add_user_argument, command_actor
from knowledge.models import Entry
from knowledge.services.entries import entry_retire


class Command(BaseCommand):
    help = "Retire an entry (tombstone with reason and optional replacement)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", help="Public ID, e.g. EG-003.")
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--reason", required=True)
        parser.add_argument("--replaced-by", default="")
        add_user_argument(parser, needs="the reviewer role")

    def handle(self, *args: Any, **options: Any) -> None:
        entry = Entry.objects.filter(namespace__slug=options["namespace"], public_id=options["id"].upper()).first()
        if entry is None:
            raise CommandError(f"No entry {options['id']} in namespace “{options['namespace']}”.")
        actor = command_actor(options["user"])
        try:
            entry_retire(
                entry=entry,
                actor=actor.user,
                reason=options["reason"],
                replaced_by=options["replaced_by"],
                check_permission=actor.checked,
            )
        except ServiceError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Retired {entry.public_id}; a release build is queued.")
