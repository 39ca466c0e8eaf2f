"""manage.py replay_request ID: render a logged request again from its release, byte for byte, and compare."""

from __future__ import annotations

import sys
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.models import RequestLog
from knowledge.selectors.replay import ReplayError, pack_diff, request_replay, request_replay_current


class Command(BaseCommand):
    help = (
        "Render a logged request (admin → Requests) again from the release it was answered from and check the "
        "bytes against the ETag logged with it; --diff also compares it with the serving release's answer."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("log_id", type=int, help="The request log row's id.")
        parser.add_argument("--diff", action="store_true", help="Also diff with the serving release's answer.")
        parser.add_argument("--body", action="store_true", help="Print the replayed body (exactly the bytes).")

    def handle(self, *args: Any, **options: Any) -> None:
        log = RequestLog.objects.select_related("namespace", "release").filter(pk=options["log_id"]).first()
        if log is None:
            raise CommandError(f"No request log row {options['log_id']} (it may be past its retention).")
        try:
            replayed = request_replay(log=log)
        except ReplayError as error:
            raise CommandError(str(error)) from None
        if options["body"]:
            sys.stdout.buffer.write(replayed.body + b"\n")
            sys.stdout.flush()
        same = replayed.etag == log.etag
        self.stderr.write(
            f"request {log.pk}: {log.namespace.slug} {log.channel} {log.route} release #{replayed.release_sequence}: "
            + ("byte for byte the same " if same else "DIFFERENT from what was logged ")
            + f"(logged {log.etag or '-'}, replayed {replayed.etag})"
        )
        if options["diff"]:
            current = request_replay_current(log=log)
            if current is None:
                self.stderr.write("The namespace serves no release now.")
            else:
                diff = pack_diff(replayed.document, current.document)
                self.stdout.write(orjson.dumps({"servingReleaseId": current.release_sequence, **diff}).decode())
        if log.etag and not same:
            raise CommandError("The replay did not give the logged bytes.")
