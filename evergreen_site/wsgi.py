"""WSGI entry point (gunicorn evergreen_site.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evergreen_site.settings.base")

application = get_wsgi_application()
