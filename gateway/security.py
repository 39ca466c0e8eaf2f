"""Middleware: tag each request with the client the limiter sees, and log any 403 not logged already."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from gateway.clients import client_address
from knowledge.actors import actor_id
from knowledge.security_events import CLIENT_ATTRIBUTE, PERMISSION_DENIED, security_event, security_event_logged


class SecurityEventMiddleware:
    """Placed first, so admin permission refusals (PermissionDenied → 403) and CSRF failures are seen too.

    The resolved client is stored on the request so every security event hashes the same address
    the rate limiter counts (the proxy's view of it), whichever layer writes the event.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        setattr(request, CLIENT_ATTRIBUTE, client_address(request))
        response = self.get_response(request)
        if response.status_code == 403 and not security_event_logged(request):
            security_event(
                PERMISSION_DENIED, request=request, reason="forbidden", user_id=actor_id(getattr(request, "user", None))
            )
        return response
