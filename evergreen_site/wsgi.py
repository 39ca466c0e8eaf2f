"""WSGI entry point (gunicorn evergreen_site.wsgi): Django behind the replay layer for repeated reads."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.base")

django_application = get_wsgi_application()

from gateway.replay import ReplayApp  # noqa: E402  # needs the settings configured above

application = ReplayApp(django_application)
