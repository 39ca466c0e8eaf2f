"""Evergreen's retrieval engine: pure Python and NumPy, no Django, DRF or Celery imports.

Django code adapts models to these dataclasses and functions; nothing here reaches back.
"""
