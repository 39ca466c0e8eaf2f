"""URL configuration: the admin, and the public routes at the root and under /t/<namespace>/."""

from django.contrib import admin
from django.urls import include, path

from api import urls as public
from api.openapi.views import api_docs, schema_view
from evergreen_site.health import healthz
from evergreen_site.prometheus import metrics_view
from mcp_bridge import urls as agents

# Refusals inside the admin render as admin pages that name the missing role.
handler403 = "knowledge.admin.denied.permission_denied"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema/", schema_view, name="api-schema"),
    path("api/docs/", api_docs, name="api-docs"),
    path("", include((agents.deployment_urlpatterns, "deployment"), namespace="deployment")),
    path("", include((public.urlpatterns, "public"), namespace="public")),
    path("t/<slug:namespace>/", include((public.urlpatterns, "public"), namespace="tenant")),
    path("", include((agents.urlpatterns, "agents"), namespace="agents")),
    path("t/<slug:namespace>/", include((agents.urlpatterns, "agents"), namespace="tenant-agents")),
]
