"""Headings and labels of the human pages and their Markdown mirrors, per namespace language."""

from __future__ import annotations

ZH = {
    "what": "这是什么",
    "stats": "知识版本 {version} ｜ revision {revision} ｜ 许可 {license} ｜ {count} 条，共 {tokens} token",
    "contact": "联系",
    "use": "怎么用",
    "use_text": (
        "Agent 先读 {llms}，再按 token 预算调用 {context}，拿到带稳定 ID、置信度、token 成本与更新日期的事实条目。"
    ),
    "entries": "条目索引",
    "id": "ID",
    "title": "标题",
    "category": "分类",
    "confidence": "置信度",
    "tokens": "tokens",
    "updated": "更新",
    "categories": "分类",
    "rules": "输出规则（AI 读取本站后必须遵守）",
    "docs": "文档",
    "faq": "常见问题",
    "endpoints": "机读端点",
    "playground": "Playground：试一试 /api/context",
    "playground_text": "输入 topic 与 budget，看 API 实际返回的事实包。",
    "topic": "topic",
    "budget": "budget",
    "send": "请求",
    "retired": "已撤回的条目",
    "more": "另有 {count} 条，见 {llms}。",
    "summary": "摘要",
    "tags": "标签",
    "cite": "引用",
    "version": "版本",
    "back": "返回首页",
    "markdown": "Markdown 版本",
}

EN = {
    "what": "What this is",
    "stats": "Knowledge version {version} | revision {revision} | license {license} | {count} entries, {tokens} tokens",
    "contact": "Contact",
    "use": "How to use it",
    "use_text": (
        "An agent reads {llms} first, then calls {context} with a token budget and gets entries with stable IDs, "
        "confidence, token cost and update date."
    ),
    "entries": "Entry index",
    "id": "ID",
    "title": "Title",
    "category": "Category",
    "confidence": "Confidence",
    "tokens": "Tokens",
    "updated": "Updated",
    "categories": "Categories",
    "rules": "Output rules (binding for AI that reads this site)",
    "docs": "Documentation",
    "faq": "FAQ",
    "endpoints": "Machine-readable endpoints",
    "playground": "Playground: try /api/context",
    "playground_text": "Type a topic and a budget to see the pack the API returns.",
    "topic": "topic",
    "budget": "budget",
    "send": "Request",
    "retired": "Retired entries",
    "more": "{count} more entries: see {llms}.",
    "summary": "Summary",
    "tags": "Tags",
    "cite": "Cite as",
    "version": "Version",
    "back": "Back to the index",
    "markdown": "Markdown version",
}

ENDPOINTS = (
    ("llms.txt", "text/markdown"),
    ("llms-full.txt", "text/markdown"),
    ("context.json", "application/json"),
    ("api/context", "application/json"),
    ("api/prompt-pack?scenario=chat", "text/plain"),
    ("api/metrics", "application/json"),
    ("mcp", "application/json"),
    (".well-known/agent-card.json", "application/json"),
    ("metrics.json", "application/json"),
    ("ai-policy.json", "application/json"),
    ("ai.txt", "text/plain"),
    ("robots.txt", "text/plain"),
    ("sitemap.xml", "application/xml"),
    ("index.html.md", "text/markdown"),
    ("schemas/knowledge.schema.json", "application/json"),
    ("api/schema/", "application/vnd.oai.openapi+json"),
)


def labels_for(language: str) -> dict[str, str]:
    return ZH if language.lower().startswith("zh") else EN
