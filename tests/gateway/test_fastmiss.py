"""gateway.fastmiss: /api/context misses answered in front of Django, exactly as Django answers them."""

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

PER_REQUEST = {"X-Request-ID", "RateLimit"}
TOPICS = ("alpha", "pricing", "token budget", "tuesday", "nothing-matches-this")


def comparable(answer: tuple[str, dict[str, str], bytes]) -> tuple[str, dict[str, str], bytes]:
    status, headers, body = answer
    return status, {name: value for name, value in headers.items() if name not in PER_REQUEST}, body


def test_a_new_topic_on_a_route_django_answered_is_answered_without_django_and_identically(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    call(app, "/t/alpha/api/context?topic=first")  # Django answers, and the route's shape is learnt
    fast = [call(app, f"/t/alpha/api/context?topic={topic}&budget=900") for topic in TOPICS]
    assert django_app.calls == 1

    through_django = [call(django_app, f"/t/alpha/api/context?topic={topic}&budget=900") for topic in TOPICS]
    assert django_app.calls == 1 + len(TOPICS)
    assert [comparable(answer) for answer in fast] == [comparable(answer) for answer in through_django]
    assert len({answer[1]["ETag"] for answer in fast}) == len(TOPICS)


def test_a_fast_answer_is_replayed_revalidated_and_answers_head(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    call(app, "/t/alpha/api/context?topic=first")
    fast = call(app, "/t/alpha/api/context?topic=pricing")
    again = call(app, "/t/alpha/api/context?topic=pricing")
    revalidated = call(app, "/t/alpha/api/context?topic=token", if_none_match=fast[1]["ETag"])
    head = call(app, "/t/alpha/api/context?topic=tuesday", method="HEAD")

    assert django_app.calls == 1
    assert comparable(again) == comparable(fast)
    assert revalidated[0] == "200 OK"  # another topic: another ETag
    assert call(app, "/t/alpha/api/context?topic=pricing", if_none_match=fast[1]["ETag"])[0] == "304 Not Modified"
    assert head[0] == "200 OK" and head[2] == b"" and int(head[1]["Content-Length"]) > 0


@pytest.mark.parametrize(
    "query",
    [
        "topic=x&budget=lots",  # a 400 with its code: Django's to give
        "topic=x&budget=1&budget=2",
        "topic=%FF%FE",  # not UTF-8
        "topic=alpha&explain=1",
        "topic=alpha&release=1",
    ],
)
def test_what_the_view_refuses_or_treats_apart_goes_to_django(
    served: Namespace, app: ReplayApp, django_app: CountingDjango, query: str
) -> None:
    call(app, "/t/alpha/api/context?topic=first")
    call(app, f"/t/alpha/api/context?{query}")
    assert django_app.calls == 2


def test_a_new_release_is_answered_by_django_with_its_own_headers(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    first = call(app, "/t/alpha/api/context?topic=first")
    publish(served, [*alpha_rows(), {**alpha_rows()[0], "id": "AL-003", "title": "Alpha three"}], now=BUILT_AT)
    serving_caches_clear()  # as the one-second namespace cache would expire
    after = call(app, "/t/alpha/api/context?topic=three")

    assert django_app.calls == 2
    assert after[1]["Evergreen-Release"] != first[1]["Evergreen-Release"]
    assert b"AL-003" in after[2]
    call(app, "/t/alpha/api/context?topic=alpha")  # the new release's shape is learnt again
    assert django_app.calls == 2


def test_the_rate_limit_counts_fast_answers_and_django_refuses_past_it(
    alpha: Namespace, app: ReplayApp, django_app: CountingDjango, settings: Any
) -> None:
    configure(settings, rate_limit="3/hour")
    answers = [call(app, f"/t/alpha/api/context?topic=t{n}") for n in range(4)]

    assert [status for status, _, _ in answers] == ["200 OK"] * 3 + ["429 Too Many Requests"]
    assert [headers["RateLimit"].split(";")[1] for _, headers, _ in answers[:3]] == ["r=2", "r=1", "r=0"]
    assert django_app.calls == 2  # the first answer, which taught the shape, and the refusal


def test_other_routes_and_hosts_are_never_answered_from_a_context_shape(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    call(app, "/t/alpha/api/context?topic=first")
    call(app, "/t/alpha/api/changes?since=1")
    call(app, "/t/alpha/api/context?topic=second", accept="application/json")  # another Accept: another shape
    assert django_app.calls == 3
