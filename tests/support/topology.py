"""The production topology without Docker: docker-compose.yml's own commands as processes behind nginx/nginx.conf.

Given PostgreSQL, Redis and a Milvus server (the production pass's, or start_data_stores()), it runs compose's
`migrate` script (check --deploy, migrate, collectstatic, ensure_admin), then `web` (uvicorn with compose's
worker count), two `worker`s, `beat` and nginx with the repository's config, each in its own process group
with its own log. Commands and environment are read from docker-compose.yml; only addresses and paths are
replaced, each replacement checked to match, so a drifting compose file or nginx.conf fails here loudly.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from backend.core.sidecars import Sidecar, free_port, start_milvus_lite, wait_for_port
from tests.support.processes import descendants
from tests.support.sidecars import start_postgres, start_redis
from tests.support.topology_compose import LOOPBACK, NGINX_ADDRESS, REPO, Plan, compose_default, plan_processes
from tests.support.topology_nginx import NginxSite, nginx_argv, nginx_binary, write_config

__all__ = ["DataStores", "StoreUrls", "Topology", "compose_default", "running_topology", "start_data_stores",
           "start_topology"]
_STOP_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class StoreUrls:
    """Where the data stores listen: DATABASE_URL (a server; the topology makes its own database), REDIS_URL,
    MILVUS_URI."""

    database_url: str
    redis_url: str
    milvus_uri: str

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> StoreUrls:
        return cls(environ["DATABASE_URL"], environ["REDIS_URL"], environ["MILVUS_URI"])


@dataclass
class DataStores:
    """Throwaway PostgreSQL, Redis and Milvus (`milvus-lite server`) processes on loopback."""

    sidecars: list[Sidecar]

    @property
    def urls(self) -> StoreUrls:
        postgres, redis, milvus = self.sidecars
        return StoreUrls(postgres.url, redis.url, milvus.url)

    def stop(self) -> None:
        for sidecar in reversed(self.sidecars):
            sidecar.stop()


def start_data_stores(work_dir: Path) -> DataStores:
    """Start the three stores as the production pass does (tests/run.py); SidecarUnavailable if one is missing."""
    started: list[Sidecar] = []
    try:
        started.append(start_postgres(work_dir=work_dir / "pg"))
        started.append(start_redis(work_dir=work_dir / "redis"))
        started.append(start_milvus_lite(data_dir=work_dir / "milvus", log_dir=work_dir))
    except BaseException:
        for sidecar in reversed(started):
            sidecar.stop()
        raise
    return DataStores(started)


@dataclass
class Process:
    """One process of the topology in its own process group, with its own log."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def _spawn(name: str, argv: list[str], env: Mapping[str, str], log: Path) -> Process:
    with log.open("ab") as sink:
        popen = subprocess.Popen(argv, cwd=REPO, env=dict(env), stdin=subprocess.DEVNULL, stdout=sink,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    return Process(name, popen, log)


def _stop_all(processes: list[Process], timeout: float) -> None:
    """SIGTERM every leader at once, as `docker compose stop` does (uvicorn drains its workers, Celery finishes its
    tasks), then SIGKILL each process group: what is left after `timeout`, and children the leader left behind."""
    for process in processes:
        if process.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.popen.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.popen.pid, signal.SIGKILL)
        process.popen.wait()


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _wait_for_log(process: Process, marker: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while marker not in process.log_text():
        if process.popen.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{process.name} never logged {marker!r} (exit {process.popen.poll()}):\n"
                                 + _tail(process.log_text()))
        time.sleep(0.1)


def _http_status(url: str) -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


@dataclass
class Topology:
    """A running topology: nginx's URL (what clients use), web's own URL, the processes and their logs."""

    nginx_url: str
    web_url: str
    data_dir: Path
    database_url: str
    redis_url: str
    admin_username: str
    admin_password: str
    site: NginxSite
    env: dict[str, dict[str, str]]
    processes: dict[str, Process] = field(default_factory=dict)
    nginx_address: str = NGINX_ADDRESS
    _on_stop: list[Any] = field(default_factory=list)

    @property
    def url(self) -> str:
        """Where clients go: nginx."""
        return self.nginx_url

    def pids(self) -> list[int]:
        """Every process of the topology (nginx, web, workers, beat) and their children; not the data stores."""
        return [pid for process in self.processes.values() for pid in descendants(process.popen.pid)]

    @property
    def logs(self) -> dict[str, Path]:
        """Every log of the run: one per process, plus nginx's access log."""
        return {**{name: p.log for name, p in self.processes.items()}, "nginx-access": self.site.access_log}

    def log_text(self, name: str) -> str:
        path = self.logs[name]
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_ready(self, timeout: float = 120) -> None:
        """web's and nginx's ports, /healthz 200 through nginx, every worker `ready.`, beat started."""
        deadline = time.monotonic() + timeout
        for name, url in (("web", self.web_url), ("nginx", self.nginx_url)):
            process, port = self.processes[name], urlsplit(url).port or 0
            wait_for_port(LOOPBACK, port, timeout=timeout, proc=process.popen, log_path=process.log)
        while _http_status(f"{self.nginx_url}/healthz") != 200:
            # uvicorn keeps its port and restarts a worker that died (an app that fails to import): say so now.
            if time.monotonic() > deadline or re.search(r"Child process \[\d+\] died", self.log_text("web")):
                raise AssertionError("/healthz through nginx did not answer 200:\n" + _tail(self.log_text("web")))
            time.sleep(0.2)
        for name, process in self.processes.items():
            if name.startswith("worker"):
                _wait_for_log(process, " ready.", max(1.0, deadline - time.monotonic()))
        _wait_for_log(self.processes["beat"], "beat: Starting...", max(1.0, deadline - time.monotonic()))
        for bot, line in (("slack", "Slack Socket Mode process ready"), ("discord", "Discord listener ready")):
            if bot in self.processes:
                _wait_for_log(self.processes[bot], line, max(1.0, deadline - time.monotonic()))

    def manage(self, *args: str, timeout: float = 120) -> str:
        """manage.py with the workers' environment (as `docker compose run worker python manage.py …`)."""
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env["worker"],
                              capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def web_worker_pids(self) -> list[int]:
        """The uvicorn worker processes (children of the uvicorn leader; not multiprocessing's resource tracker)."""
        return _children(self.processes["web"].popen.pid, b"spawn_main")

    def web_connections(self) -> dict[int, set[str]]:
        """Per uvicorn worker pid, the socket inodes of its established connections from nginx (/proc/net/tcp)."""
        local = f"{_hex_ip(LOOPBACK)}:{urlsplit(self.web_url).port:04X}"
        inodes = set()
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()  # sl local remote state … inode (field 9)
            if fields[1] == local and fields[2].startswith(_hex_ip(self.nginx_address) + ":") and fields[3] == "01":
                inodes.add(fields[9])
        held: dict[int, set[str]] = {}
        for pid in self.web_worker_pids():
            held[pid] = set()
            with contextlib.suppress(OSError):
                for fd in Path(f"/proc/{pid}/fd").iterdir():
                    with contextlib.suppress(OSError):
                        target = os.readlink(fd)
                        if target.startswith("socket:[") and target[8:-1] in inodes:
                            held[pid].add(target[8:-1])
        return held

    def stop(self, timeout: float = _STOP_TIMEOUT_S) -> None:
        """SIGTERM every process at once, SIGKILL what outlives `timeout`, then drop the topology's database."""
        order = ["nginx", "web", "beat", "slack", "discord",
                 *sorted(n for n in self.processes if n.startswith("worker"))]
        _stop_all([self.processes[name] for name in order if name in self.processes], timeout)
        for callback in reversed(self._on_stop):
            callback()


def _hex_ip(address: str) -> str:
    """An IPv4 address as /proc/net/tcp writes it (host byte order, little-endian here)."""
    return socket.inet_aton(address)[::-1].hex().upper()


def _children(pid: int, marker: bytes) -> list[int]:
    """Live child processes of `pid` whose command line holds `marker`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z" and marker in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
    return sorted(found)


def _own_database(server_url: str, name: str) -> tuple[str, Any]:
    """A fresh database on the PostgreSQL server, and a callback that drops it."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    def drop() -> None:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}")), drop


def _own_redis_db(url: str, db: int) -> str:
    """The same Redis server, database `db` of this test process's block, emptied: counters, locks and the
    queue of this topology only."""
    import redis

    own = urlunsplit(urlsplit(url)._replace(path=f"/{redis_db_number(db)}"))
    redis.Redis.from_url(own).flushdb()
    return own


def redis_db_number(db: int) -> int:
    """Database `db` of the block this test process keeps to on a Redis server shared by parallel test
    processes (backend/config/settings/test.py)."""
    from django.conf import settings

    return int(getattr(settings, "TEST_REDIS_DB_BASE", 0)) + db


def _admin(log: str) -> tuple[str, str]:
    found = dict(re.findall(r"^\s*(username|password): (\S+)$", log, re.M))
    if set(found) != {"username", "password"}:
        raise AssertionError(f"ensure_admin printed no first administrator:\n{_tail(log)}")
    return found["username"], found["password"]


def start_topology(work_dir: Path, stores: StoreUrls, *, env: Mapping[str, str] | None = None,
                   web_workers: int | None = None, celery_workers: int = 2, redis_db: int = 1,
                   slack: bool = False, discord: bool = False, timeout: float = 180) -> Topology:
    """Run compose's migrate, then web, `celery_workers` workers, beat and nginx; return once all are ready.

    `env` adds variables to every app process (as .env would: an LLM endpoint, a rate limit). `web_workers`
    overrides compose's OPENGURU_WEB_WORKERS default; `slack` and `discord` also run compose's Slack
    Socket Mode and Discord listener services. The topology uses its own PostgreSQL database (dropped
    by stop()), Redis database `redis_db` (emptied first) and Milvus collection prefix.
    """
    data_dir, logs = work_dir / "data", work_dir / "logs"
    for directory in (data_dir, logs, work_dir / "nginx"):
        directory.mkdir(parents=True, exist_ok=True)
    tag = secrets.token_hex(4)
    database_url, drop_database = _own_database(stores.database_url, f"topology_{tag}")
    redis_url = _own_redis_db(stores.redis_url, redis_db)
    addresses = {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "MILVUS_URI": stores.milvus_uri,
                 "OPENGURU_DATA_DIR": str(data_dir)}
    extra = {"OPENGURU_COLLECTION_PREFIX": f"topo{tag}_", **(env or {})}
    # What an operator's .env holds: a secret, and plain-HTTP cookies (nothing in front terminates TLS here).
    dotenv = {"DJANGO_SECRET_KEY": secrets.token_urlsafe(50), "DJANGO_SECURE_COOKIES": "false",
              **({"OPENGURU_WEB_WORKERS": str(web_workers)} if web_workers else {})}
    web_port, nginx_port = free_port(), free_port()
    plan = plan_processes(data_dir, web_port, dotenv, addresses, extra)
    migrate = _spawn("migrate", plan.migrate, plan.env["migrate"], logs / "migrate.log")
    try:
        status = migrate.popen.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop_all([migrate], 5)
        raise
    if status != 0:
        drop_database()
        raise AssertionError(f"compose's migrate script failed ({status}):\n{_tail(migrate.log_text())}")
    site = NginxSite(listen=f"{LOOPBACK}:{nginx_port}", upstream=f"{LOOPBACK}:{web_port}", bind=NGINX_ADDRESS,
                     static_parent=data_dir, prefix=work_dir / "nginx")
    topology = Topology(f"http://{LOOPBACK}:{nginx_port}", f"http://{LOOPBACK}:{web_port}", data_dir, database_url,
                        redis_url, *_admin(migrate.log_text()), site, plan.env, _on_stop=[drop_database])
    try:
        _start_processes(topology, plan, celery_workers, logs, bots={"slack": slack, "discord": discord})
        topology.wait_ready(timeout)
    except BaseException:
        topology.stop(timeout=5)
        raise
    return topology


def _start_processes(topology: Topology, plan: Plan, celery_workers: int, logs: Path, *,
                     bots: Mapping[str, bool]) -> None:
    binary = nginx_binary()
    write_config(topology.site, binary)
    spawned = topology.processes
    spawned["web"] = _spawn("web", plan.web, plan.env["web"], logs / "web.log")
    for number in range(1, celery_workers + 1):
        # Containers have distinct host names; on one host each worker needs its own node name.
        argv = [*plan.worker, "--hostname", f"worker{number}@%h"]
        spawned[f"worker{number}"] = _spawn(f"worker{number}", argv, plan.env["worker"], logs / f"worker{number}.log")
    spawned["beat"] = _spawn("beat", plan.beat, plan.env["beat"], logs / "beat.log")
    for bot, argv in (("slack", plan.slack), ("discord", plan.discord)):
        if bots.get(bot):
            spawned[bot] = _spawn(bot, argv, plan.env[bot], logs / f"{bot}.log")
    spawned["nginx"] = _spawn("nginx", nginx_argv(binary, topology.site), {"PATH": os.environ.get("PATH", "")},
                              topology.site.prefix / "nginx.out")


@contextmanager
def running_topology(work_dir: Path, *, env: Mapping[str, str] | None = None, stores: StoreUrls | None = None,
                     **options: Any) -> Iterator[Topology]:
    """start_data_stores() (unless `stores` names running ones), then start_topology(); all stopped afterwards."""
    with contextlib.ExitStack() as stack:
        if stores is None:
            started = start_data_stores(work_dir / "stores")
            stack.callback(started.stop)
            stores = started.urls
        topology = start_topology(work_dir / "topology", stores, env=env, **options)
        stack.callback(topology.stop)
        yield topology
