"""/api/manage/ routes; evergreen_site.urls mounts them at the root and under /t/<namespace>/."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path
from rest_framework.routers import SimpleRouter

from manage_api.views.entries import EntryViewSet
from manage_api.views.keys import ApiKeyViewSet
from manage_api.views.observations import AuditViewSet, FeedbackViewSet
from manage_api.views.releases import EvaluationRunViewSet, GoldenQuestionViewSet, ReleaseViewSet
from manage_api.views.root import RootViewSet
from manage_api.views.synonyms import SynonymSetViewSet, SynonymVersionViewSet
from manage_api.views.texts import BasesViewSet, TextVersionViewSet, ThemeViewSet
from manage_api.views.versions import VersionViewSet

router = SimpleRouter()
router.register("entries", EntryViewSet, basename="entry")
router.register("versions", VersionViewSet, basename="version")
router.register("releases", ReleaseViewSet, basename="release")
router.register("feedback", FeedbackViewSet, basename="feedback")
router.register("audit", AuditViewSet, basename="audit")
router.register("api-keys", ApiKeyViewSet, basename="api-key")
router.register("golden-questions", GoldenQuestionViewSet, basename="golden-question")
router.register("evaluation-runs", EvaluationRunViewSet, basename="evaluation-run")
router.register("synonym-sets", SynonymSetViewSet, basename="synonym-set")
router.register("synonym-versions", SynonymVersionViewSet, basename="synonym-version")
router.register("themes", ThemeViewSet, basename="theme")
router.register("text-versions", TextVersionViewSet, basename="text-version")

urlpatterns: list[URLPattern | URLResolver] = [
    path("", RootViewSet.as_view({"get": "retrieve"}), name="root"),
    path("bases/", BasesViewSet.as_view({"get": "retrieve"}), name="bases"),
    path("bases/propose/", BasesViewSet.as_view({"post": "propose"}), name="bases-propose"),
    *router.urls,
]
