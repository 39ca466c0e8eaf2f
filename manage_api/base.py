"""What every management view shares: authentication, the namespace and role check, limits, errors, paging."""

from __future__ import annotations

import binascii
from base64 import urlsafe_b64decode, urlsafe_b64encode
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote_to_bytes, urlencode

from django.core import signing
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Field, QuerySet
from rest_framework import exceptions, viewsets
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param

from knowledge.models import Namespace
from manage_api.access import Access, request_access
from manage_api.auth import BrowserSessionAuthentication, PersonalTokenAuthentication
from manage_api.errors import exception_handler
from manage_api.filters import in_utc
from manage_api.throttles import ManageRateThrottle

INVALID_CURSOR = "Invalid cursor: send back the `next` or `previous` link of a list as it came."
CURSOR_SALT = "manage_api.cursor"
INVALID_LIMIT = "`limit` is a whole number from 1 to {maximum}."
TOO_DEEP = "JSON parse error - the body nests too deeply."
NOT_UTF8 = "`{name}` is not UTF-8 once its %-escapes are decoded: percent-encode the text's UTF-8 bytes."
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


class ManageJSONParser(JSONParser):
    """JSON bodies; one nested past the interpreter's recursion limit is malformed (400 invalid_json), not a 500."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as error:
            raise exceptions.ParseError(TOO_DEEP) from error


def _raw_query(request: Request) -> bytes:
    """The query string's bytes: WSGI hands them over as ISO-8859-1 text (PEP 3333), ASGI Django as UTF-8."""
    query = request.META.get("QUERY_STRING", "")
    try:
        return query.encode("iso-8859-1")
    except UnicodeEncodeError:
        return query.encode()


def check_query_encoding(request: Request) -> None:
    """Refuse (400 invalid_parameter) a query parameter whose %-escapes are not UTF-8, such as `?q=%FF`.

    Django decodes them with errors="replace", so the filter would search for U+FFFD; that is decided
    here from the raw query string, once for every parameter (every text filter included), since a real
    U+FFFD sent as %EF%BF%BD is a valid search.
    """
    for pair in _raw_query(request).split(b"&"):
        name, _, value = pair.partition(b"=")
        try:
            for part in (name, value):
                unquote_to_bytes(part.replace(b"+", b" ")).decode()
        except UnicodeDecodeError:
            param = unquote_to_bytes(name.replace(b"+", b" ")).decode(errors="replace")
            raise exceptions.ValidationError({param: [NOT_UTF8.format(name=param)]}) from None


def _ordering_field(queryset: QuerySet[Any], name: str) -> Field[Any, Any]:
    annotation = queryset.query.annotations.get(name)
    return annotation.output_field if annotation is not None else queryset.model._meta.get_field(name)


class ManagePagination(CursorPagination):
    """Cursor paging: stable under concurrent writes; `next`/`previous` are full URLs.

    A bad `cursor` or `limit` is a bad parameter (400 invalid_parameter), as the README's errors say; DRF
    answers 404 for an undecodable cursor, takes any base64 of `p=…&o=…` as one of its own (QA: a forged
    `p=100` answered 200), hands its position to the query unchecked (a 500 when it is not of the ordering
    field's type), and quietly pages by 50 for any bad limit. Cursors are therefore signed (SECRET_KEY).
    """

    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
    ordering = "-id"

    def paginate_queryset(self, queryset: QuerySet[Any], request: Request, view: Any = None) -> list[Any] | None:
        self.queryset = queryset  # decode_cursor checks the position against the ordering field
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param, "").strip()
        if not raw:
            return self.page_size
        if not raw.isdecimal() or not 1 <= int(raw) <= self.max_page_size:
            raise exceptions.ValidationError(
                {self.page_size_query_param: [INVALID_LIMIT.format(maximum=self.max_page_size)]}
            )
        return int(raw)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size, default=self.page_size)
        return parameters

    def encode_cursor(self, cursor: Cursor) -> str:
        """DRF's tokens (o, r, p), signed: only a cursor this server handed out pages (README, Management API)."""
        tokens: dict[str, str] = {}
        if cursor.offset:
            tokens["o"] = str(cursor.offset)
        if cursor.reverse:
            tokens["r"] = "1"
        if cursor.position is not None:
            tokens["p"] = str(cursor.position)
        signed = signing.Signer(salt=CURSOR_SALT).sign(urlencode(tokens))
        encoded = urlsafe_b64encode(signed.encode()).decode("ascii")
        return replace_query_param(self.base_url or "", self.cursor_query_param, encoded)

    def decode_cursor(self, request: Request) -> Cursor | None:
        """The cursor sent back, or 400 invalid_parameter for one not signed here (a hand-made `p=100`, `o=1000000`)
        or one whose position no longer fits the list's ordering field (another `ordering` than it was made for)."""
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is None:
            return None
        try:
            signed = urlsafe_b64decode(encoded.encode("ascii")).decode("ascii")
            tokens = parse_qs(
                signing.Signer(salt=CURSOR_SALT).unsign(signed), keep_blank_values=True, strict_parsing=False
            )
            offset = int(tokens.get("o", ["0"])[0])
            reverse = tokens.get("r", ["0"])[0] == "1"
            position = tokens.get("p", [None])[0]
        except (UnicodeError, ValueError, binascii.Error, signing.BadSignature) as error:
            raise self._invalid_cursor() from error
        if not 0 <= offset <= self.offset_cutoff:
            raise self._invalid_cursor()
        if position is not None:
            self._check_position(position)
        return Cursor(offset=offset, reverse=reverse, position=position)  # type: ignore[arg-type]  # text, as DRF

    def _check_position(self, position: object) -> None:
        """The position must be a value of the field the list is ordered by (in its column's range)."""
        field = _ordering_field(self.queryset, self.ordering[0].lstrip("-"))
        try:
            value = field.clean(position, None)
            if isinstance(value, datetime):
                in_utc(value)
        except (DjangoValidationError, ValueError, TypeError) as error:
            raise self._invalid_cursor() from error

    def _invalid_cursor(self) -> exceptions.ValidationError:
        return exceptions.ValidationError({self.cursor_query_param: [INVALID_CURSOR]})


class ManageViewSet(viewsets.GenericViewSet):
    """A viewset of one namespace's objects. `roles` maps an action to the role it needs (reads: None)."""

    authentication_classes = [PersonalTokenAuthentication, BrowserSessionAuthentication]
    permission_classes = [NamespaceRole]
    throttle_classes = [ManageRateThrottle]
    parser_classes = [ManageJSONParser]
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
        check_query_encoding(request)

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
