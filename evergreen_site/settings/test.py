"""Settings for the test suite: the base settings plus fast hashing, quiet logs, in-process tasks.

Tests that need the real Celery worker switch the app to the broker themselves (tests/worker.py).
"""

import tempfile
from dataclasses import replace
from pathlib import Path

from evergreen_site.settings.base import *  # noqa: F403
from evergreen_site.settings.base import EVERGREEN

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
# Every security event is written (no folding of repeats), so tests can see each one.
# The request log is off unless a test turns it on (tests/observe): nothing else pays for it or sees its rows.
# Namespaces are revalidated in the request: another thread's connection cannot see a test's transaction.
EVERGREEN = replace(
    EVERGREEN,
    build_coalesce_seconds=0.0,
    security_log_repeat_seconds=0.0,
    request_log=False,
    revalidate_in_background=False,
    # A test database's ids start again each session: no session reads another's build caches.
    build_cache_dir=Path(tempfile.mkdtemp(prefix="evergreen-build-cache-test-")),
)
CELERY_TASK_ALWAYS_EAGER = True
