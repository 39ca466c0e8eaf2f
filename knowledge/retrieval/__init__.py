"""Evergreen's retrieval engine: pure Python and NumPy, no Django, DRF or Celery imports.

Django code adapts models to these dataclasses and functions; nothing here reaches back.
"""

# Bump when analysis, ranking or rendering change what a release holds: it is part of every
# release's inputs hash, so the next build after an upgrade rebuilds instead of reusing.
ENGINE_VERSION = "2026.12.01.4"
