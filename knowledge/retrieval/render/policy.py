"""robots.txt, ai.txt and ai-policy.json (seed §3 L7): who may read the namespace and how its content may be used."""

from __future__ import annotations

import orjson

from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot

# AI agents and crawlers robots.txt names explicitly (allow-list, seed §10 "白名单放行主流 AI Agent").
AI_AGENTS = (
    "GPTBot",
    "OAI-SearchBot",
    "ChatGPT-User",
    "ClaudeBot",
    "Claude-User",
    "Claude-SearchBot",
    "anthropic-ai",
    "PerplexityBot",
    "Perplexity-User",
    "Google-Extended",
    "Applebot-Extended",
    "CCBot",
    "Bytespider",
    "meta-externalagent",
    "DuckAssistBot",
    "MistralAI-User",
    "cohere-ai",
)
# IETF aipref vocabulary (draft-ietf-aipref-vocab, attached by header or robots.txt rule): agents may
# use the content to answer and to index for search; training is left to the license and ai-policy.json.
CONTENT_USAGE = "train-ai=n, search=y"
PRIVATE_PATHS = ("/admin/",)


def render_robots_txt(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    ns = snapshot.namespace
    lines = [f"# {ns.title} — robots.txt (knowledge version {stamp.knowledge_version})", ""]
    for agent in AI_AGENTS:
        lines += [f"User-agent: {agent}", "Allow: /", *(f"Disallow: {p}" for p in PRIVATE_PATHS), ""]
    lines += ["User-agent: *", "Allow: /", *(f"Disallow: {p}" for p in PRIVATE_PATHS)]
    lines += [f"Content-Usage: {CONTENT_USAGE}", "", f"Sitemap: {ns.url('sitemap.xml')}", ""]
    return "\n".join(lines).encode()


def render_ai_txt(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    ns = snapshot.namespace
    lines = [
        f"# {ns.title} — ai.txt",
        f"# {ns.summary}",
        "",
        "User-Agent: *",
        "Allow: /",
        "Disallow: /admin/",
        "",
        f"Content-Usage: {CONTENT_USAGE}",
        f"License: {ns.license}",
        *([f"Contact: {ns.contact}"] if ns.contact else []),
        f"Policy: {ns.url('ai-policy.json')}",
        f"Start-Here: {ns.url('llms.txt')}",
        f"Context-API: {ns.url('api/context')}?topic=<topic>&budget=2000",
        "",
        "# Cite every fact with its entry ID, e.g. [" + (snapshot.entries[0].id if snapshot.entries else "ID") + "].",
        "",
    ]
    return "\n".join(lines).encode()


def render_ai_policy_json(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    ns = snapshot.namespace
    document = {
        "name": ns.name,
        "url": ns.base_url,
        "knowledgeVersion": stamp.knowledge_version,
        "revision": stamp.revision,
        "license": ns.license,
        "contact": ns.contact,
        "contentUsage": CONTENT_USAGE,
        "allow": {
            "read": True,
            "answer": True,
            "quote": True,
            "cache": True,
            "searchIndex": True,
            "train": False,
        },
        "attribution": {
            "required": True,
            "format": "[ID]",
            "example": f"[{snapshot.entries[0].id}]" if snapshot.entries else None,
        },
        "agents": list(AI_AGENTS),
        "rules": list(ns.rules),
        "entryPoints": {
            "llmsTxt": ns.url("llms.txt"),
            "context": ns.url("api/context"),
            "knowledgeBase": ns.url("context.json"),
            "schema": ns.url("schemas/knowledge.schema.json"),
        },
        "rateLimit": "see the RateLimit-Policy response header",
    }
    return orjson.dumps(document)
