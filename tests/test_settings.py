"""Settings are read once from the environment and refuse bad values with ImproperlyConfigured."""

from __future__ import annotations

import os
import subprocess
import sys
from ipaddress import ip_network
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evergreen_site.settings.env import Env, Rate
from evergreen_site.settings.evergreen import DATASETS_BESIDE_CLONE, EvergreenSettings, bench_services

ROOT = Path(__file__).resolve().parent.parent


def read(**environ: str) -> EvergreenSettings:
    return EvergreenSettings.from_env(Env(environ))


def test_no_variables_give_the_documented_defaults() -> None:
    assert read() == EvergreenSettings()
    assert read().rate_limit == Rate(120, 60)
    assert read().feedback_rate_limit == Rate(20, 3600)
    assert read().datasets == DATASETS_BESIDE_CLONE


def test_values_arrive_typed() -> None:
    config = read(
        EVERGREEN_RATE_LIMIT="30/10s",
        EVERGREEN_TRUSTED_PROXIES="10.0.0.0/8, 127.0.0.1,::1",
        EVERGREEN_MCP_ALLOWED_ORIGINS="https://app.example.com, http://localhost:*",
        EVERGREEN_BUILD_COALESCE_SECONDS="0.5",
        EVERGREEN_DATASETS="/srv/datasets",
    )
    assert config.rate_limit == Rate(30, 10)
    assert config.trusted_proxies == (ip_network("10.0.0.0/8"), ip_network("127.0.0.1/32"), ip_network("::1/128"))
    assert config.mcp_allowed_origins == ("https://app.example.com", "http://localhost:*")
    assert config.build_coalesce_seconds == 0.5
    assert config.datasets == Path("/srv/datasets")


def test_a_blank_value_counts_as_unset() -> None:
    assert read(EVERGREEN_RATE_LIMIT="", EVERGREEN_TRUSTED_PROXIES="  ") == EvergreenSettings()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("EVERGREEN_RATE_LIMIT", "120/minn"),
        ("EVERGREEN_FEEDBACK_RATE_LIMIT", "lots"),
        ("EVERGREEN_TRUSTED_PROXIES", "one"),
        ("EVERGREEN_TRUSTED_PROXIES", "1"),
        ("EVERGREEN_TRUSTED_PROXIES", "10.0.0.0/33"),
        ("EVERGREEN_MCP_MAX_BODY_BYTES", "12"),
        ("EVERGREEN_A2A_TASK_RETENTION_SECONDS", "0"),
        ("EVERGREEN_BUILD_COALESCE_SECONDS", "soon"),
        ("EVERGREEN_BUILD_COALESCE_SECONDS", "nan"),
        ("EVERGREEN_MCP_ALLOWED_ORIGINS", "app.example.com"),
        ("EVERGREEN_REQUEST_LOG_SAMPLE", "2"),
    ],
)
def test_a_bad_value_names_the_variable_and_the_expected_form(name: str, value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=rf"^{name}=.* is not valid: expected "):
        read(**{name: value})


def test_a_bad_flag_is_refused_rather_than_read_as_false() -> None:
    with pytest.raises(ImproperlyConfigured, match="EVERGREEN_DEBUG='flase' is not valid"):
        Env({"EVERGREEN_DEBUG": "flase"}).flag("EVERGREEN_DEBUG", True)


@pytest.mark.parametrize(
    ("name", "value"),
    [("REDIS_URL", "localhost:6379"), ("DATABASE_URL", "mysql://db/evergreen"), ("EVERGREEN_LOG_LEVEL", "LOUD")],
)
def test_the_process_refuses_to_start_on_a_bad_value(name: str, value: str) -> None:
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "evergreen_site.settings.base", name: value}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=environ, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert f"ImproperlyConfigured: {name}=" in done.stderr


def test_the_bench_services_come_from_their_settings() -> None:
    default = bench_services(Env({}))
    own = bench_services(
        Env({"EVERGREEN_BENCH_DATABASE_URL": "postgres://u@db:5433/mine", "EVERGREEN_BENCH_REDIS_URL": "redis://r/7"})
    )

    assert (default.postgres, default.database, default.redis_url) == (
        "postgres://postgres@127.0.0.1:5432",
        "evergreen_bench",
        "redis://127.0.0.1:6379/12",
    )
    assert (own.postgres, own.database, own.redis_url) == ("postgres://u@db:5433", "mine", "redis://r/7")
    with pytest.raises(ImproperlyConfigured, match="EVERGREEN_BENCH_DATABASE_URL"):
        bench_services(Env({"EVERGREEN_BENCH_DATABASE_URL": "postgres://u@db:5433/"}))
    with pytest.raises(ImproperlyConfigured, match="EVERGREEN_BENCH_REDIS_URL"):
        bench_services(Env({"EVERGREEN_BENCH_REDIS_URL": "127.0.0.1:6379"}))
