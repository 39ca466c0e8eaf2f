"""The human pages beside the index: the searchable, paged entry list and the metrics page."""

from __future__ import annotations

import re

from django.http import HttpRequest

from gateway.declared import REPEATED, Operation, Parameter
from gateway.errors import NotFoundError
from gateway.gate import Gate
from gateway.http import HTML, MARKDOWN, Reply, wants_markdown
from gateway.params import CATEGORY, TOPIC, TOPIC_REFUSALS, category_parse, topic_parse
from gateway.views import not_replayed, read_view
from knowledge.charts.measures import traffic_chart
from knowledge.retrieval.browse import PageOutOfRangeError, browse_entries, category_positions
from knowledge.retrieval.render.markdown import entries_page_markdown
from knowledge.selectors.metrics_page import metrics_page_render
from knowledge.selectors.pages import entries_page_render
from knowledge.selectors.quality import evaluation_trend, metrics_document
from knowledge.selectors.traffic import traffic_by_day

PAGE_NOT_INTEGER = "page must be a whole number from 1."
PAGE_PAST_END = "There is no page {page}: the list has {pages} page(s)."
_PAGE = re.compile(r"^\d{1,9}$")
# The topic's codes, in words that name q.
Q_REFUSALS = {code: message.replace("topic", "q", 1) for code, message in TOPIC_REFUSALS.items()}
Q = Parameter("q", {k: v for k, v in TOPIC.schema.items() if k != "default"}, "IDs or words to search.", Q_REFUSALS)
BROWSE_CATEGORY = Parameter(
    "category",
    CATEGORY.schema,
    "Only this category (unknown: 400 unknown_category).",
    CATEGORY.refusals,
    enum="categories",
)
PAGE = Parameter(
    "page",
    {"type": "integer", "minimum": 1, "maximum": 999_999_999},
    "The page, 50 entries each.",
    {"invalid_page": PAGE_NOT_INTEGER},
)
BROWSE = Operation((Q, BROWSE_CATEGORY, PAGE), {"repeated_parameter": REPEATED})


def _page(raw: str | None) -> int:
    if raw is None or raw == "":
        return 1
    if not _PAGE.match(raw) or int(raw) < 1:
        raise PAGE.refusal("invalid_page")
    return int(raw)


@read_view
def entries_browse_get(request: HttpRequest, gate: Gate) -> Reply:
    """/entries/?q=&category=&page=: replayed per URL like every page, so a repeated search costs nothing."""
    release = gate.pages
    sent = BROWSE.sent_once(request.GET)
    query = topic_parse(sent.get(Q.name), declared=Q)
    categories = [c.slug for c in release.snapshot.namespace.categories]
    category = category_parse(sent.get(BROWSE_CATEGORY.name), categories=categories, declared=BROWSE_CATEGORY)
    page = _page(sent.get(PAGE.name))
    try:
        listing = browse_entries(
            entries=release.snapshot.entries,
            index=release.index,
            by_id=release.by_id,
            by_category=release.memoized("category_positions", lambda: category_positions(release.snapshot.entries)),
            query=query,
            category=category,
            page=page,
        )
    except PageOutOfRangeError as error:
        raise NotFoundError(PAGE_PAST_END.format(page=page, pages=error.pages), param="page") from None
    describedby = gate.path("llms.txt")
    if wants_markdown(request):
        body = entries_page_markdown(listing, namespace=release.snapshot.namespace)
        return Reply(body.encode(), MARKDOWN, vary_accept=True, describedby=describedby)
    html = entries_page_render(listing, release.snapshot, release.stamp)
    # The twin is this URL, query string and all, asked with Accept: text/markdown (not llms.txt: another document).
    asked = request.GET.urlencode()
    twin = gate.path("entries/") + (f"?{asked}" if asked else "")
    return Reply(html.encode(), HTML, vary_accept=True, alternate=twin, describedby=describedby, services=gate.prefix)


def _traffic_chart(namespace_id: int) -> str:
    """Requests and "not covered" topics per day from the request log; nothing until requests are recorded."""
    traffic = traffic_by_day(namespace_id=namespace_id)
    if not traffic.recorded:
        return ""
    days = [day.strftime("%m-%d") for day in traffic.days]
    return traffic_chart(days, traffic.requests, traffic.uncovered)


@read_view
@not_replayed  # evaluation runs are recorded without a new release
def metrics_page_get(request: HttpRequest, gate: Gate) -> Reply:
    """/metrics.html: budget scan, context shape and golden-question quality across releases, as charts."""
    release = gate.pages
    html = metrics_page_render(
        snapshot=release.snapshot,
        stamp=release.stamp,
        document=metrics_document(release=release, namespace_id=gate.namespace.id),
        trend=evaluation_trend(namespace_id=gate.namespace.id),
        traffic_chart=_traffic_chart(gate.namespace.id),
    )
    return Reply(
        html.encode(),
        HTML,
        alternate=gate.path("metrics.json"),
        alternate_type="application/json",
        services=gate.prefix,
        describedby=gate.path("llms.txt"),
    )
