"""Settings for the test suite: the base settings plus fast hashing and quiet logs."""

from evergreen_site.settings.base import *  # noqa: F403
from evergreen_site.settings.base import EVERGREEN

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
EVERGREEN["BUILD_COALESCE_SECONDS"] = 0.0
