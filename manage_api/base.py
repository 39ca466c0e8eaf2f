"""What every management view shares: authentication, the namespace and role check, limits, errors, paging."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import QuerySet
from rest_framework import exceptions, viewsets
from rest_framework.pagination import CursorPagination
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request

from knowledge.models import Namespace
from manage_api.access import Access, request_access
from manage_api.auth import BrowserSessionAuthentication, PersonalTokenAuthentication
from manage_api.errors import exception_handler
from manage_api.throttles import ManageRateThrottle

REFUSALS = (
    exceptions.NotAuthenticated,
    exceptions.AuthenticationFailed,
    exceptions.NotFound,
    exceptions.PermissionDenied,
)


class NamespaceRole(BasePermission):
    """Admit the request to its namespace (401 / 404), then require the action's role there (403)."""

    def has_permission(self, request: Request, view: Any) -> bool:
        access = request_access(request, view.kwargs.get("namespace"))
        access.require(view.required_role())
        return True


class ManagePagination(CursorPagination):
    """Cursor paging: stable under concurrent writes; `next`/`previous` are full URLs."""

    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
    ordering = "-id"


class ManageViewSet(viewsets.GenericViewSet):
    """A viewset of one namespace's objects. `roles` maps an action to the role it needs (reads: None)."""

    authentication_classes = [PersonalTokenAuthentication, BrowserSessionAuthentication]
    permission_classes = [NamespaceRole]
    throttle_classes = [ManageRateThrottle]
    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]  # HTML for a signed-in browser that asks for it
    pagination_class = ManagePagination
    lookup_value_regex = "[^/]+"
    roles: ClassVar[dict[str, str]] = {}
    namespace_path: ClassVar[str] = "namespace"

    def get_exception_handler(self) -> Callable[..., Any]:
        return exception_handler

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """Refusals count against the caller's limit too (by address when no token opened anything), so
        guessing tokens or namespaces is as rate-limited as using them."""
        try:
            super().initial(request, *args, **kwargs)
        except REFUSALS:
            self.check_throttles(request)
            raise

    def required_role(self) -> str | None:
        return self.roles.get(self.action or "")

    @property
    def access(self) -> Access:
        return request_access(self.request, self.kwargs.get("namespace"))

    @property
    def namespace(self) -> Namespace:
        return self.access.namespace

    def scoped(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if getattr(self, "swagger_fake_view", False):
            return queryset.none()
        return queryset.filter(**{self.namespace_path: self.namespace})
