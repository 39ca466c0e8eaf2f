"""URL configuration: the admin, and the public routes at the root and under /t/<namespace>/."""

from django.contrib import admin
from django.urls import path

urlpatterns = [
    path("admin/", admin.site.urls),
]
