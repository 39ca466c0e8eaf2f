"""Publishing at scale: the bench's own Evergreen database, import and build times, publish latency.

`BenchStack` is the production-like Evergreen every server-side part of the bench runs on: its own
PostgreSQL database (dropped and recreated), its own Redis database, DEBUG off, the rate limiter on (as
deployments run it, with a limit too high to trip: BENCH_RATE_LIMIT), the
demo namespace and synthetic namespaces imported with `manage.py import_entries`. This module's own
measurement is the time from publishing a one-entry change in a 10,000-entry namespace (the real
services: a Celery worker on Redis, PostgreSQL) to seeing it on `/api/context` of a running gunicorn.

Run: .venv/bin/python -m bench.publish [--quick]   (progress on stderr, the table on stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.redisdb import redis_flush_owned
from evergreen_site.settings.env import Env
from evergreen_site.settings.evergreen import bench_services

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# EVERGREEN_BENCH_DATABASE_URL and EVERGREEN_BENCH_REDIS_URL (README: Configuration); never a shared database.
SERVICES = bench_services(Env())
BENCH_DATABASE = SERVICES.database
POSTGRES = SERVICES.postgres
BENCH_REDIS = SERVICES.redis_url
DEMO = "evergreen"
PUBLISH_SIZE = 10_000
# The tables a release's storage grows, by the name the report gives them.
RELEASE_TABLES = {
    "chunks": "knowledge.ArtifactBlob",
    "parts": "knowledge.ArtifactPart",
    "files": "knowledge.Artifact",
    "releases": "knowledge.Release",
}
POLL_SECONDS = 0.02
VISIBLE_TIMEOUT = 300.0
CHILD_FLAG = "--child"
# The limiter is on in every deployment, so it is on in every measurement; the limit never trips (wrk is one client).
BENCH_RATE_LIMIT = "100000000/min"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def slug_for(size: int) -> str:
    return f"syn{size // 1000}k" if size % 1000 == 0 else f"syn{size}"


@dataclass(frozen=True)
class NamespaceTimes:
    """How long `import_entries` and the first full release build took for one synthetic namespace."""

    entries: int
    import_seconds: float
    build_seconds: float
    build_peak_mib: float = 0.0  # the building process's peak resident memory (ru_maxrss), Django included


@dataclass
class BenchStack:
    """Evergreen on PostgreSQL and Redis with production-like settings, prepared once per bench run."""

    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    namespaces: dict[int, NamespaceTimes] = field(default_factory=dict)
    prepared: bool = False

    @classmethod
    def create(cls, workdir: Path) -> BenchStack:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base",
            "DATABASE_URL": f"{POSTGRES}/{BENCH_DATABASE}",
            "REDIS_URL": BENCH_REDIS,
            "EVERGREEN_DEBUG": "0",
            "EVERGREEN_SECRET_KEY": secrets.token_urlsafe(50),
            "EVERGREEN_SSL_REDIRECT": "0",
            "EVERGREEN_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "EVERGREEN_RATE_LIMIT": BENCH_RATE_LIMIT,
            "EVERGREEN_LOG_LEVEL": "WARNING",
            # Its own build caches: they are kept by namespace id, so another bench's namespace of the same id
            # on this host (benches running side by side) replaces the base file, and each save writes it whole.
            "EVERGREEN_BUILD_CACHE_DIR": str(workdir / "build-cache"),
            "PYTHONPATH": str(ROOT),
        }
        return cls(workdir=workdir, env=env)

    def prepare(self) -> None:
        """Drop and recreate the bench database and Redis database; migrate; load and build the demo."""
        if self.prepared:
            return
        import psycopg

        log(f"stack: recreating PostgreSQL database {BENCH_DATABASE} and emptying Redis {BENCH_REDIS}")
        redis_flush_owned(BENCH_REDIS)  # first: refuses a Redis database someone else uses, before any change
        with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
            connection.execute(f"CREATE DATABASE {BENCH_DATABASE}")
        log("stack: migrate, load_demo")
        self.manage("migrate", "--noinput", "-v", "0")
        self.manage("load_demo", "--base-url", "http://127.0.0.1")
        self.child("build", DEMO)
        self.prepared = True

    def manage(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def child(self, action: str, *args: str) -> dict[str, Any]:
        """Run one of this module's Django-side actions in a fresh process on the bench database."""
        done = subprocess.run(
            [PYTHON, "-m", "bench.publish", CHILD_FLAG, action, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"bench.publish {action} failed:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result

    def synthetic(self, size: int) -> NamespaceTimes:
        """Import a `size`-entry synthetic namespace through import_entries and build its release (once)."""
        self.prepare()
        if size in self.namespaces:
            return self.namespaces[size]
        from bench.synthetic import build_namespace

        slug = slug_for(size)
        path = self.workdir / f"{slug}.jsonl"
        log(f"stack: writing {size} synthetic entries")
        with path.open("w", encoding="utf-8") as lines:
            for number, document in enumerate(build_namespace(size), start=1):
                line = {
                    "id": f"SYN-{number:06d}",
                    "category": "fact",
                    "title": document.title or f"Entry {number}",
                    "body": document.body,
                    "confidence": document.confidence,
                    "updated": "2026-09-01",
                }
                lines.write(json.dumps(line, ensure_ascii=False) + "\n")
        log(f"stack: import_entries {slug} ({size} entries)")
        started = time.perf_counter()
        # The import's own build request goes to an in-process broker and is dropped: the build is
        # timed on its own below, as `manage.py build_release` would run it.
        self.manage(
            "import_entries",
            "--namespace",
            slug,
            "--create-namespace",
            "--prefix",
            "SYN",
            "--publish",
            "--acknowledge-warnings",
            "Synthetic benchmark namespace built from the shared datasets.",
            str(path),
            env={"CELERY_BROKER_URL": "memory://"},
        )
        imported = time.perf_counter() - started
        log(f"stack: building the release of {slug}")
        built = self.child("build", slug)
        times = NamespaceTimes(
            entries=size, import_seconds=imported, build_seconds=built["seconds"], build_peak_mib=built["peak_mib"]
        )
        self.namespaces[size] = times
        return times


@contextmanager
def bench_stack(workdir: Path | None = None) -> Iterator[BenchStack]:
    """A stack in a temporary directory (logs, recordings), removed afterwards."""
    if workdir is not None:
        yield BenchStack.create(workdir)
        return
    with tempfile.TemporaryDirectory(prefix="evergreen-bench-") as directory:
        yield BenchStack.create(Path(directory))


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so the servers and workers a bench started are stopped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def stop_process_group(process: subprocess.Popen[Any], *, timeout: float = 20) -> None:
    """SIGTERM the process group we started, then SIGKILL it if it does not leave in time."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_for(predicate: Any, *, timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


@dataclass(frozen=True)
class Worker:
    process: subprocess.Popen[bytes]
    log: Path

    def child_memory_mib(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) in MiB of the prefork child that runs the builds (0s if there is none)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        if not children:
            return 0.0, 0.0
        status = Path(f"/proc/{children[0]}/status").read_text()
        found = dict(re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.MULTILINE))
        return int(found.get("VmRSS", 0)) / 1024, int(found.get("VmHWM", 0)) / 1024


@contextmanager
def celery_worker(stack: BenchStack) -> Iterator[Worker]:
    """A real Celery worker (prefork, one child) on the bench's Redis, as `make worker` runs it."""
    log_path = stack.workdir / "celery.log"
    command = [PYTHON, "-m", "celery", "-A", "evergreen_site", "worker", "--pool", "prefork", "--concurrency", "1"]
    command += ["--loglevel", "INFO", "--without-gossip", "--without-mingle"]
    with log_path.open("ab") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**stack.env, "EVERGREEN_LOG_LEVEL": "INFO"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: b"ready." in log_path.read_bytes(), timeout=60, what="the Celery worker")
        yield Worker(process, log_path)
    finally:
        stop_process_group(process)


@dataclass(frozen=True)
class PublishSample:
    to_visible: float  # commit of the publish -> first /api/context answer that shows the change
    imported: float  # the import service's call that publishes the change, up to its commit
    queued: float  # commit -> the worker starts the build (includes the coalescing delay)
    build: float  # the build in the worker, start to activation (its switch notice, heard by the bench)
    serve: float  # the switch notice -> visible (the web worker's own notice, mapping the release's files)
    analysed: int  # entries the build analysed (the rest came from the worker's analysis cache)
    files_bytes: int  # the new release's files, all of them
    stored_bytes: int  # what storing them added: contents no earlier release of the namespace had
    # What the publish grew the release tables by on disk (rows, indexes, TOAST), per table: the chunks'
    # bytes above, and what `stored_bytes` leaves out (each release's part rows, manifest and metrics).
    table_growth: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PublishReport:
    build: NamespaceTimes
    samples: list[PublishSample]  # the first in a fresh worker (a full build), then incremental ones
    coalesce_seconds: float
    worker_rss_mib: float = 0.0  # the worker's build process after the rounds (its caches included)
    worker_peak_mib: float = 0.0  # its peak: the first build of the namespace, a full one, at most

    @property
    def peak_build_mib(self) -> float:
        """The most any build of this namespace held: the bench's own full build or the worker's."""
        return max(self.build.build_peak_mib, self.worker_peak_mib)

    def database_growth(self) -> float:
        """The median growth of the release tables on disk per publish (PublishSample.table_growth)."""
        return statistics.median(sum(s.table_growth.values()) for s in self.samples)

    @property
    def one_entry_build(self) -> float:
        return self.median("build")

    def median(self, name: str, *, first: bool = False) -> float:
        samples = self.samples[:1] if first else self.samples[1:]
        return statistics.median(getattr(sample, name) for sample in samples)


def _visible(port: int, slug: str, marker: str) -> bool:
    from bench.http import fetch

    target = f"/t/{slug}/api/context?" + urllib.parse.urlencode({"topic": marker, "budget": 8000})
    status, _, _, body = fetch(port, target)
    # The topic is echoed in `query`: look for the marker in the entries only.
    return status == 200 and any(marker in entry["body"] for entry in json.loads(body)["entries"])


ANALYSED = re.compile(rb"Release of (\S+): (\d+) entries analysed, (\d+) reused")


def _analysed(log_path: Path, slug: str) -> int:
    """How many entries the worker's latest build of `slug` analysed (from its INFO log)."""
    found = [int(m[2]) for m in ANALYSED.finditer(log_path.read_bytes()) if m[1].decode() == slug]
    return found[-1] if found else -1


@dataclass
class SwitchNotices:
    """When the bench's own subscriber heard each release switch announced (knowledge.selectors.release_notices):
    the activation as the web workers see it, after its commit (a build's record is finished after that)."""

    heard: list[tuple[float, int]] = field(default_factory=list)  # (time.time(), namespace id)

    def last(self, namespace_id: int, *, since: float) -> float:
        found = [at for at, heard_id in self.heard if heard_id == namespace_id and at >= since]
        if not found:
            raise RuntimeError(f"no release switch of namespace {namespace_id} was announced")
        return found[-1]


@contextmanager
def switch_notices(redis_url: str) -> Iterator[SwitchNotices]:
    import threading

    import redis

    from knowledge.selectors.release_notices import switch_channel

    client = redis.Redis.from_url(redis_url)
    subscription = client.pubsub(ignore_subscribe_messages=True)
    subscription.subscribe(switch_channel(client))
    notices, stopping = SwitchNotices(), threading.Event()

    def listen() -> None:
        while not stopping.is_set():
            message = subscription.get_message(timeout=0.2)
            if message is not None:
                notices.heard.append((time.time(), int(message["data"])))

    thread = threading.Thread(target=listen, name="bench-switch-notices", daemon=True)
    thread.start()
    try:
        yield notices
    finally:
        stopping.set()
        thread.join()
        subscription.close()
        client.close()


def measure_publish(stack: BenchStack, *, rounds: int, size: int = PUBLISH_SIZE) -> PublishReport:
    """Publish a one-entry change `rounds` times and time each until /api/context shows it."""
    from bench.http import gunicorn

    times = stack.synthetic(size)
    slug = slug_for(size)
    samples: list[PublishSample] = []
    tables = stack.child("release-tables")
    with (
        celery_worker(stack) as worker,
        gunicorn(stack, "evergreen_site.wsgi", workers=2, log="publish") as server,
        switch_notices(BENCH_REDIS) as notices,
    ):
        for warm in range(4):  # both web workers load the release before the clock starts
            _visible(server.port, slug, f"warmup{warm}")
        for attempt in range(rounds):
            marker = f"evergreenpublishmarker{attempt}x{secrets.token_hex(4)}"
            log(f"publish: one-entry change {attempt + 1}/{rounds} in {size} entries")
            published = stack.child("publish", slug, f"SYN-{attempt + 1:06d}", marker)
            wait_for(
                lambda m=marker: _visible(server.port, slug, m),
                timeout=VISIBLE_TIMEOUT,
                what="the change on /api/context",
                interval=POLL_SECONDS,
            )
            visible = time.time()
            build = stack.child("last-build", slug)
            grown = {name: size - tables[name] for name, size in build["tables"].items()}
            tables = build["tables"]
            activated = notices.last(build["namespace_id"], since=build["started"])
            samples.append(
                PublishSample(
                    to_visible=visible - published["committed"],
                    imported=published["seconds"],
                    queued=build["started"] - published["committed"],
                    build=activated - build["started"],
                    serve=visible - activated,
                    analysed=_analysed(worker.log, slug),
                    files_bytes=build["files_bytes"],
                    stored_bytes=build["stored_bytes"],
                    table_growth=grown,
                )
            )
            log(f"publish: visible after {samples[-1].to_visible:.2f} s (build {samples[-1].build:.2f} s)")
        rss, peak = worker.child_memory_mib()
    return PublishReport(
        build=times,
        samples=samples,
        coalesce_seconds=_coalesce_seconds(),
        worker_rss_mib=rss,
        worker_peak_mib=peak,
    )


def _coalesce_seconds() -> float:
    from evergreen_site.settings.evergreen import EvergreenSettings

    return float(os.environ.get("EVERGREEN_BUILD_COALESCE_SECONDS", EvergreenSettings().build_coalesce_seconds))


def format_publish(report: PublishReport) -> str:
    b = report.build
    lines = [
        f"{'namespace':>10} {'import s':>9} {'full build s':>12} {'build peak MiB':>14}",
        f"{b.entries:>10} {b.import_seconds:>9.1f} {b.build_seconds:>12.1f} {b.build_peak_mib:>14.0f}",
        "",
        f"one-entry change in {b.entries} entries, published through the import service (seconds):",
        f"{'publish':28} {'import':>7} {'to visible':>10} {'queued':>7} {'build':>7} {'serve':>7} {'analysed':>8}",
    ]
    for label, first in (("first in a fresh worker", True), (f"next {len(report.samples) - 1} (median)", False)):
        analysed = report.samples[0].analysed if first else max(s.analysed for s in report.samples[1:])
        imported, visible, queued, build, serve = (
            report.median(name, first=first) for name in ("imported", "to_visible", "queued", "build", "serve")
        )
        lines.append(
            f"{label:28} {imported:>7.2f} {visible:>10.2f} {queued:>7.2f} {build:>7.2f} {serve:>7.2f} {analysed:>8}"
        )
    growth = statistics.median(s.stored_bytes for s in report.samples)
    files = statistics.median(s.files_bytes for s in report.samples)
    lines.append(
        f"release storage growth per publish (median): {growth / 1e6:.2f} MB stored of {files / 1e6:.2f} MB of "
        f"files ({growth / files:.0%}; files are shared between releases by content hash)"
    )
    growth_by_table = {
        name: statistics.median(s.table_growth.get(name, 0) for s in report.samples) for name in RELEASE_TABLES
    }
    lines.append(
        f"release tables' growth on disk per publish (median): {report.database_growth() / 1e6:.2f} MB ("
        + ", ".join(f"{name} {size / 1e6:.2f}" for name, size in growth_by_table.items())
        + "; rows, indexes and TOAST: the chunks above, and each release's part rows, manifest and metrics)"
    )
    lines.append(
        f"one-entry build (median) / full build: {report.one_entry_build:.2f} s / {b.build_seconds:.2f} s "
        f"({report.one_entry_build / b.build_seconds:.2f}x)"
    )
    lines.append(
        f"worker's build process: {report.worker_rss_mib:.0f} MiB resident after the rounds (its caches), "
        f"peak {report.worker_peak_mib:.0f} MiB (its first, full build)"
    )
    lines.append(
        "(import = the import service's call with the one reviewed line, up to its commit, from which the rest "
        f"count; queued includes EVERGREEN_BUILD_COALESCE_SECONDS={report.coalesce_seconds:g}; build ends at the "
        "switch's notice, as the bench heard it; serve = from that notice to the answer: the web worker's own "
        "notice and mapping the release, whose files the build wrote; analysed = entries not reused from the worker's "
        "analysis cache)"
    )
    return "\n".join(lines)


# -- Django-side actions, each run in a fresh process by BenchStack.child ------------------------


def _child_build(slug: str) -> dict[str, Any]:
    from knowledge.models import Namespace
    from knowledge.services.heap import heap_mmap_threshold_set
    from knowledge.services.releases import release_build

    heap_mmap_threshold_set()  # as manage.py build_release and a Celery worker do
    namespace = Namespace.objects.get(slug=slug)
    started = time.perf_counter()
    outcome = release_build(namespace_id=namespace.pk)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    return {"seconds": time.perf_counter() - started, "created": outcome.created, "peak_mib": peak_mib}


def _child_publish(slug: str, entry_id: str, marker: str) -> dict[str, Any]:
    """A one-entry change published through the import service (one reviewed line), as an editor's batch."""
    from knowledge.models import Namespace
    from knowledge.services.imports import entries_import, entries_parse

    line = {"id": entry_id, "category": "fact", "title": f"Changed {entry_id}", "body": f"Now about {marker}."}
    items = entries_parse([json.dumps(line)])
    started = time.perf_counter()
    # No person: recorded as the system actor, like any set-up import.
    report = entries_import(namespace=Namespace.objects.get(slug=slug), items=items, actor=None, publish=True)
    return {"committed": time.time(), "seconds": time.perf_counter() - started, "changed": report.changed}


def _child_release_tables() -> dict[str, int]:
    """The bytes on disk of each table a release is stored in (RELEASE_TABLES): heap, indexes and TOAST."""
    from django.apps import apps
    from django.db import connection

    with connection.cursor() as cursor:
        sizes = {}
        for name, model in RELEASE_TABLES.items():
            cursor.execute("SELECT pg_total_relation_size(%s::regclass)", [apps.get_model(model)._meta.db_table])
            sizes[name] = int(cursor.fetchone()[0])
    return sizes


def _child_last_build(slug: str) -> dict[str, Any]:
    from django.db.models import Sum

    from knowledge.models import Artifact, ArtifactBlob, ArtifactPart, ReleaseBuild

    build = ReleaseBuild.objects.filter(namespace__slug=slug, release__isnull=False).order_by("-pk").first()
    assert build is not None and build.finished_at is not None and build.release is not None
    release = build.release
    files = Artifact.objects.filter(release=release)
    parts = ArtifactPart.objects.filter(artifact__release__namespace=release.namespace)
    earlier = parts.filter(artifact__release__sequence__lt=release.sequence).values("blob")
    mine = parts.filter(artifact__release=release).values("blob")
    stored = ArtifactBlob.objects.filter(pk__in=mine).exclude(pk__in=earlier)
    return {
        "namespace_id": release.namespace_id,
        "started": build.started_at.timestamp(),
        "files_bytes": files.aggregate(total=Sum("size"))["total"] or 0,
        "stored_bytes": stored.aggregate(total=Sum("size"))["total"] or 0,
        "tables": _child_release_tables(),
    }


CHILD_ACTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "build": _child_build,
    "publish": _child_publish,
    "last-build": _child_last_build,
    "release-tables": _child_release_tables,
}


def _run_child(action: str, args: Sequence[str]) -> int:
    import django

    django.setup()
    print(json.dumps(CHILD_ACTIONS[action](*args)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [CHILD_FLAG]:
        return _run_child(argv[1], argv[2:])
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="three publishes instead of six")
    parser.add_argument("--size", type=int, default=PUBLISH_SIZE, help="entries of the namespace (default 10000)")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    with bench_stack() as stack:
        print(format_publish(measure_publish(stack, rounds=3 if args.quick else 6, size=args.size)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
