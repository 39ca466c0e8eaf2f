"""gateway.replay: repeated reads and their 304s answered in front of Django, never stale, never past a limit."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.replay import ReplayApp
from knowledge.models import Namespace
from knowledge.selectors.serving import serving_caches_clear
from tests.configure import configure
from tests.gateway.replaying import CountingDjango, call
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

pytestmark = pytest.mark.django_db


def test_a_repeated_read_is_answered_without_django(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    first = call(app, "/t/alpha/api/context?topic=token")
    second = call(app, "/t/alpha/api/context?topic=token")
    assert django_app.calls == 1
    # Each answer has its own request ID; everything else is the same.
    assert first[1].pop("X-Request-ID") != second[1].pop("X-Request-ID")
    assert second == first
    assert first[0] == "200 OK"
    assert first[1]["Content-Length"] == str(len(first[2]))


def test_revalidation_and_head_are_replayed_with_the_same_headers(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    _, headers, _ = call(app, "/t/alpha/llms.txt")
    not_modified = call(app, "/t/alpha/llms.txt", if_none_match=headers["ETag"])
    head = call(app, "/t/alpha/llms.txt", method="HEAD")
    assert django_app.calls == 1
    assert not_modified[0] == "304 Not Modified"
    assert not_modified[2] == b""
    assert not_modified[1]["ETag"] == headers["ETag"]
    assert not_modified[1]["Cache-Control"] == headers["Cache-Control"]
    assert "Content-Type" not in not_modified[1]
    assert not_modified[1]["Content-Length"] == "0"
    assert head[0] == "200 OK"
    assert head[1].pop("X-Request-ID") != headers.pop("X-Request-ID")
    assert head[1] == headers
    assert head[2] == b""


def test_a_new_release_is_never_answered_from_memory(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    before = call(app, "/t/alpha/context.json")
    publish(
        served,
        [*alpha_rows(), {"id": "AL-003", "title": "A new fact", "body": "Fresh.", "category": "fact"}],
        now=BUILT_AT.replace(day=3),
    )
    serving_caches_clear()  # as the one-second namespace cache would expire
    after = call(app, "/t/alpha/context.json")
    assert django_app.calls == 2
    assert after[1]["ETag"] != before[1]["ETag"]
    assert b"AL-003" in after[2]


def test_different_parameters_and_accept_headers_are_different_answers(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    html = call(app, "/t/alpha/index.html")
    markdown = call(app, "/t/alpha/index.html", accept="text/markdown")
    alpha_pack = call(app, "/t/alpha/api/context?topic=alpha")
    pricing_pack = call(app, "/t/alpha/api/context?topic=pricing")  # a miss Django taught the shape of
    assert django_app.calls == 3
    assert alpha_pack[1]["ETag"] != pricing_pack[1]["ETag"] and alpha_pack[2] != pricing_pack[2]
    assert html[1]["Content-Type"].startswith("text/html")
    assert markdown[1]["Content-Type"].startswith("text/markdown")


def test_keys_cookies_and_errors_always_reach_django(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    for _ in range(2):
        call(app, "/t/alpha/api/context?topic=token", authorization="Bearer nope")
        call(app, "/t/alpha/api/context?topic=token", cookie="sessionid=x")
        call(app, "/t/alpha/api/entries/AL-999")
        call(app, "/t/nowhere/llms.txt")
    assert django_app.calls == 8


def test_the_rate_limit_still_counts_replayed_answers(
    alpha: Namespace, app: ReplayApp, django_app: CountingDjango, settings: Any
) -> None:
    configure(settings, rate_limit="3/hour")
    answers = [call(app, "/t/alpha/llms.txt") for _ in range(4)]
    assert [status for status, _, _ in answers] == ["200 OK", "200 OK", "200 OK", "429 Too Many Requests"]
    assert answers[1][1]["RateLimit"] != answers[0][1]["RateLimit"], "replayed answers carry their own count"
    assert "Retry-After" in answers[3][1]
    assert django_app.calls == 2  # the first read, and the refusal


def test_answers_that_change_without_a_release_are_not_replayed(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    call(app, "/t/alpha/metrics.json")
    call(app, "/t/alpha/metrics.json")
    assert django_app.calls == 2


def test_a_proxys_request_id_is_kept_and_a_strange_one_replaced(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    through_django = call(app, "/t/alpha/llms.txt", x_request_id="edge-42")
    from_memory = call(app, "/t/alpha/llms.txt", x_request_id="edge-43")
    forged = call(app, "/t/alpha/llms.txt", x_request_id="bad id\nwith a line break")
    assert django_app.calls == 1
    assert through_django[1]["X-Request-ID"] == "edge-42"
    assert from_memory[1]["X-Request-ID"] == "edge-43"
    assert forged[1]["X-Request-ID"] not in ("", "bad id\nwith a line break")


def test_a_range_request_is_never_answered_from_replay_memory(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    whole = call(app, "/t/alpha/robots.txt")
    call(app, "/t/alpha/robots.txt")
    part = call(app, "/t/alpha/robots.txt", range="bytes=0-9")

    assert django_app.calls == 2  # the first read, and the range (the repeat came from memory)
    assert part[0] == "206 Partial Content" and part[2] == whole[2][:10]
