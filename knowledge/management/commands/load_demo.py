"""manage.py load_demo: the demo namespace, its three users and its first release."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from knowledge.services.demo import demo_load
from knowledge.services.releases import release_build


class Command(BaseCommand):
    help = "Load (or refresh) the Evergreen demo namespace and build its release."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", help="Public URL the demo is served at (default: the seed's).")

    def handle(self, *args: Any, **options: Any) -> None:
        password = settings.EVERGREEN.demo_password or None
        result = demo_load(password=password, base_url=options["base_url"])
        namespace = result.namespace
        namespace.refresh_from_db()
        if namespace.active_release is None:
            # The build was queued for a Celery worker (REDIS_URL is set) that may not run yet: build it here,
            # so the demo answers now; a worker that picks up the queued build finds it done (builds are idempotent).
            release_build(namespace_id=namespace.pk)
            namespace.refresh_from_db()
        release = namespace.active_release
        where = f"release #{release.sequence} v{release.knowledge_version}" if release else "no release"
        self.stdout.write(f"Demo namespace “{namespace.slug}” ready ({where}).")
        if result.created_password:
            self.stdout.write(
                "Demo users editor, reviewer and admin were created with the password "
                f"{result.created_password}\n(shown once; set EVERGREEN_DEMO_PASSWORD and run again to change it)."
            )
