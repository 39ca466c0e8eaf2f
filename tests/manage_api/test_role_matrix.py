"""Every route with a cast: editor, reviewer and admin of alpha, a read-only token, a reviewer of beta, an
outsider. Refusals change nothing; the one allowed caller succeeds; other allowed callers are never refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import URLPattern, resolve

from knowledge.models import AuditRecord, Entry, EntryVersion
from manage_api import urls as manage
from tests.manage_api import routes
from tests.manage_api.routes import BASE, FIRST, ROUTES, Route, call, expected_status

pytestmark = pytest.mark.django_db


def state() -> tuple[Any, ...]:
    return (
        AuditRecord.objects.count(),
        Entry.objects.count(),
        tuple(EntryVersion.objects.order_by("pk").values_list("pk", "state", "lock_version")),
    )


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_every_caller_gets_what_their_roles_allow(world: Any, route: Route) -> None:
    route.setup(world)
    path = route.path(world)
    first = FIRST[route.role]
    refused = [name for name in world.callers if expected_status(name, route) in (403, 404)]
    allowed = [name for name in world.callers if name not in refused and name != first]

    before = state()
    for name in refused:
        response = call(world.callers[name], route, world, path)
        expected = expected_status(name, route)
        assert response.status_code == expected, (name, response.content)
        error = response.json()["error"]
        assert error["code"] in {"forbidden", "token_scope", "not_found"}
        assert error["message"]
    assert state() == before, "a refused request changed something"

    response = call(world.callers[first], route, world, path)
    assert response.status_code == route.ok, (first, response.content)
    assert response["Content-Type"].startswith("application/json")

    for name in allowed:
        response = call(world.callers[name], route, world, path)
        assert response.status_code not in (401, 403, 404), (name, response.content)


def test_the_read_only_token_is_refused_writes_with_token_scope(world: Any) -> None:
    response = world.callers["readonly_a"].post(BASE + f"versions/{world.draft.pk}/submit/")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "token_scope"
    response = world.callers["readonly_a"].post(BASE + f"entries/{world.live.entry.public_id}/retire/", {"reason": "x"})
    assert response.json()["error"]["code"] == "forbidden"  # edna is no reviewer at all


def test_no_namespace_of_another_tenant_is_visible(world: Any) -> None:
    """Alpha's people see nothing of beta, beta's nothing of alpha, whatever the route or ID."""
    beta_entry = world.beta_live.entry.public_id
    for name in ("editor_a", "reviewer_a", "admin_a", "readonly_a"):
        caller = world.callers[name]
        for path in ("", "entries/", f"entries/{beta_entry}/", "versions/", "feedback/", "audit/"):
            assert caller.get(f"/t/beta/api/manage/{path}").status_code == 404
        # alpha's routes never reach beta's objects by id either
        assert caller.get(f"{BASE}versions/{world.beta_live.pk}/").status_code == 404
        assert caller.get(f"{BASE}entries/{beta_entry}/").status_code == 404
    for name in ("reviewer_b", "outsider"):
        assert world.callers[name].get(f"/t/beta/api/manage/entries/{beta_entry}/").status_code == 200
        assert world.callers[name].get(f"{BASE}entries/").status_code == 404
    assert world.callers["editor_a"].get("/t/nowhere/api/manage/entries/").status_code == 404


class _AnyObject:
    """Stands in for the world and what the routes' helpers make: every attribute is itself, it prints as 1."""

    def __getattr__(self, name: str) -> Any:
        return self

    def __format__(self, spec: str) -> str:
        return "1"


def test_the_matrix_has_a_row_for_every_route_and_method(monkeypatch: pytest.MonkeyPatch) -> None:
    """A route or method added to manage_api/urls.py without a row in tests/manage_api/routes.py fails here."""
    stand_in = _AnyObject()
    for name, value in vars(routes).items():
        if name.startswith("_") and not name.startswith("__") and callable(value) and not isinstance(value, type):
            monkeypatch.setattr(routes, name, lambda world, made=stand_in: made)  # no data: only the path's shape
    covered = {(resolve(BASE + route.path(stand_in)).url_name, route.method) for route in ROUTES}
    served = {
        (pattern.name, method)
        for pattern in manage.urlpatterns
        if isinstance(pattern, URLPattern)
        for method in getattr(pattern.callback, "actions", {})
        if method not in ("head", "options")  # HEAD answers GET's headers; OPTIONS describes the route
    }

    assert served - covered == set(), "routes without a row in the matrix (tests/manage_api/routes.py)"
    assert covered <= served
