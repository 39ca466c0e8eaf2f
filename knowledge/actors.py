"""Who did something: a signed-in person, nobody (an anonymous request), or Evergreen itself.

Services take an `Actor` and record `actor_user(actor)`: the one place that decides which user row an
audit record, an author or a reviewer column holds. Work nobody asked for in person (migrations,
set-up from files, scheduled go-lives without a reviewer) is recorded as the system user named
`SYSTEM_USERNAME` (see knowledge.services.actors), never as an empty actor.
"""

from __future__ import annotations

from typing import Final, TypeAlias

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User

Actor: TypeAlias = AbstractBaseUser | AnonymousUser | None

SYSTEM_USERNAME: Final = "evergreen-system"


def actor_user(actor: Actor) -> User | None:
    """The user row to record for `actor`: None for anonymous or missing actors."""
    if actor is None or not actor.is_authenticated:
        return None
    return actor  # type: ignore[return-value]  # AUTH_USER_MODEL is django.contrib.auth's User


def actor_id(actor: Actor) -> int | None:
    user = actor_user(actor)
    return user.pk if user is not None else None


def is_system_actor(actor: Actor) -> bool:
    user = actor_user(actor)
    return user is not None and user.get_username() == SYSTEM_USERNAME
