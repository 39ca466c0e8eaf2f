"""Settings for the test suite: the base settings plus fast hashing, quiet logs, in-process tasks.

Tests that need the real Celery worker switch the app to the broker themselves (tests/worker.py).
"""

from evergreen_site.settings.base import *  # noqa: F403
from evergreen_site.settings.base import EVERGREEN

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
EVERGREEN["BUILD_COALESCE_SECONDS"] = 0.0
EVERGREEN["SECURITY_LOG_REPEAT_SECONDS"] = 0.0  # every event is written, so tests can see each one
CELERY_TASK_ALWAYS_EAGER = True
