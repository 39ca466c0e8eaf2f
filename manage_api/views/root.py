"""GET /api/manage/: the namespace, what this request may do in it, and where the resources are."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from knowledge.models import Namespace
from knowledge.selectors.layers import bases_list
from manage_api.base import ManageViewSet
from manage_api.schema import errors

RESOURCES = (
    "entries",
    "versions",
    "releases",
    "feedback",
    "audit",
    "api-keys",
    "golden-questions",
    "evaluation-runs",
    "synonym-sets",
    "synonym-versions",
    "bases",
    "themes",
    "text-versions",
)

WHOAMI = inline_serializer(
    name="ManageRoot",
    fields={
        "namespace": serializers.CharField(),
        "prefix": serializers.CharField(help_text="The namespace's ID prefix, e.g. EG."),
        "categories": serializers.ListField(
            child=inline_serializer(
                name="ManageCategory",
                fields={
                    "slug": serializers.CharField(),
                    "name": serializers.CharField(),
                    "blocks": serializers.ListField(
                        child=serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2),
                        help_text="The ID number ranges [start, end] new entries of the category get.",
                    ),
                },
            )
        ),
        "bases": serializers.ListField(
            child=serializers.CharField(),
            help_text="The base namespaces this one builds on, highest priority first (issue 16; set in the admin).",
        ),
        "user": serializers.CharField(),
        "roles": serializers.ListField(child=serializers.CharField(), help_text="Roles this request may use."),
        "held": serializers.ListField(child=serializers.CharField(), help_text="Roles the person holds."),
        "token": inline_serializer(
            name="ManageRootToken",
            fields={
                "name": serializers.CharField(),
                "scope": serializers.CharField(),
                "expires_at": serializers.DateTimeField(allow_null=True),
            },
            allow_null=True,
        ),
        "resources": serializers.DictField(child=serializers.CharField()),
    },
)


class RootViewSet(ManageViewSet):
    queryset = Namespace.objects.none()  # nothing is listed here; drf-spectacular asks for a model

    @extend_schema(summary="Who you are here and what you may do", responses={200: WHOAMI, **errors(401, 404, 429)})
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        access = self.access
        token = access.token
        base = request.build_absolute_uri(request.path)
        return Response(
            {
                "namespace": access.namespace.slug,
                "prefix": access.namespace.prefix,
                "categories": [
                    {"slug": c.slug, "name": c.name, "blocks": [[b.start, b.end] for b in c.blocks.all()]}
                    for c in access.namespace.categories.prefetch_related("blocks")
                ],
                "bases": [base.slug for base in bases_list(namespace=access.namespace)],
                "user": request.user.get_username(),
                "roles": sorted(access.roles),
                "held": sorted(access.held),
                "token": None
                if token is None
                else {"name": token.name, "scope": token.scope, "expires_at": token.expires_at},
                "resources": {name: f"{base}{name}/" for name in RESOURCES},
            }
        )
