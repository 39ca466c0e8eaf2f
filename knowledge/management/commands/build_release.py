"""manage.py build_release: build a namespace's release now, in this process."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.management.actor import add_user_argument, command_actor
from knowledge.management.targets import add_namespace_target, target_namespaces
from knowledge.models import Namespace, Role
from knowledge.services.heap import heap_mmap_threshold_set
from knowledge.services.release_gate import HELD_CODE
from knowledge.services.releases import BuildOutcome, release_build

HELD_EXIT_STATUS = 3  # the release was built but not activated: scripts can tell it from a failure (1)


class Command(BaseCommand):
    help = (
        "Build and activate the release of a namespace's published content (no-op when unchanged). "
        "Run it with --all after upgrading Evergreen: a new engine version rebuilds every release. "
        f"A release whose golden questions regress is built but held ({HELD_CODE}, exit status {HELD_EXIT_STATUS}); "
        "activate_release lets a reviewer activate it with a reason."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        add_namespace_target(parser)
        add_user_argument(parser, needs="the reviewer role")

    def handle(self, *args: Any, **options: Any) -> None:
        namespaces = target_namespaces(options)
        actor = command_actor(options["user"])
        for namespace in namespaces:
            actor.require(namespace=namespace, role=Role.REVIEWER)
        heap_mmap_threshold_set()  # as a Celery worker does: at 100,000 entries a full build peaked 150 MiB higher
        held = []
        for namespace in namespaces:
            self.stderr.write(f"Building the release of {namespace.slug}…")
            outcome = release_build(namespace_id=namespace.pk, actor=actor.user)
            self._report(namespace, outcome)
            if outcome.held:
                held.append(f"{namespace.slug} #{outcome.release.sequence}")
        if held:
            message = f"{HELD_CODE}: held by the golden questions: {', '.join(held)}."
            raise CommandError(message, returncode=HELD_EXIT_STATUS)

    def _report(self, namespace: Namespace, outcome: BuildOutcome) -> None:
        release = outcome.release
        self.stdout.write(
            f"{namespace.slug}: release #{release.sequence} v{release.knowledge_version} {outcome.describe()}, "
            f"{release.entry_count} entries, {release.total_tokens} tokens, {release.build_seconds:.2f}s."
        )
        if outcome.held:
            for reason in release.gate.report.get("reasons", []):
                self.stdout.write(f"  {HELD_CODE}: {reason}")
            self.stdout.write(
                f"  The serving release stays active. See the release in the admin, or activate it with "
                f"manage.py activate_release --namespace {namespace.slug} --release {release.sequence} "
                "--reason '…' --user <reviewer>."
            )
