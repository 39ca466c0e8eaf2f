"""WSGI entry point (gunicorn evergreen_site.wsgi): Django behind the replay layer for repeated reads."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.base")

django_application = get_wsgi_application()

from gateway.replay import ReplayApp  # noqa: E402  # needs the settings configured above
from knowledge.services.build_queue import embedded_reconciler_install  # noqa: E402

application = ReplayApp(django_application)
# Without a broker (the embedded mode) this process hands over builds a failure left pending.
embedded_reconciler_install()
