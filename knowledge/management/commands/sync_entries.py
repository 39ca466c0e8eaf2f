"""manage.py sync_entries: propose the differences between a folder of entry files and a namespace for review."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.errors import ServiceError
from knowledge.management.progress import Progress
from knowledge.management.remote_sync import (
    ManageClient,
    RemoteError,
    remote_apply,
    remote_side,
    remote_validate,
    sentence,
)
from knowledge.models import Namespace
from knowledge.services.sync import (
    CHANGE,
    CONFLICT,
    MISSING,
    NEW,
    PENDING,
    SUBMIT,
    UNCHANGED,
    EntryFile,
    NamespaceSide,
    ReferencesCheck,
    SyncFolderError,
    SyncPlan,
    folder_read,
    namespace_side,
    references_check_for,
    sync_apply,
    sync_plan,
)
from knowledge.workflow import TransitionError

SideOf = Callable[[], NamespaceSide]
Apply = Callable[[SyncPlan, list[EntryFile], str], None]
Validate = Callable[[SyncPlan, list[EntryFile]], None]  # a dry run's check of what would be written
Target = tuple[SideOf, ReferencesCheck | None, Apply, Validate | None]
VERBS = {
    NEW: "new entry, submitted for review",
    CHANGE: "changed ({fields}): draft v{version} submitted for review",
    SUBMIT: "draft v{version} already holds the file: submitted for review",
    PENDING: "v{version} with this content is {detail}; waiting for a reviewer",
    MISSING: "in the namespace, not in the folder (never retired from here)",
    CONFLICT: "left alone: {detail} holds other content ({fields}); publish, reject or withdraw it, "
    "or make the file match it, then sync again",
}
PLANNED = {
    NEW: "would create a new entry and submit it for review",
    CHANGE: "would propose ({fields}) as a draft for review",
    SUBMIT: "would submit draft v{version} for review",
}
# Exit codes: a CI script tells drift (--check) from a folder or server that cannot be synced.
DIFFER = 1
FAILED = 2


class Command(BaseCommand):
    help = (
        "Read DIR/**/*.md (YAML front matter: id, title, summary, category, tags, confidence, links, aliases, "
        "updated; the Markdown body) and propose every difference from the namespace as a draft submitted for "
        "review. Never publishes or retires. --dry-run prints the plan; --check exits 1 when they differ. Any error "
        "(bad files, a refused plan or proposal, an unreachable server) exits 2."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("folder", type=Path)
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--user", help="The editor the drafts are written as (required unless --dry-run/--check).")
        parser.add_argument("--dry-run", action="store_true", help="Print the plan; write nothing.")
        parser.add_argument(
            "--check",
            action="store_true",
            help="Write nothing; exit 1 when folder and namespace differ (2 on any error).",
        )
        parser.add_argument("--note", default="", help="The note of each submission (default: the folder's name).")
        parser.add_argument(
            "--server",
            help="Sync against a running Evergreen through its management API (e.g. https://kb.example.com) "
            "instead of this installation's database; the token is read from the --token-env variable.",
        )
        parser.add_argument(
            "--token-env", default="EVERGREEN_TOKEN", help="The variable holding the personal API token (--server)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        folder: Path = options["folder"]
        if not folder.is_dir():
            raise CommandError(f"No such folder: {folder}", returncode=FAILED)
        writes = not (options["dry_run"] or options["check"])
        target = self._remote(options) if options["server"] else self._local(options, writes=writes)
        side_of, references, apply, validate = target
        note = options["note"] or f"Proposed from {folder.resolve().name}/ by sync_entries."
        try:
            files = folder_read(folder, progress=Progress(f"Reading {folder}"))
            plan = sync_plan(side=side_of(), files=files, references=references)
            if writes:
                apply(plan, files, note)
            elif validate:
                validate(plan, files)
        except SyncFolderError as error:
            for name, message in error.errors:
                self.stderr.write(f"{folder / name}: {message}")
            raise CommandError(
                f"{len(error.errors)} bad file(s) in {folder}; nothing was proposed.", returncode=FAILED
            ) from None
        except (ServiceError, TransitionError) as error:
            raise CommandError(f"{sentence(error)} Nothing was proposed.", returncode=FAILED) from None
        except (RemoteError, httpx.HTTPError) as error:
            raise CommandError(str(error), returncode=FAILED) from None
        self._report(plan, wrote=writes)
        if options["check"] and plan.differs:
            raise CommandError(f"{folder} and {plan.side.slug} differ (see above).", returncode=DIFFER)

    def _local(self, options: dict[str, Any], *, writes: bool) -> Target:
        """Read and write this installation's database, as the --user editor."""
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.", returncode=FAILED)
        actor = self._actor(options["user"]) if writes else None

        def apply(plan: SyncPlan, files: list[EntryFile], note: str) -> None:
            sync_apply(
                namespace=namespace, plan=plan, files=files, actor=actor, note=note, progress=Progress("Proposing")
            )

        return partial(namespace_side, namespace), references_check_for(namespace), apply, None

    @staticmethod
    def _remote(options: dict[str, Any]) -> Target:
        """Read and write a server through its management API, as the token's owner."""
        token = os.environ.get(options["token_env"], "").strip()
        if not token:
            raise CommandError(
                f"Set {options['token_env']} to a personal API token (made at /admin/tokens/).", returncode=FAILED
            )
        client = ManageClient(f"{options['server'].rstrip('/')}/t/{options['namespace']}/api/manage/", token)

        def apply(plan: SyncPlan, files: list[EntryFile], note: str) -> None:
            remote_apply(client=client, plan=plan, files=files, note=note, progress=Progress("Proposing"))

        def validate(plan: SyncPlan, files: list[EntryFile]) -> None:
            remote_validate(client=client, plan=plan, files=files, progress=Progress("Checking on the server"))

        # The server checks references and every other rule: as it writes (apply), or without writing (validate).
        return partial(remote_side, client), None, apply, validate

    def _report(self, plan: SyncPlan, *, wrote: bool) -> None:
        for change in plan.changes:
            if change.kind == UNCHANGED:
                continue
            template = VERBS[change.kind] if wrote or change.kind not in PLANNED else PLANNED[change.kind]
            text = template.format(
                fields=", ".join(change.fields) or "no field", version=change.version, detail=change.detail
            )
            where = f"  ({change.file})" if change.file else ""
            self.stdout.write(f"{change.public_id or '(new)':<12} {text}{where}")
        counts = ", ".join(
            f"{plan.count(kind)} {kind}" for kind in (NEW, CHANGE, SUBMIT, PENDING, UNCHANGED, MISSING, CONFLICT)
        )
        self.stdout.write(f"{plan.side.slug}: {counts}" + ("" if wrote else " (nothing written)"))

    @staticmethod
    def _actor(username: str | None) -> Any:
        if not username:
            raise CommandError(
                "--user is required to write drafts (the editor they are written as).", returncode=FAILED
            )
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user “{username}”.", returncode=FAILED)
        return user
