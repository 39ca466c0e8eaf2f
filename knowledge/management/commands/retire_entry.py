"""manage.py retire_entry: retire an entry for good; its ID answers 410 Gone from the next release."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.models import Entry
from knowledge.services.entries import entry_retire


class Command(BaseCommand):
    help = "Retire an entry (tombstone with reason and optional replacement)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", help="Public ID, e.g. EG-003.")
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--reason", required=True)
        parser.add_argument("--replaced-by", default="")
        parser.add_argument("--user", help="Username recorded in the audit trail.")

    def handle(self, *args: Any, **options: Any) -> None:
        entry = Entry.objects.filter(namespace__slug=options["namespace"], public_id=options["id"].upper()).first()
        if entry is None:
            raise CommandError(f"No entry {options['id']} in namespace “{options['namespace']}”.")
        actor = None
        if options["user"]:
            actor = get_user_model().objects.filter(username=options["user"]).first()
            if actor is None:
                raise CommandError(f"No user “{options['user']}”.")
        try:
            entry_retire(
                entry=entry,
                actor=actor,
                reason=options["reason"],
                replaced_by=options["replaced_by"],
                check_permission=False,
            )
        except ServiceError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Retired {entry.public_id}; a release build is queued.")
