"""docker-compose.yml agrees with the settings: `manage.py check --deploy` passes with its environment."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from compose_spec import PyCompose

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"


def compose_environment(service: str) -> dict[str, str]:
    """The service's environment with ${VAR:-default} resolved to its default (or a test value)."""
    spec: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    env = spec["services"][service]["environment"]

    def resolve(value: str) -> str:
        def default(match: re.Match[str]) -> str:
            name, op, rest = match["name"], match["op"], match["rest"]
            if op == ":-":
                return rest
            return secrets.token_urlsafe(50) if name == "EVERGREEN_SECRET_KEY" else "compose-test-value"

        return re.sub(r"\$\{(?P<name>\w+)(?P<op>:[-?])(?P<rest>[^}]*)\}", default, str(value))

    return {key: resolve(value) for key, value in env.items()}


def test_compose_puts_nginx_in_front_and_publishes_only_the_proxy() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    assert {"proxy", "postgres", "redis", "migrate", "web", "worker", "beat"} <= set(services)
    assert "gunicorn" in services["web"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "evergreen_site", "worker"]
    assert [name for name, spec in services.items() if "ports" in spec] == ["proxy"]
    assert "./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro" in services["proxy"]["volumes"]
    proxy_address = services["proxy"]["networks"]["backend"]["ipv4_address"]
    assert compose_environment("web")["EVERGREEN_TRUSTED_PROXIES"] == proxy_address


def compose_parsed(text: str) -> Any:
    """The file as docker compose reads it (YAML anchors and `<<` merges resolved), parsed by compose-spec,
    a parser that enforces the Compose specification: unknown keys, values and durations are refused."""
    return PyCompose.from_json(json.dumps(yaml.safe_load(text)))


def test_the_compose_file_follows_the_compose_specification() -> None:
    text = COMPOSE.read_text()
    assert compose_parsed(text).service_names() == [
        "proxy",
        "postgres",
        "redis",
        "cache",
        "migrate",
        "web",
        "worker",
        "beat",
    ]
    # The check can fail: a misspelt key, an unknown restart policy or a bad duration is refused.
    for wrong, refusal in (
        (text.replace('    expose: ["8000"]', '    exposes: ["8000"]'), "`exposes`"),
        (text.replace("restart: unless-stopped", "restart: sometimes", 1), "unknown variant `sometimes`"),
        (text.replace("interval: 10s", "interval: ten", 1), "duration `ten`"),
    ):
        assert wrong != text
        with pytest.raises(ValueError, match=refusal):
            compose_parsed(wrong)


def test_every_long_running_service_restarts_and_has_a_health_check() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, spec in services.items():
        if name == "migrate":
            assert spec["restart"] == "no"  # one-shot
            continue
        assert spec["restart"] == "unless-stopped", name
        assert spec["healthcheck"]["test"], name
    assert services["web"]["healthcheck"]["test"] == ["CMD", "python", "-m", "evergreen_site.healthcheck"]


def test_every_variable_compose_sets_is_read_by_evergreen() -> None:
    """A renamed or misspelt setting in compose would be silently ignored: each name must occur in the code."""
    code = "\n".join(
        path.read_text()
        for package in ("evergreen_site", "knowledge", "gateway")
        for path in (ROOT / package).rglob("*.py")
    )
    for service in ("migrate", "web", "worker", "beat"):
        for name in compose_environment(service):
            assert f'"{name}"' in code, f"{service} sets {name}, which nothing reads"


@pytest.mark.parametrize("service", ["web", "worker", "beat"])
def test_production_settings_pass_the_deploy_check(service: str) -> None:
    env = {**os.environ, **compose_environment(service), "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_compose_settings_reach_the_services() -> None:
    env = compose_environment("web")
    assert env["DATABASE_URL"].startswith("postgres://evergreen:")
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert env["EVERGREEN_CACHE_REDIS_URL"] == "redis://cache:6379/0"
    assert env["EVERGREEN_DEBUG"] == "0"


def redis_options(service: str) -> dict[str, str]:
    """The `--name value` options of a Redis service's command, with ${VAR:-default} resolved to its default."""
    command = [str(part) for part in yaml.safe_load(COMPOSE.read_text())["services"][service]["command"]]
    assert command[0] == "redis-server"
    resolved = [re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", part) for part in command[1:]]
    return {name.removeprefix("--"): value for name, value in zip(resolved[::2], resolved[1::2], strict=True)}


def test_the_reply_cache_has_a_redis_of_its_own_that_evicts_and_the_broker_never_evicts() -> None:
    """maxmemory is per server, so the cache that grows with agents' questions cannot fill the broker's Redis."""
    cache, broker = redis_options("cache"), redis_options("redis")

    assert cache["maxmemory"] == "256mb"
    assert cache["maxmemory-policy"] == "allkeys-lru"
    assert broker["maxmemory-policy"] == "noeviction"  # queued builds and rate windows are never dropped
    assert "cache" in yaml.safe_load(COMPOSE.read_text())["services"]["web"]["depends_on"]


def test_compose_settings_put_replies_on_the_cache_and_the_broker_and_limiter_elsewhere() -> None:
    env = {**os.environ, **compose_environment("web"), "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    script = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.CACHES['replies']['LOCATION'], s.CACHES['default']['LOCATION'], "
        "s.CELERY_BROKER_URL, s.REDIS_URL]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    replies, default, broker, limiter = json.loads(done.stdout.strip().splitlines()[-1])
    assert replies == "redis://cache:6379/0"
    assert default == broker == limiter == "redis://redis:6379/0"


def test_healthz_and_readyz_answer_when_everything_answers(client: Any, db: Any) -> None:
    for path in ("/healthz", "/readyz"):
        response = client.get(path)
        assert response.status_code == 200
        assert response.json() == {
            "status": "ok",
            "database": "ok",
            "cache": "ok",
            "serving": True,
            "releases_in_memory": 0,
        }
        assert response["Cache-Control"] == "no-store"


@pytest.mark.parametrize("method", ["post", "put", "delete", "options"])
def test_healthz_and_readyz_refuse_other_methods_as_every_read_route_does(client: Any, db: Any, method: str) -> None:
    for path in ("/healthz", "/readyz"):
        response = getattr(client, method)(path)
        assert response.status_code == 405
        assert response["Allow"] == "GET, HEAD" and response["Cache-Control"] == "no-store"
        assert response.json()["error"]["code"] == "method_not_allowed"


def test_the_image_copies_everything_the_application_reads() -> None:
    """Every package and data folder the running application imports or reads is in the image."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\S+) ", dockerfile, re.MULTILINE))
    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = {pattern.rstrip("*") for pattern in found["include"]}
    assert packages | {"templates", "manage.py"} <= copied
    assert all((ROOT / source).exists() for source in copied), "the image copies a path the repository lacks"
