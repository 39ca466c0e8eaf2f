"""URL configuration: the admin, and the public routes at the root and under /t/<namespace>/."""

from django.contrib import admin
from django.urls import include, path

from api import urls as public
from api.openapi.views import api_docs, schema_view
from evergreen_site.health import healthz, readyz
from evergreen_site.prometheus import metrics_view
from knowledge.admin import tokens as admin_tokens
from manage_api import urls as manage
from manage_api.openapi import manage_docs, manage_schema_view
from mcp_bridge import urls as agents

# Refusals inside the admin render as admin pages that name the missing role.
handler403 = "knowledge.admin.denied.permission_denied"
# A dependency failure raised outside a view is a 503 with its code too (gateway.outages); on the JSON
# routes (/api/, /mcp, /a2a, at / or /t/<namespace>/) errors answer {"error": {…}}, elsewhere Django's pages.
handler400 = "gateway.outages.bad_request"
handler404 = "gateway.outages.page_not_found"
handler500 = "gateway.outages.server_error"

urlpatterns = [
    path("admin/tokens/", admin_tokens.tokens, name="admin-tokens"),
    path("admin/tokens/<int:pk>/revoke/", admin_tokens.token_revoke, name="admin-token-revoke"),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema/", schema_view, name="api-schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("api/manage/schema/", manage_schema_view, name="manage-schema"),
    path("api/manage/docs/", manage_docs, name="manage-docs"),
    path("api/manage/", include((manage.urlpatterns, "manage"), namespace="manage")),
    path("t/<slug:namespace>/api/manage/", include((manage.urlpatterns, "manage"), namespace="tenant-manage")),
    path("", include((agents.deployment_urlpatterns, "deployment"), namespace="deployment")),
    # The agent routes (six, none shared with the public ones) before the public ones (thirty): an MCP or
    # A2A call reaches Django on every request, so its URL is found without trying the others first.
    path("", include((agents.urlpatterns, "agents"), namespace="agents")),
    path("t/<slug:namespace>/", include((agents.urlpatterns, "agents"), namespace="tenant-agents")),
    path("", include((public.urlpatterns, "public"), namespace="public")),
    path("t/<slug:namespace>/", include((public.urlpatterns, "public"), namespace="tenant")),
]
