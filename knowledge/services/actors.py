"""The system actor: Evergreen itself, recorded for work no person did in the moment."""

from __future__ import annotations

from django.contrib.auth.models import User

from knowledge.actors import SYSTEM_USERNAME


def system_actor() -> User:
    """The inactive user that set-up commands, migrations and scheduled work are recorded as.

    It cannot sign in (no usable password, inactive) and holds no role, so a service called with it
    still refuses anything that checks a role: system paths are the ones that do not check.
    """
    user, created = User.objects.get_or_create(
        username=SYSTEM_USERNAME, defaults={"is_active": False, "first_name": "Evergreen", "last_name": "(system)"}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user
