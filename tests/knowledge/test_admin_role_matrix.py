"""The role matrix (issue 9): nobody reads or changes, in the admin, a namespace where they lack the role.

Every registered model admin is visited from the admin site's registry, so a new model is covered
(or fails until tests/knowledge/rolematrix.py says which roles it needs): its list, add, change,
history and delete pages, its custom URLs, actions and autocompletes, by GET and by POST, for a
cast holding different roles in different namespaces. Refused POSTs are replayed with the form a
superuser would submit, and must leave every row of the database as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.db import transaction
from django.db.models import Model
from django.test import Client
from django.urls import NoReverseMatch, reverse

from knowledge.models import Category, Namespace
from tests.knowledge.adminforms import FormData, form_data
from tests.knowledge.rolematrix import (
    ACTION_ROLES,
    ANY,
    CAST,
    CHANGEABLE_STATE,
    CUSTOM_URLS,
    DELETABLE,
    NOBODY,
    POLICY,
    SLUGS,
    World,
    fingerprint,
    holds,
    member_of,
    namespace_of,
    sample,
    world_build,
)

REFUSED = {302, 403, 404, 405}
STANDARD_VIEWS = {"changelist", "add", "history", "delete", "change"}


@pytest.fixture(scope="module")
def shared(django_db_setup: Any, django_db_blocker: Any) -> Iterator[tuple[World, dict[str, FormData]]]:
    """One world and one harvest for the whole cast, rolled back when the module is done.

    Each test still runs in its own savepoint, so what one person's requests might change (nothing,
    if the admin holds) cannot leak into the next person's.
    """
    with django_db_blocker.unblock(), transaction.atomic():
        world = world_build()
        yield world, _harvest(world)
        transaction.set_rollback(True)


def _name(model: type[Model], view: str) -> str:
    return f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}"


def _url(model: type[Model], view: str, obj: Model | None = None) -> str:
    return reverse(_name(model, view), args=[] if obj is None else [quote(obj.pk)])


def _form(html: str) -> FormData:
    for line in html.splitlines():
        if "<form " in line and '_form"' in line:
            return form_data(html, line.split('id="', 1)[1].split('"', 1)[0])
    return {}


class Visit:
    """One person's requests, with the pages they were shown kept for the leak check."""

    def __init__(self, person: str, world: World) -> None:
        self.person = person
        self.root = world.people["root"]
        self.client = Client()
        self.client.force_login(world.people[person])
        self.pages: list[tuple[str, str]] = []
        self.failures: list[str] = []
        self.offered = 0  # autocomplete results checked

    def get(self, url: str, **query: Any) -> Any:
        response = self.client.get(url, query)
        if response.status_code == 200:
            self.pages.append((url, response.text))
        return response

    def post(self, url: str, data: Any) -> Any:
        response = self.client.post(url, data)
        if response.status_code == 200:
            self.pages.append((url, response.text))
        return response

    def expect(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(what)


def _model_admins() -> list[tuple[type[Model], Any]]:
    registered = sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label)
    unknown = [model._meta.label for model, _ in registered if model not in POLICY]
    assert not unknown, f"Add {unknown} to tests/knowledge/rolematrix.py POLICY: which roles view, change, add it?"
    return registered


def _reading(visit: Visit, model: type[Model], objects: list[Model]) -> None:
    view_role, change_role, _ = POLICY[model]
    listed = visit.get(_url(model, "changelist"))
    may_list = any(holds(visit.person, slug, view_role) for slug in (*SLUGS, None))
    visit.expect(listed.status_code == (200 if may_list else 403), f"{model.__name__} list: {listed.status_code}")
    for obj in objects:
        slug, label = namespace_of(obj), f"{model.__name__} {obj.pk} ({namespace_of(obj)})"
        if listed.status_code == 200 and not holds(visit.person, slug, view_role):
            visit.expect(_url(model, "change", obj) not in listed.text, f"the {model.__name__} list links {label}")
        for view in ("change", "history", "delete"):
            response = visit.get(_url(model, view, obj))
            role = DELETABLE.get(model, NOBODY) if view == "delete" else view_role
            if not holds(visit.person, slug, role):
                visit.expect(response.status_code in REFUSED, f"{view} of {label}: {response.status_code}")
                continue
            visit.expect(response.status_code == 200, f"{view} of {label}, theirs to see: {response.status_code}")
            if view == "change":
                editable = 'name="_save"' in response.text
                in_changeable_state = CHANGEABLE_STATE.get(model, lambda _: True)(obj)
                may_change = holds(visit.person, slug, change_role) and in_changeable_state
                visit.expect(editable == may_change, f"{label} editable: {editable}, may change: {may_change}")


def _writing(visit: Visit, model: type[Model], objects: list[Model], forms: dict[str, FormData]) -> None:
    _, change_role, add_role = POLICY[model]
    for obj in objects:
        slug = namespace_of(obj)
        change = _url(model, "change", obj)
        if not holds(visit.person, slug, change_role):
            response = visit.post(change, forms.get(change, {}))
            visit.expect(
                response.status_code in REFUSED,
                f"POST change {model.__name__} {obj.pk} ({slug}) answered {response.status_code}",
            )
        if not holds(visit.person, slug, DELETABLE.get(model, NOBODY)):
            response = visit.post(_url(model, "delete", obj), {"post": "yes"})
            visit.expect(
                response.status_code in REFUSED,
                f"POST delete {model.__name__} {obj.pk} ({slug}) answered {response.status_code}",
            )
    try:
        add = _url(model, "add")
    except NoReverseMatch:
        return
    may_add_somewhere = any(holds(visit.person, s, add_role) for s in SLUGS)
    added = visit.get(add)
    visit.expect(
        added.status_code == (200 if may_add_somewhere else 403), f"add {model.__name__} answered {added.status_code}"
    )
    for slug in SLUGS:
        if holds(visit.person, slug, add_role):
            continue
        response = visit.post(add, _aimed_at(forms.get(add, {}), slug))
        visit.expect(
            response.status_code in REFUSED or (response.status_code == 200 and "errorlist" in response.text),
            f"POST add {model.__name__} into {slug} answered {response.status_code}",
        )


def _aimed_at(data: FormData, slug: str) -> FormData:
    """The superuser's add form, pointed at namespace `slug` (by its namespace or category field)."""
    aimed = {**data, "name": ["matrix"], "username": ["writer"], "role": ["admin"], "key": ["matrix-q"]}
    namespace = Namespace.objects.get(slug=slug)
    if "namespace" in aimed:
        aimed["namespace"] = [str(namespace.pk)]
    if "category" in aimed:
        aimed["category"] = [str(Category.objects.filter(namespace=namespace).values_list("pk", flat=True)[0])]
    return aimed


def _acting(visit: Visit, model: type[Model], model_admin: Any) -> None:
    names = [*(model_admin.actions or []), "delete_selected"]
    for name in names:
        if not isinstance(name, str):
            continue
        role = ACTION_ROLES.get((model, name), DELETABLE.get(model, NOBODY) if name == "delete_selected" else None)
        assert role is not None, f"Add ({model.__name__}, {name!r}) to rolematrix.ACTION_ROLES"
        by_namespace: dict[str | None, list[Model]] = {}
        for obj in model._default_manager.all():
            by_namespace.setdefault(namespace_of(obj), []).append(obj)
        for slug, targets in by_namespace.items():
            if holds(visit.person, slug, role):
                continue
            data = {"action": name, "_selected_action": [str(o.pk) for o in targets], "post": "yes"}
            response = visit.post(_url(model, "changelist"), data)
            visit.expect(
                response.status_code in REFUSED | {200}, f"action {name} on {slug} answered {response.status_code}"
            )


def _custom_urls(visit: Visit, model: type[Model], model_admin: Any) -> None:
    for pattern in model_admin.get_urls():
        name = pattern.name or ""
        if not name or name.rsplit("_", 1)[-1] in STANDARD_VIEWS:
            continue
        assert name in CUSTOM_URLS, f"Add the custom admin URL {name!r} to rolematrix.CUSTOM_URLS with its role"
        roles = CUSTOM_URLS[name]
        variants = roles.items() if isinstance(roles, dict) else [(None, roles)]
        for obj in sample(model_admin, visit.root):
            slug = namespace_of(obj)
            for action, role in variants:
                if holds(visit.person, slug, role):
                    continue
                args = [obj.pk] if action is None else [obj.pk, action]
                url = reverse(f"admin:{name}", args=args)
                for response in (visit.get(url), visit.post(url, {"note": "matrix", "reason": "matrix"})):
                    visit.expect(
                        response.status_code in REFUSED,
                        f"{name} {action or ''} on {slug} answered {response.status_code}",
                    )


def _autocompletes(visit: Visit) -> None:
    """Every foreign key of every model, asked for as the admin's autocomplete would ask.

    Django answers for any source field, declared autocomplete or not; what comes back must belong to
    namespaces the person is a member of, and for declared ones to those where they may save the form.
    """
    for source in [*apps.get_app_config("knowledge").get_models(), *apps.get_app_config("auth").get_models()]:
        for field in source._meta.get_fields():
            remote: Any = field.related_model
            if not (field.many_to_one and field.concrete) or not admin.site.is_registered(remote):
                continue
            query = {
                "app_label": source._meta.app_label,
                "model_name": source._meta.model_name,
                "field_name": field.name,
            }
            response = visit.get(reverse("admin:autocomplete"), term="", **query)
            if response.status_code != 200:
                continue
            declared = source in POLICY and field.name in getattr(
                admin.site._registry.get(source), "autocomplete_fields", ()
            )
            role = POLICY[source][1] if declared else ANY
            for item in response.json()["results"]:
                visit.offered += 1
                slug = namespace_of(remote._default_manager.get(pk=item["id"]))
                visit.expect(
                    holds(visit.person, slug, role), f"autocomplete {source.__name__}.{field.name} offered {slug}"
                )


def _harvest(world: World) -> dict[str, FormData]:
    """The forms a superuser is shown, to replay refused POSTs with data that would otherwise be accepted."""
    root = Client()
    root.force_login(world.people["root"])
    forms: dict[str, FormData] = {}
    for model, model_admin in _model_admins():
        urls = [_url(model, "change", obj) for obj in sample(model_admin, world.people["root"])]
        with contextlib.suppress(NoReverseMatch):
            urls.append(_url(model, "add"))
        for url in urls:
            response = root.get(url)
            if response.status_code == 200:
                forms[url] = _form(response.text)
    return forms


@pytest.mark.parametrize("person", sorted(CAST))
def test_nobody_reads_or_changes_a_namespace_where_they_lack_the_role(
    shared: tuple[World, dict[str, FormData]], db: Any, person: str
) -> None:
    world, forms = shared
    visit = Visit(person, world)
    before = fingerprint()
    for model, model_admin in _model_admins():
        objects = sample(model_admin, world.people["root"])
        _reading(visit, model, objects)
        _writing(visit, model, objects, forms)
        _acting(visit, model, model_admin)
        _custom_urls(visit, model, model_admin)
        if person != "root":
            visit.expect(fingerprint() == before, f"the database changed while {person} visited {model.__name__}")
            before = fingerprint()
    _autocompletes(visit)
    visit.expect(visit.offered > 0 or person != "root", "no autocomplete answered anything: nothing was checked")
    strangers = [slug for slug in SLUGS if slug not in member_of(person)]
    for url, page in visit.pages:
        leaked = [slug for slug in strangers if slug in page]
        visit.expect(not leaked, f"{url} shows {leaked} to {person}")
    assert not visit.failures, "\n".join(visit.failures[:40])
    assert visit.pages or not member_of(person), "the matrix showed this person nothing: it tested nothing"
