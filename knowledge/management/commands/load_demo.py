"""manage.py load_demo: the demo namespace, its three users and its first release; then the layered demo
(issue 16): the company namespace acme and the products acme-cloud and acme-payments (private) built on it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from knowledge.services.demo import DEMO_USERS, demo_load
from knowledge.services.demo_layers import demo_layers_load
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
        users = get_user_model().objects
        layered = demo_layers_load(people={name: users.get(username=name) for name, _ in DEMO_USERS})
        for each in layered.namespaces:  # bases first: a product's release includes its base's
            built = release_build(namespace_id=each.pk)
            self.stdout.write(f"Layered demo namespace “{each.slug}” ready (release #{built.release.sequence}).")
        if result.created_password:
            self.stdout.write(
                "Demo users editor, reviewer and admin were created with the password "
                f"{result.created_password}\n(shown once; set EVERGREEN_DEMO_PASSWORD and run again to change it)."
            )
