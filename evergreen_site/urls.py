"""URL configuration: the admin, and the public routes at the root and under /t/<namespace>/."""

from django.contrib import admin
from django.urls import include, path

from api import urls as public
from evergreen_site.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("", include((public.urlpatterns, "public"), namespace="public")),
    path("t/<slug:namespace>/", include((public.urlpatterns, "public"), namespace="tenant")),
]
