"""The read-view decorator: admit the request through the gate, run the view, finish with seed §10 headers."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse

from gateway.errors import METHOD_NOT_ALLOWED, GatewayError, MethodNotAllowedError
from gateway.gate import Gate, request_gate, state_resolver
from gateway.http import CachePolicy, Reply, error_reply, finish
from gateway.outages import database_unavailable
from gateway.params import query_text_check
from gateway.pinning import pinned_gate, release_headers
from gateway.replay import Replayable
from gateway.telemetry import route_of
from knowledge.requestlog.buffer import request_observed
from knowledge.telemetry.ids import request_id_current

ReadView = Callable[..., Reply]
ALLOWED_METHODS = ("GET", "HEAD")
# Answers that do not come from an admitted namespace (unknown, private without key, 405) are
# private so a shared cache never hands one caller's answer to another with a key.
UNADMITTED = CachePolicy(public=False)


def gateway_error_response(request: HttpRequest, error: GatewayError, *, gate: Gate | None = None) -> HttpResponse:
    """An error as JSON {"error": {...}} with the same headers as any other answer of the route."""
    reply = error_reply(error)
    reply.headers.update(error.headers)
    if gate is None:
        return finish(request, reply, cache=UNADMITTED)
    return finish(request, reply, cache=gate.cache, rate=gate.rate)


def not_replayed(func: ReadView) -> ReadView:
    """Mark a read view whose answer changes without a new release (gateway.replay never repeats it)."""
    func.replayed = False  # type: ignore[attr-defined]
    return func


def read_view(func: ReadView) -> Callable[..., HttpResponse]:
    """Wrap `func(request, gate, **kwargs) -> Reply` as a GET/HEAD view served at / and /t/<namespace>/.

    Its 200 GET answers for public namespaces depend only on the release and the request's URL,
    host and Accept header, so they are marked for gateway.replay (unless the view is not_replayed).
    """
    replayed = getattr(func, "replayed", True)

    @wraps(func)
    def view(request: HttpRequest, *args: Any, namespace: str | None = None, **kwargs: Any) -> HttpResponse:
        started = time.perf_counter()
        if request.method not in ALLOWED_METHODS:
            error = MethodNotAllowedError(METHOD_NOT_ALLOWED)
            error.headers = {"Allow": ", ".join(ALLOWED_METHODS)}
            return gateway_error_response(request, error)
        try:
            gate = request_gate(request, namespace=namespace)
        except GatewayError as error:
            return gateway_error_response(request, error)
        except DatabaseError as error:  # a namespace never read before, or read too long ago
            return gateway_error_response(request, database_unavailable(error))
        try:
            query_text_check(request)
            gate = pinned_gate(request, gate)
            reply = func(request, gate, *args, **kwargs)
        except GatewayError as error:
            return gateway_error_response(request, error, gate=gate)
        except DatabaseError as error:  # a release not loaded yet, a large file read on demand
            return gateway_error_response(request, database_unavailable(error), gate=gate)
        response = finish(request, reply, cache=gate.cache, rate=gate.rate, extra=release_headers(gate))
        if reply.observed is not None:
            request_observed(
                reply.observed,
                enabled=gate.namespace.log_requests,
                latency_seconds=time.perf_counter() - started,
                client=gate.client,
                request_id=request_id_current(),
            )
        if replayed and gate.namespace.is_public and gate.namespace.release_key:
            response.evergreen_replayable = Replayable(  # type: ignore[attr-defined]
                state=state_resolver(request, namespace),
                # The release that answered: during a switch, the previous one until the new one has loaded.
                release_key=gate.pages.key,
                route=route_of(request),
                observed=reply.observed,
            )
        return response

    view.csrf_exempt = True  # type: ignore[attr-defined]
    return view
