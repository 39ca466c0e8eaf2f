"""A Celery worker killed with kill -9 in the middle of a build, under a running gunicorn on private services.

The web keeps serving the last good release the whole time; the unacknowledged build is redelivered
(a short visibility timeout here, so the test need not wait the production hour) and completes once
a worker runs again, and the web then serves the new release.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

from tests.faults.stack import FaultStack, fault_stack
from tests.mcp_bridge.live import run_setup
from tests.worker import celery_worker, kill_hard, wait_for

REDELIVER_QUICKLY = {
    "EVERGREEN_BROKER_VISIBILITY_TIMEOUT": "5",
    "EVERGREEN_BROKER_RESTORE_INTERVAL": "1",
    "EVERGREEN_BROKER_RESTORE_THROTTLE": "1",
}


def builds(stack: FaultStack, status: str) -> int:
    with psycopg.connect(stack.postgres.url) as connection:
        row = connection.execute("SELECT count(*) FROM knowledge_releasebuild WHERE status = %s", [status]).fetchone()
    return int(row[0]) if row else 0


def test_a_worker_killed_mid_build_leaves_the_last_release_serving_and_the_build_completes(tmp_path: Path) -> None:
    with fault_stack(tmp_path) as stack, stack.http() as http:
        worker_env = {"DATABASE_URL": stack.postgres.url, "REDIS_URL": stack.redis.url, **REDELIVER_QUICKLY}
        log = tmp_path / "worker.log"
        before = http.get("/llms.txt")
        assert before.status_code == 200
        # The demo's golden questions stay answered: the coverage penalty keeps eg-q-064 matched across
        # this publish, which moved it off the old fixed floor (tests/knowledge/test_gate_boundary.py).
        new_id = run_setup("publish", stack.env, "Published just before the crash")["id"]

        slow = {**worker_env, "EVERGREEN_BUILD_PAUSE_SECONDS": "600"}
        with celery_worker(log=log, queue="celery", **slow) as worker:
            wait_for(lambda: builds(stack, "running") == 1, what="the build to start")
            kill_hard(worker)

        during = http.get("/llms.txt")
        assert during.status_code == 200 and during.content == before.content
        assert new_id not in during.text

        with celery_worker(log=log, queue="celery", **worker_env):
            wait_for(lambda: new_id in http.get("/llms.txt").text, timeout=180, what="the redelivered build")
        assert builds(stack, "abandoned") == 1
