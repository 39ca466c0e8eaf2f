"""manage.py import_entries: load entries from a JSON Lines file, all lines or none."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import URLValidator
from django.db import transaction

from knowledge.errors import ServiceError
from knowledge.ids import ID_PATTERN
from knowledge.management.actor import CommandActor, add_user_argument, command_actor
from knowledge.management.progress import Progress
from knowledge.management.text import text_lines
from knowledge.models import Namespace, Role
from knowledge.models.namespace import PREFIX_VALIDATOR
from knowledge.services.imports import ImportFileError, entries_import, entries_parse
from knowledge.services.namespace_settings import ONLY_SUPERUSERS_CREATE
from knowledge.services.namespaces import namespace_for_import

BAD_SLUG = (
    "“{slug}” cannot be a namespace slug: use at most {most} letters, digits, hyphens or underscores "
    "(it names the namespace in its URLs, /t/<slug>/)."
)
ANOTHER_PREFIX = "“{slug}” exists with the prefix {prefix}; --prefix only sets up a new namespace."
EMPTY_FILE = "{path} has no entries; no namespace was created (an empty file is usually the wrong file)."


class Command(BaseCommand):
    help = (
        "Import entries from JSON Lines: {id?, title, summary?, body, tags?, category?, confidence?, links?, updated?, "
        "retiredAt?, retireReason?, replacedBy?}; a line with retiredAt is recreated as a retired entry (410 Gone)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--namespace", required=True, help="Slug of the namespace to import into.")
        parser.add_argument("--create-namespace", action="store_true", help="Create the namespace if missing.")
        parser.add_argument("--prefix", help="ID prefix of a namespace created by this import (e.g. CRAN).")
        parser.add_argument("--publish", action="store_true", help="Publish as one reviewed batch and build a release.")
        add_user_argument(parser, needs="the editor role")
        parser.add_argument(
            "--acknowledge-warnings",
            default="",
            metavar="REASON",
            help="Import although the safety scan warns about some lines; the reason goes to the audit trail.",
        )
        parser.add_argument(
            "--reviewer",
            help="With --publish: username of the person who reviewed the file (needs the reviewer role; four eyes: "
            "not the --user). Without --user and --reviewer the import is the system actor's set-up.",
        )
        parser.add_argument(
            "--base-url", help="Public URL of a namespace created by this import (default https://<slug>.example.com)."
        )
        parser.add_argument("--contact", default="", help="Contact address of a namespace created by this import.")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        base_url = options["base_url"]
        if base_url is not None:
            self._check_url(base_url)
        try:
            items = entries_parse(text_lines(path))
        except ImportFileError as error:
            for line_no, message in error.errors:
                self.stderr.write(f"{path}:{line_no}: {message}")
            raise CommandError(f"{len(error.errors)} bad line(s) in {path}; nothing was imported.") from None
        actor = command_actor(options["user"])
        reviewer = command_actor(options["reviewer"] or options["user"])
        try:
            # One transaction: a namespace this import creates disappears again if its lines are refused.
            with transaction.atomic():
                namespace, created = self._namespace(options, items, actor)
                actor.require(namespace=namespace, role=Role.EDITOR)
                if options["publish"]:
                    reviewer.require(namespace=namespace, role=Role.REVIEWER)
                report = entries_import(
                    namespace=namespace,
                    items=items,
                    actor=actor.user,
                    reviewer=reviewer.user,
                    publish=options["publish"],
                    acknowledgement=options["acknowledge_warnings"],
                    progress=Progress(f"Importing {path.name}"),
                    # A namespace's own blocks hold a new ID of its category (seed §6); the blocks of one
                    # laid out for this file hold its lines, and its IDs stay wherever they fall.
                    within_blocks=not created,
                )
        except ImportFileError as error:
            for line_no, message in error.errors:
                self.stderr.write(f"{path}:{line_no}: {message}")
            raise CommandError(f"Nothing was imported from {path}.") from None
        except ServiceError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{namespace.slug}: {report.created} created, {report.changed} changed, "
            f"{report.unchanged} unchanged, {report.published} published"
            + (f", {report.retired} retired (tombstones)." if report.retired else ".")
        )

    def _namespace(self, options: dict[str, Any], items: list[Any], actor: CommandActor) -> tuple[Namespace, bool]:
        """The namespace to import into, and whether this import creates it."""
        slug = options["namespace"]
        namespace = Namespace.objects.filter(slug=slug).first()
        prefix = options["prefix"]
        if namespace is not None:
            if options["base_url"] is not None or options["contact"]:
                raise CommandError(f"“{slug}” exists; --base-url and --contact only set up a new namespace.")
            if prefix and prefix.upper() != namespace.prefix:
                raise CommandError(ANOTHER_PREFIX.format(slug=slug, prefix=namespace.prefix))
            return namespace, False
        if not options["create_namespace"]:
            raise CommandError(f"No namespace “{slug}”; pass --create-namespace --prefix P to create it.")
        if actor.checked and not actor.user.is_superuser:
            raise CommandError(ONLY_SUPERUSERS_CREATE)
        if not items:
            raise CommandError(EMPTY_FILE.format(path=options["file"]))
        prefix = (prefix or self._prefix_of(items) or "").upper()
        if not prefix:
            raise CommandError("--prefix is required when the file's lines carry no IDs.")
        self._check_names(slug, prefix)
        categories, digits, capacity = self._id_layout(items)
        created = namespace_for_import(
            slug=slug,
            prefix=prefix,
            digits=digits,
            categories=categories,
            capacity=capacity,
            base_url=options["base_url"],
            contact=options["contact"],
        )
        return created, True

    @staticmethod
    def _check_names(slug: str, prefix: str) -> None:
        """The slug names the namespace in its URLs (/t/<slug>/) and the prefix starts every ID: both are
        checked as the admin checks them, before anything is created."""
        slug_field = Namespace._meta.get_field("slug")
        try:
            slug_field.run_validators(slug)
        except ValidationError:
            raise CommandError(BAD_SLUG.format(slug=slug, most=slug_field.max_length)) from None
        try:
            PREFIX_VALIDATOR(prefix)
        except ValidationError as error:
            raise CommandError(f"“{prefix}” cannot be an ID prefix: {error.messages[0]}") from None

    @staticmethod
    def _id_layout(items: list[Any]) -> tuple[list[str], int, int]:
        """The categories, ID digits and block size a namespace created for these lines needs.

        A block holds its category's lines even where the file's IDs (kept as given, wherever they fall)
        take numbers of it. The file's IDs keep their width; without any, every allocated ID has one width.
        """
        lines = Counter(item.category or "fact" for item in items)
        given = [item.public_id for item in items if item.public_id]
        capacity = max(lines.values()) + len(given)
        widest = max(len(str(capacity * len(lines) - 1)), 3)
        digits = max((len(public_id.split("-")[-1]) for public_id in given), default=widest)
        return sorted(lines), digits, capacity

    @staticmethod
    def _check_url(url: str) -> None:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError:
            raise CommandError(f"--base-url {url!r} is not an http(s) URL such as https://docs.example.org.") from None

    @staticmethod
    def _prefix_of(items: list[Any]) -> str | None:
        for item in items:
            match = item.public_id and ID_PATTERN.match(item.public_id)
            if match:
                return str(match["prefix"])
        return None
