"""The circuit breaker: one failure opens it, one probe after the cool-down, success closes it."""

from __future__ import annotations

from knowledge.resilience.breaker import CLOSED, OPEN, CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_failure_opens_it_and_callers_skip_the_dependency_until_the_cooldown_ends() -> None:
    clock = Clock()
    breaker = CircuitBreaker(name="redis", cooldown=5, clock=clock)
    assert breaker.allow() and breaker.state().state == CLOSED

    assert breaker.failure(TimeoutError("read timed out")) is True
    assert not breaker.allow()
    clock.now += 4.9
    assert not breaker.allow()
    state = breaker.state()
    assert (state.state, state.error, state.failing_since) == (OPEN, "TimeoutError: read timed out", 100.0)


def test_after_the_cooldown_one_caller_probes_and_the_others_keep_failing_fast() -> None:
    clock = Clock()
    breaker = CircuitBreaker(name="redis", cooldown=5, clock=clock)
    breaker.failure("refused")
    clock.now += 5

    assert [breaker.allow(), breaker.allow(), breaker.allow()] == [True, False, False]
    breaker.success()
    assert breaker.allow() and breaker.state() == breaker.state().__class__(CLOSED, "", None)


def test_a_failed_probe_reopens_it_and_the_outage_keeps_its_start() -> None:
    clock = Clock()
    breaker = CircuitBreaker(name="db", cooldown=5, clock=clock)
    breaker.failure("refused")
    clock.now += 5
    assert breaker.allow()

    assert breaker.failure("refused again") is False  # already open: not logged a second time
    assert not breaker.allow()
    assert breaker.state().failing_since == 100.0


def test_a_probe_that_never_reports_back_lets_the_next_caller_probe_a_cooldown_later() -> None:
    clock = Clock()
    breaker = CircuitBreaker(name="db", cooldown=5, clock=clock)
    breaker.failure("refused")
    clock.now += 5
    assert breaker.allow()  # this probe is lost (its caller died)

    clock.now += 4
    assert not breaker.allow()
    clock.now += 1
    assert breaker.allow()
