"""manage.py export_entries: write a namespace's entries in the import_entries format."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.models import Namespace
from knowledge.selectors.exports import entries_export_rows


class Command(BaseCommand):
    help = "Export the published entries of a namespace as JSON Lines (import_entries reads it back)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, nargs="?", help="Output file (default: standard output).")
        parser.add_argument("--namespace", required=True)
        parser.add_argument("--include-drafts", action="store_true", help="Export each entry's latest version.")

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.filter(slug=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"No namespace “{options['namespace']}”.")
        rows = entries_export_rows(namespace=namespace, include_drafts=options["include_drafts"])
        path: Path | None = options["file"]
        handle = path.open("w", encoding="utf-8") if path else sys.stdout
        count = 0
        try:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
        finally:
            if path:
                handle.close()
        self.stderr.write(f"Exported {count} entries of {namespace.slug}.")
