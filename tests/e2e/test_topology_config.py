"""The topology harness's reading of the deployment files, without starting anything: nginx.conf rendered for
loopback passes `nginx -t` on the host's nginx, drift fails loudly, and compose's commands keep their flags."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.core.sidecars import SidecarUnavailable
from tests.support.topology_compose import NGINX_ADDRESS, compose_default, interpolate, plan_processes
from tests.support.topology_nginx import (
    NGINX_CONF,
    ConfigDrift,
    NginxSite,
    mime_types,
    nginx_binary,
    render,
    write_config,
)


def _site(tmp_path: Path) -> NginxSite:
    return NginxSite(listen="127.0.0.1:18080", upstream="127.0.0.1:18000", bind=NGINX_ADDRESS,
                     static_parent=tmp_path / "data", prefix=tmp_path / "nginx")


def _nginx() -> str:
    try:
        return nginx_binary()
    except SidecarUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"nginx is required under CI=true: {exc}", pytrace=False)
        pytest.skip(str(exc))


def test_the_rendered_config_starts_on_the_hosts_nginx(tmp_path: Path) -> None:
    site = _site(tmp_path)
    site.prefix.mkdir()
    conf = write_config(site, _nginx()).read_text()  # raises unless `nginx -t` accepts it
    assert "server  127.0.0.1:18000;" in conf and "listen  127.0.0.1:18080  default_server;" in conf
    assert f"proxy_bind  {NGINX_ADDRESS};" in conf
    assert "127.0.0.11" not in conf and "resolve;" not in conf and "user  nginx;" not in conf


def test_the_compose_config_keeps_its_docker_lines() -> None:
    conf = NGINX_CONF.read_text()  # nginx:1.27-alpine: its `nginx` user, Docker's DNS, a re-resolved upstream
    for line in ("user  nginx;", "resolver  127.0.0.11  valid=10s  ipv6=off;", "server  web:8000  resolve;"):
        assert conf.count(line) == 1, line


def test_a_drifted_config_fails_loudly(tmp_path: Path) -> None:
    drifted = NGINX_CONF.read_text().replace("server  web:8000  resolve;", "server  app:8000  resolve;")
    with pytest.raises(ConfigDrift, match="web:8000"):
        render(_site(tmp_path), mime_types(_nginx()), drifted)


def test_compose_variables_interpolate_as_compose_does() -> None:
    assert interpolate("${A:-two}/${B}/$$", {"B": "b"}) == "two/b/$"
    assert interpolate("${A:-two}", {"A": "one"}) == "one"
    with pytest.raises(KeyError, match="set it"):
        interpolate("${A:?set it}", {})


def test_the_plan_runs_composes_commands_with_loopback_addresses(tmp_path: Path) -> None:
    addresses = {"DATABASE_URL": "postgresql://x@127.0.0.1:1/db", "REDIS_URL": "redis://127.0.0.1:2/1",
                 "MILVUS_URI": "http://127.0.0.1:3", "OPENGURU_DATA_DIR": str(tmp_path)}
    plan = plan_processes(tmp_path, 18000, {"DJANGO_SECRET_KEY": "k"}, addresses, {"EXTRA": "1"})
    web = plan.web
    assert web[web.index("--workers") + 1] == compose_default("OPENGURU_WEB_WORKERS")
    assert web[web.index("--host") + 1] == "127.0.0.1" and web[web.index("--port") + 1] == "18000"
    assert "--no-proxy-headers" in web
    assert plan.worker[plan.worker.index("--concurrency") + 1] == compose_default("OPENGURU_WORKER_CONCURRENCY")
    assert str(tmp_path / "celerybeat-schedule") in plan.beat
    assert plan.env["web"]["OPENGURU_TRUSTED_PROXIES"] == f"{NGINX_ADDRESS}/32"
    assert "OPENGURU_TRUSTED_PROXIES" not in plan.env["worker"]
    for name in ("migrate", "web", "worker", "beat"):
        env = plan.env[name]
        assert env["DJANGO_SETTINGS_MODULE"] == "backend.config.settings.production"
        assert {key: env[key] for key in addresses} == addresses and env["EXTRA"] == "1"
    assert "manage.py check --deploy" in plan.migrate[-1] and "collectstatic" in plan.migrate[-1]
