"""Per-token (or per-person) rate limits on the management API, in the same Redis sliding window as the reads."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from gateway.clients import client_address
from gateway.ratelimit import RateDecision, rate_limit_hit
from knowledge.models import PersonalToken

SCOPE = "manage"


def caller_key(request: Request) -> str:
    """Whom the limit counts: the token, else the signed-in person, else the address."""
    if isinstance(request.auth, PersonalToken):
        return f"token:{request.auth.pk}"
    user: Any = request.user
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return client_address(request._request)


class ManageRateThrottle(BaseThrottle):
    """EVERGREEN_MANAGE_RATE_LIMIT per caller (every namespace together), shared by every worker through Redis."""

    decision: RateDecision | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        self.decision = rate_limit_hit(
            scope=SCOPE, client=caller_key(request), rate=settings.EVERGREEN.manage_rate_limit
        )
        return self.decision is None or self.decision.admitted

    def wait(self) -> float | None:
        return float(self.decision.reset) if self.decision is not None else None
