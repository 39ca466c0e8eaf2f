"""URL configuration: the admin, and the public routes at the root and under /t/<namespace>/."""

from django.contrib import admin
from django.urls import include, path

from api import urls as public

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include((public.urlpatterns, "public"), namespace="public")),
    path("t/<slug:namespace>/", include((public.urlpatterns, "public"), namespace="tenant")),
]
