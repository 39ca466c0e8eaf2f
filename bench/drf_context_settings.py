"""Bench only: production settings with /api/context served by the DRF variant (bench.drf_context)."""

from evergreen_site.settings.base import *  # noqa: F403  # the production settings, unchanged but for the URLconf

ROOT_URLCONF = "bench.drf_context"
