"""The public routes of one namespace; evergreen_site.urls mounts them at / and under /t/<namespace>/."""

from __future__ import annotations

from django.urls import URLPattern, path

from api.views import browse, changes, context, entries, files, pages, verify
from knowledge.retrieval.render import release as names

urlpatterns: list[URLPattern] = [
    path("", pages.index_get, name="index"),
    path("index.html", pages.index_get, name="index-html"),
    path("entries/", browse.entries_browse_get, name="entries"),
    path("metrics.html", browse.metrics_page_get, name="metrics-page"),
    path("entries/<str:entry_id>.md", pages.entry_page_markdown_get, name="entry-page-md"),
    path("entries/<str:entry_id>", pages.entry_page_get, name="entry-page"),
    path("docs/<slug:slug>.md", pages.doc_markdown_get, name="doc-md"),
    path("docs/<slug:slug>", pages.doc_get, name="doc"),
    path("api/context", context.context_get, name="api-context"),
    path("api/changes", changes.changes_get, name="api-changes"),
    path("api/verify", verify.verify_post, name="api-verify"),
    path("api/entries/<str:entry_id>.md", entries.entry_markdown_get, name="api-entry-md"),
    path("api/entries/<str:entry_id>", entries.entry_get, name="api-entry"),
    path("api/prompt-pack", files.prompt_pack_get, name="api-prompt-pack"),
    path("api/metrics", files.metrics_get, name="api-metrics"),
    path("metrics.json", files.metrics_get, name="metrics-json"),
    path("llms.txt", files.artifact_view(names.LLMS_TXT, describedby=False), name="llms-txt"),
    # The same file where well-known-URI crawlers look for it (RFC 8615 location, llms.txt proposal).
    path(".well-known/llms.txt", files.artifact_view(names.LLMS_TXT, describedby=False), name="well-known-llms-txt"),
    path("llms-full.txt", files.artifact_view(names.LLMS_FULL_TXT), name="llms-full-txt"),
    path("llms/<slug:category>.txt", files.category_artifact_view("llms"), name="llms-category"),
    path("llms-full/<slug:category>.txt", files.category_artifact_view("llms-full"), name="llms-full-category"),
    path("themes/<slug:theme>.md", files.theme_artifact_view, name="theme-md"),
    path("themes/<slug:layer>/<slug:theme>.md", files.theme_artifact_view, name="layer-theme-md"),
    path("context.json", files.artifact_view(names.CONTEXT_JSON), name="context-json"),
    path("index.html.md", files.artifact_view(names.INDEX_MD), name="index-md"),
    path("robots.txt", files.artifact_view(names.ROBOTS_TXT), name="robots-txt"),
    path("ai.txt", files.artifact_view(names.AI_TXT), name="ai-txt"),
    path("ai-policy.json", files.artifact_view(names.AI_POLICY_JSON), name="ai-policy-json"),
    path("sitemap.xml", files.artifact_view(names.SITEMAP_XML), name="sitemap-xml"),
    path("sitemaps/<int:number>.xml", files.sitemap_part_view, name="sitemap-part"),
    path("schemas/knowledge.schema.json", files.knowledge_schema_get, name="knowledge-schema"),
]
