"""The admin app's configuration: django.contrib.admin with Evergreen's site (knowledge.admin_site).

Its own module, imported while the app registry is being populated, so it imports no model.
"""

from django.contrib.admin.apps import AdminConfig


class EvergreenAdminConfig(AdminConfig):
    default_site = "knowledge.admin_site.EvergreenAdminSite"
