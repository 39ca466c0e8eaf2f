"""`--namespace NS` or `--all`: the namespaces a command works on, for commands that take either."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db.models import QuerySet

from knowledge.models import Namespace


def add_namespace_target(parser: CommandParser) -> None:
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--namespace", help="Slug of one namespace.")
    target.add_argument("--all", action="store_true", help="Every namespace.")


def target_namespaces(options: dict[str, Any]) -> QuerySet[Namespace]:
    """The namespaces named by the options, in slug order; CommandError for an unknown slug."""
    namespaces = Namespace.objects.order_by("slug")
    if options["all"]:
        return namespaces
    namespaces = namespaces.filter(slug=options["namespace"])
    if not namespaces.exists():
        raise CommandError(f"No namespace “{options['namespace']}”.")
    return namespaces
