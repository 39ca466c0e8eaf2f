"""manage.py restore_entry: bring a retired entry back under its own ID (audited, by a reviewer)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.management.actor import add_user_argument, person_actor
from knowledge.models import Entry, Role
from knowledge.services.entries import entry_restore


class Command(BaseCommand):
    help = "Restore a retired entry: its last published version serves again from the next release."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", help="Public ID, e.g. EG-003.")
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--note", required=True, help="Why it comes back, for the audit trail.")
        add_user_argument(parser, needs="the reviewer role", person_required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        entry = Entry.objects.filter(namespace__slug=options["namespace"], public_id=options["id"].upper()).first()
        if entry is None:
            raise CommandError(f"No entry {options['id']} in namespace “{options['namespace']}”.")
        actor = person_actor(options["user"], role=Role.REVIEWER)
        try:
            entry_restore(entry=entry, actor=actor.user, note=options["note"])
        except ServiceError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Restored {entry.public_id}; a release build is queued.")
