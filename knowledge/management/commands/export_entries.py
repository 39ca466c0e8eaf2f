"""manage.py export_entries: write a namespace's entries in the import_entries format."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.entryfiles import entry_file_name, entry_file_render
from knowledge.models import Namespace
from knowledge.selectors.exports import entries_export_rows

CANNOT_WRITE = "Cannot write {path}: {reason}."


class Command(BaseCommand):
    help = (
        "Export the published entries of a namespace, retired ones with their tombstones, as JSON Lines "
        "(import_entries reads it back), or with --format markdown the entries that are not retired as one "
        "Markdown file per entry in a folder (sync_entries reads it back)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", type=Path, nargs="?", help="Output file (default: standard output); the folder with markdown."
        )
        parser.add_argument("--format", choices=["jsonl", "markdown"], default="jsonl")
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--include-drafts", action="store_true", help="Export each entry's latest version.")

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        path: Path | None = options["file"]
        if options["format"] == "markdown":
            rows = entries_export_rows(namespace=namespace, include_drafts=options["include_drafts"])
            self._markdown(rows, path, namespace)
            return
        # Retired entries too: an import recreates their tombstones, so their IDs are never reused (seed §6).
        rows = entries_export_rows(namespace=namespace, include_drafts=options["include_drafts"], include_retired=True)
        handle = self._open(path) if path else sys.stdout
        count = 0
        try:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
            handle.flush()
        except BrokenPipeError:
            # The reader stopped early (`export_entries … | head`): what it read is all it wanted.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            self.stderr.write(f"The reader closed the output after {count} entries of {namespace.slug}.")
            return
        finally:
            if path:
                handle.close()
        self.stderr.write(f"Exported {count} entries of {namespace.slug}.")

    @staticmethod
    def _open(path: Path) -> Any:
        try:
            return path.open("w", encoding="utf-8")
        except OSError as error:
            raise CommandError(CANNOT_WRITE.format(path=path, reason=error.strerror or error)) from None

    def _markdown(self, rows: Any, folder: Path | None, namespace: Namespace) -> None:
        """One <ID>.md per entry; files of entries no longer exported are left for the caller to remove."""
        if folder is None:
            raise CommandError("--format markdown needs a folder to write into.")
        if folder.exists() and not folder.is_dir():
            raise CommandError(f"{folder} exists and is not a folder.")
        count = 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for row in rows:
                (folder / entry_file_name(row["id"])).write_text(entry_file_render(row), encoding="utf-8")
                count += 1
        except OSError as error:
            path = error.filename or folder
            raise CommandError(CANNOT_WRITE.format(path=path, reason=error.strerror or error)) from None
        self.stderr.write(f"Exported {count} entries of {namespace.slug} to {folder}/.")
