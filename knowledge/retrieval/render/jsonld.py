"""JSON-LD @graph (seed §3 L6): WebSite, Organization, Dataset, SoftwareApplication and FAQPage of a namespace."""

from __future__ import annotations

from typing import Any

import orjson

from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot


def jsonld_graph(snapshot: Snapshot, stamp: ReleaseStamp) -> dict[str, Any]:
    ns = snapshot.namespace
    site, org = ns.url("#website"), ns.url("#organization")
    graph: list[dict[str, Any]] = [
        {
            "@type": "WebSite",
            "@id": site,
            "url": ns.base_url,
            "name": ns.title,
            "description": ns.summary,
            "inLanguage": ns.language,
            "publisher": {"@id": org},
        },
        {
            "@type": "Organization",
            "@id": org,
            "name": ns.name,
            "url": ns.base_url,
            "email": ns.contact or None,
        },
        {
            "@type": "Dataset",
            "@id": ns.url("#dataset"),
            "name": f"{ns.title} — knowledge base",
            "description": ns.summary,
            "url": ns.url("context.json"),
            "version": stamp.knowledge_version,
            "dateModified": stamp.revision,
            "license": ns.license,
            "inLanguage": ns.language,
            "creator": {"@id": org},
            "keywords": [c.slug for c in ns.categories],
            "variableMeasured": ["id", "category", "title", "summary", "body", "confidence", "tokens", "updated"],
            "distribution": [
                {"@type": "DataDownload", "encodingFormat": "application/json", "contentUrl": ns.url("context.json")},
                {"@type": "DataDownload", "encodingFormat": "text/markdown", "contentUrl": ns.url("llms-full.txt")},
            ],
            "size": f"{len(snapshot.entries)} entries, {snapshot.total_tokens} tokens",
        },
        {
            "@type": "SoftwareApplication",
            "@id": ns.url("#api"),
            "name": f"{ns.name} context API",
            "applicationCategory": "DeveloperApplication",
            "operatingSystem": "Any (HTTP)",
            "url": ns.url("api/context"),
            "softwareVersion": stamp.knowledge_version,
            "offers": {"@type": "Offer", "price": "0", "priceCurrency": "USD"},
            "provider": {"@id": org},
        },
    ]
    if ns.faq:
        graph.append(
            {
                "@type": "FAQPage",
                "@id": ns.url("#faq"),
                "mainEntity": [
                    {"@type": "Question", "name": q, "acceptedAnswer": {"@type": "Answer", "text": a}}
                    for q, a in ns.faq
                ],
            }
        )
    return {"@context": "https://schema.org", "@graph": graph}


def render_jsonld(snapshot: Snapshot, stamp: ReleaseStamp) -> str:
    """The graph as a string safe inside <script type="application/ld+json"> (no "</" can close it)."""
    text = orjson.dumps(jsonld_graph(snapshot, stamp)).decode()
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")
