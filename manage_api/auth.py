"""Who is asking: a personal API token (Authorization: Bearer egp_…) or a signed-in browser session with CSRF."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.request import Request

from gateway.gate import bearer_token
from knowledge.models import PersonalToken
from knowledge.security_events import BAD_KEY, security_event
from knowledge.selectors.tokens import (
    STATUS_EXPIRED,
    STATUS_INACTIVE_USER,
    STATUS_REVOKED,
    STATUS_VALID,
    personal_token_find,
)
from knowledge.services.api_keys import KEY_PREFIX
from knowledge.services.personal_tokens import personal_token_used

REFUSALS = {
    STATUS_EXPIRED: ("token_expired", "This token has expired; make a new one at /admin/tokens/."),
    STATUS_REVOKED: ("token_revoked", "This token was revoked; make a new one at /admin/tokens/."),
    STATUS_INACTIVE_USER: ("invalid_token", "The token's owner can no longer sign in."),
}
UNKNOWN = ("invalid_token", "Unknown token: send a personal API token as Authorization: Bearer egp_….")
NAMESPACE_KEY = (
    "invalid_token",
    "That is a namespace API key, which reads a private namespace's public routes; the management API needs "
    "a personal API token (egp_…), made in the admin.",
)


class TokenRefused(exceptions.AuthenticationFailed):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


class PersonalTokenAuthentication(BaseAuthentication):
    """Bearer egp_… tokens; the request's `auth` is the PersonalToken, which limits what the user may do."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, PersonalToken] | None:
        raw = bearer_token(request._request)
        if raw is None:
            return None
        token, status = personal_token_find(raw=raw)
        if token is None or status != STATUS_VALID:
            security_event(BAD_KEY, request=request._request, reason=status)
            if raw.startswith(KEY_PREFIX):
                raise TokenRefused(*NAMESPACE_KEY)
            raise TokenRefused(*REFUSALS.get(status, UNKNOWN))
        personal_token_used(token=token)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="evergreen-manage"'


class CsrfFailed(exceptions.PermissionDenied):
    default_code = "csrf_failed"


class BrowserSessionAuthentication(SessionAuthentication):
    """The admin's session, for the browser: unsafe methods need Django's CSRF token (X-CSRFToken)."""

    def enforce_csrf(self, request: Request) -> None:
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as error:
            raise CsrfFailed(str(error.detail)) from error


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    target_class = PersonalTokenAuthentication
    name = "personalToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (egp_…) made in the admin; it acts as its owner, "
            "limited to the namespaces and the scope it names.",
        }


class SessionScheme(OpenApiAuthenticationExtension):
    target_class = BrowserSessionAuthentication
    name = "session"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "cookie",
            "name": "sessionid",
            "description": "The admin's session cookie; unsafe methods also need the X-CSRFToken header.",
        }
