"""App configuration for the knowledge domain."""

from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge"
    default_auto_field = "django.db.models.BigAutoField"
