"""/metrics under gunicorn with two workers in Prometheus multiprocess mode: one scrape counts every worker."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.mcp_bridge.live import live_server
from tests.observe.test_metrics import sample
from tests.worker import wait_for

TOKEN = "scrape-token"
REQUESTS = 24


def test_one_scrape_sums_the_requests_every_worker_answered(tmp_path: Path) -> None:
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"), "EVERGREEN_METRICS_TOKEN": TOKEN}
    config = ("-c", "python:evergreen_site.gunicorn")
    with (
        live_server(tmp_path, extra_env=env, gunicorn_args=config) as server,
        httpx.Client(base_url=server.url, timeout=10) as http,
    ):
        for n in range(REQUESTS):
            http.get("/t/evergreen/api/context", params={"topic": "token budget" if n % 2 else "ETag"})
        auth = {"Authorization": f"Bearer {TOKEN}"}
        route = 'evergreen_requests_total{channel="rest",route="api-context",status="200"}'

        def counted() -> str | None:
            text = http.get("/metrics", headers=auth).text
            return text if sample_or_zero(text, route) >= REQUESTS else None

        text = wait_for(counted, timeout=30, what="both workers' tallies to reach the files")
    assert sample(text, route) == REQUESTS
    assert sample(text, 'evergreen_served_from_memory_total{route="api-context"}') >= REQUESTS - 4
    assert text.count(route) == 1  # one sample summed over the workers' files, not one per worker
    assert list((tmp_path / "prometheus").glob("*.db"))


def sample_or_zero(text: str, line_start: str) -> float:
    try:
        return sample(text, line_start)
    except AssertionError:
        return 0.0
