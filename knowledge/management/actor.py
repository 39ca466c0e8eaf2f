"""Who a management command acts as: `--user` (a person, with that person's roles) or the system actor.

With `--user`, the command calls its services as that person: a role the person lacks in the
namespace refuses the command (and writes a security event), and the audit trail names them.
Without it, the command is an operator's set-up tool: it records the system actor
`evergreen-system` and checks no role, since whoever runs commands already controls the server.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.management.base import CommandError, CommandParser

from knowledge.actors import SYSTEM_USERNAME
from knowledge.errors import ServiceError
from knowledge.models import Namespace
from knowledge.services.access import require_role
from knowledge.services.actors import system_actor

NO_SUCH_USER = "No active user “{username}” (--user names the person the command acts as)."


@dataclass(frozen=True)
class CommandActor:
    user: User
    checked: bool  # True: a person given by --user, whose roles the services check

    def require(self, *, namespace: Namespace, role: str) -> None:
        """Refuse the command unless the --user person holds `role` in the namespace."""
        if not self.checked:
            return
        try:
            require_role(user=self.user, namespace=namespace, role=role)
        except ServiceError as error:
            raise CommandError(str(error)) from None


def add_user_argument(parser: CommandParser, *, needs: str, person_required: bool = False) -> None:
    """`--user`; with `person_required` the command refuses to run as the system actor (see person_actor)."""
    without = (
        "Required: this change is reviewed work that names a person."
        if person_required
        else f"Without it the command acts as the system actor {SYSTEM_USERNAME}."
    )
    parser.add_argument(
        "--user",
        help=f"Username of the person acting (needs {needs} in the namespace); recorded in the audit trail. {without}",
    )


def command_actor(username: str | None) -> CommandActor:
    if not username:
        return CommandActor(user=system_actor(), checked=False)
    user = User.objects.filter(username=username, is_active=True).exclude(username=SYSTEM_USERNAME).first()
    if user is None:
        raise CommandError(NO_SUCH_USER.format(username=username))
    return CommandActor(user=user, checked=True)


NEEDS_PERSON = "Say who does this: --user {role} (a {role} of the namespace, named in the audit trail)."


def person_actor(username: str | None, *, role: str) -> CommandActor:
    """The --user person, for changes the system actor may never make (a rollback, a restore)."""
    if not username:
        raise CommandError(NEEDS_PERSON.format(role=role.upper()))
    return command_actor(username)
