"""Resolve a request to a namespace and its active release: host or /t/<namespace>/, API key, rate limit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from django.conf import settings
from django.http import HttpRequest

from gateway.clients import client_address
from gateway.errors import NamespaceNotFoundError, RateLimitedError
from gateway.http import CachePolicy
from gateway.ratelimit import RateDecision, rate_for, rate_limit_hit
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.security_events import ACCESS_DENIED, BAD_KEY, RATE_LIMITED, security_event
from knowledge.selectors.serving import (
    KEY_VALID,
    LoadedRelease,
    NamespaceState,
    api_key_check,
    namespace_state_for_host,
    namespace_state_get,
    release_served,
)
from knowledge.telemetry.metrics import RATE_LIMIT_REFUSALS, tallies


@dataclass(frozen=True, slots=True)
class Gate:
    """A request admitted to one namespace: its state, its loaded active release, its URL prefix."""

    namespace: NamespaceState
    release: LoadedRelease  # as the caller's clearance reads it (LoadedRelease.cleared)
    prefix: str  # "" on the namespace's own host or the default one, "/t/<slug>" under the path prefix
    client: str
    rate: RateDecision | None
    clearance: str = PUBLIC

    @property
    def pages(self) -> LoadedRelease:
        """Pages are public artifacts: they show the public view whatever key the request carries."""
        return self.release.public_view()

    @property
    def cache(self) -> CachePolicy:
        """Shared caches may keep an answer only when anyone may read it: a public namespace's public view."""
        return CachePolicy(public=self.namespace.is_public and self.release.clearance == PUBLIC)

    def path(self, path: str) -> str:
        """The absolute path of `path` in this namespace as the request addressed it."""
        return f"{self.prefix}/{path.lstrip('/')}"


def bearer_token(request: HttpRequest) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def request_host(request: HttpRequest) -> str:
    """The host name without port, lower case (validated against ALLOWED_HOSTS by Django)."""
    host = request.get_host().lower()
    if host.startswith("["):
        return host.split("]")[0] + "]"
    return host.rsplit(":", 1)[0]


def _state_for_host(host: str) -> NamespaceState | None:
    """The namespace a host routes to, else the default namespace (the bare host)."""
    return namespace_state_for_host(host=host) or namespace_state_get(slug=default_namespace())


def default_namespace() -> str:
    return settings.EVERGREEN.default_namespace


def state_resolver(request: HttpRequest, slug: str | None) -> Callable[[], NamespaceState | None]:
    """Re-resolves the namespace exactly as this request addressed it (for gateway.replay)."""
    if slug is not None:
        return partial(namespace_state_get, slug=slug)
    return partial(_state_for_host, request_host(request))


def namespace_lookup(request: HttpRequest, slug: str | None) -> tuple[str, NamespaceState | None]:
    """(the name the request asked for, the namespace): by path prefix, else host, else the default."""
    if slug is not None:
        return slug, namespace_state_get(slug=slug)
    host = request_host(request)
    state = namespace_state_for_host(host=host)
    if state is not None:
        return host, state
    default = default_namespace()
    return default, namespace_state_get(slug=default)


def _authorized(request: HttpRequest, state: NamespaceState | None, client: str) -> tuple[NamespaceState | None, str]:
    """The namespace if the request may read it, and the caller's clearance. A refusal is answered exactly
    like a namespace that does not exist, and only the security log tells the reasons apart.

    A public namespace reads at public clearance without a key; a valid key of its own raises the
    clearance to the key's, and any other token is ignored there (as before sensitivity existed).
    """
    if state is None:
        return None, PUBLIC
    token = bearer_token(request)
    if state.is_public:
        if token is None:
            return state, PUBLIC
        status, clearance = api_key_check(namespace_id=state.id, token=token)
        return state, clearance if status == KEY_VALID else PUBLIC
    if token is None:
        security_event(ACCESS_DENIED, request=request, namespace=state.slug, reason="no_key", client=client)
        return None, PUBLIC
    status, clearance = api_key_check(namespace_id=state.id, token=token)
    if status != KEY_VALID:
        security_event(BAD_KEY, request=request, namespace=state.slug, reason=status, client=client)
        return None, PUBLIC
    return state, clearance


def _refuse_over_limit(request: HttpRequest, decision: RateDecision | None, *, scope: str, client: str) -> None:
    if decision is not None and not decision.admitted:
        tallies.count(RATE_LIMIT_REFUSALS, "read")
        security_event(
            RATE_LIMITED, request=request, namespace=scope, reason="over_limit", client=client, limit=decision.limit
        )
        error = RateLimitedError(limit=decision.limit, window=decision.window, retry_after=decision.reset)
        error.headers = decision.headers()
        raise error


def request_gate(request: HttpRequest, *, namespace: str | None = None) -> Gate:
    """Admit a request or raise NamespaceNotFoundError / RateLimitedError (both GatewayError).

    Unknown namespaces, private ones without a valid key and ones without a release are counted
    against the global limit under the requested name and answered alike, so nothing tells them apart.
    """
    asked, state = namespace_lookup(request, namespace)
    client = client_address(request)
    state, clearance = _authorized(request, state, client)
    if state is None or state.release_id is None or state.release_key is None:
        decision = rate_limit_hit(scope=f"?{asked}", client=client, rate=rate_for(""))
        _refuse_over_limit(request, decision, scope=asked, client=client)
        error = NamespaceNotFoundError()
        error.headers = decision.headers() if decision else {}
        raise error
    decision = rate_limit_hit(scope=state.slug, client=client, rate=rate_for(state.rate_limit))
    _refuse_over_limit(request, decision, scope=state.slug, client=client)
    release = release_served(state)
    prefix = f"/t/{state.slug}" if namespace is not None else ""
    return Gate(
        namespace=state,
        release=release.cleared(clearance),
        prefix=prefix,
        client=client,
        rate=decision,
        clearance=clearance,
    )
