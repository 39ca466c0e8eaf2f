"""GET /metrics for Prometheus, behind a bearer token (EVERGREEN_METRICS_TOKEN; unset: the route answers 404)."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from knowledge.telemetry.exposition import metrics_text


def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.EVERGREEN.metrics_token
    if not token:
        raise Http404("Metrics are off: set EVERGREEN_METRICS_TOKEN.")
    scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(), token.encode()):
        response = HttpResponse("A bearer token is required.\n", status=401, content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = metrics_text()
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "no-store"
    return response
