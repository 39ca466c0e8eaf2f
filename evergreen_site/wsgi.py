"""WSGI entry point (gunicorn evergreen_site.wsgi): Django behind the replay layer for repeated reads."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.base")

django_application = get_wsgi_application()

from django.conf import settings  # noqa: E402

from gateway.replay import ReplayApp  # noqa: E402  # needs the settings configured above
from knowledge.resilience.deadline import query_deadline_install  # noqa: E402
from knowledge.services.build_queue import embedded_reconciler_install  # noqa: E402

application = ReplayApp(django_application)
# No query of a web process waits for ever on a hung PostgreSQL (a worker killed by gunicorn's timeout
# would come back with nothing in memory to serve from).
query_deadline_install(
    settings.EVERGREEN.database_query_timeout_seconds, check_seconds=settings.EVERGREEN.database_read_timeout_seconds
)
# Without a broker (the embedded mode) this process hands over builds a failure left pending.
embedded_reconciler_install()
