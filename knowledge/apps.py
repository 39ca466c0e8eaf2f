"""App configuration for the knowledge domain."""

from django.apps import AppConfig
from django.contrib.auth.signals import user_login_failed

from knowledge.security_events import login_failed_receiver


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        user_login_failed.connect(login_failed_receiver, dispatch_uid="evergreen.security.login_failed")
