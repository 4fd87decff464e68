"""Throwaway PostgreSQL and Redis servers on loopback for the production-profile tests (never the product).

Built on backend.core.sidecars (process groups, readiness, logs), which the launcher uses for Milvus Lite.
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from backend.core.os_user import run_as_kwargs, traversable_by
from backend.core.sidecars import (
    LOOPBACK,
    POLL_SECONDS,
    LaunchSpec,
    Sidecar,
    SidecarError,
    SidecarUnavailable,
    launch,
    log_tail,
    pick_port,
    require_binary,
    wait_for_sidecar_port,
)
from tests.support.pg_probe import postgres_login_ok

logger = logging.getLogger(__name__)

PG_ROLE = "openguru"
PG_DATABASE = "postgres"
PG_OS_USER = "postgres"


def start_redis(
    *, work_dir: Path, port: int | None = None, startup_timeout: float = 10.0, persistent: bool = False
) -> Sidecar:
    """Run a foreground `redis-server` on 127.0.0.1; `persistent` keeps an append-only file in work_dir
    (as docker-compose does), so a restart on the same work_dir finds its data again."""
    binary = require_binary("redis-server", hint="apt-get install redis-server")
    port = pick_port(port)
    work_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        binary, "--port", str(port), "--bind", LOOPBACK, "--daemonize", "no",
        "--save", "", "--databases", "1024", "--appendonly", "yes" if persistent else "no", "--dir", str(work_dir),
    ]  # fmt: skip
    url = f"redis://{LOOPBACK}:{port}/0"
    spec = LaunchSpec(name="redis", argv=argv, url=url, log_path=work_dir / "redis.log")
    return launch(spec, ready=lambda sidecar: wait_for_sidecar_port(sidecar, startup_timeout))


def start_postgres(*, work_dir: Path, port: int | None = None, startup_timeout: float = 30.0) -> Sidecar:
    """Run a throwaway PostgreSQL cluster on 127.0.0.1 with superuser `openguru` (trust auth, no fsync).

    As root the cluster runs as the `postgres` OS user (initdb refuses root). Its socket directory, and
    the data directory too when `work_dir` is not reachable by that user, live in a private temp
    directory that `stop()` removes. An existing cluster in `work_dir/pgdata` is reused.
    """
    bin_dir = postgres_bin_dir()
    port = pick_port(port)
    work_dir.mkdir(parents=True, exist_ok=True)
    os_user = _postgres_os_user()
    runtime_dir = Path(tempfile.mkdtemp(prefix="openguru-pg-"))
    data_dir = work_dir / "pgdata"
    if os_user is not None and not traversable_by(work_dir, os_user):
        data_dir = runtime_dir / "pgdata"
    try:
        _prepare_postgres_dirs(runtime_dir=runtime_dir, data_dir=data_dir, os_user=os_user)
        log_path = work_dir / "postgres.log"
        if not (data_dir / "PG_VERSION").exists():
            _initdb(bin_dir=bin_dir, data_dir=data_dir, os_user=os_user, log_path=log_path)
    except BaseException:
        shutil.rmtree(runtime_dir, ignore_errors=True)
        raise
    argv = [
        str(bin_dir / "postgres"), "-D", str(data_dir), "-p", str(port), "-k", str(runtime_dir),
        "-c", f"listen_addresses={LOOPBACK}", "-c", "fsync=off",
        "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        # One server serves every test process of the production pass at once, the topology's pooled web
        # workers (up to 20 connections each) among them; PostgreSQL's default of 100 clients was once passed
        # during a 100-request burst test, whose one request got 503 `busy`.
        "-c", "max_connections=300",
    ]  # fmt: skip
    spec = LaunchSpec(
        name="postgres",
        argv=argv,
        url=f"postgresql://{PG_ROLE}@{LOOPBACK}:{port}/{PG_DATABASE}",
        log_path=log_path,
        os_user=os_user,
        stop_signal=signal.SIGINT,  # "fast" shutdown; SIGTERM ("smart") waits for clients to disconnect
        cleanup_paths=(runtime_dir,),
    )
    return launch(spec, ready=lambda sidecar: _wait_for_postgres_login(sidecar, startup_timeout))


def _wait_for_postgres_login(sidecar: Sidecar, timeout: float) -> None:
    """The port opens before recovery ends ("the database system is starting up"), so log in too."""
    deadline = time.monotonic() + timeout
    wait_for_sidecar_port(sidecar, timeout)
    while not postgres_login_ok(LOOPBACK, sidecar.port, user=PG_ROLE, database=PG_DATABASE):
        if sidecar.process.poll() is not None or time.monotonic() >= deadline:
            raise SidecarError(
                f"postgres on port {sidecar.port} did not accept a login as {PG_ROLE!r} within {timeout:.1f}s"
                + log_tail(sidecar.log_path)
            )
        time.sleep(POLL_SECONDS)


def _initdb(*, bin_dir: Path, data_dir: Path, os_user: pwd.struct_passwd | None, log_path: Path) -> None:
    argv = [
        str(bin_dir / "initdb"), "-D", str(data_dir), "-A", "trust", "-U", PG_ROLE,
        "-E", "UTF8", "--locale=C", "--no-sync",
    ]  # fmt: skip
    started = time.monotonic()
    with log_path.open("ab") as log_file:
        result = subprocess.run(
            argv, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            check=False, **run_as_kwargs(os_user, {}),
        )  # fmt: skip
    if result.returncode != 0:
        raise SidecarError(f"initdb failed with status {result.returncode}" + log_tail(log_path))
    logger.info("initdb of %s took %.2fs", data_dir, time.monotonic() - started)


def _prepare_postgres_dirs(*, runtime_dir: Path, data_dir: Path, os_user: pwd.struct_passwd | None) -> None:
    data_dir.mkdir(mode=0o700, exist_ok=True)
    if os_user is not None:
        for path in (runtime_dir, data_dir):
            os.chown(path, os_user.pw_uid, os_user.pw_gid)


def _postgres_os_user() -> pwd.struct_passwd | None:
    """None when we are not root; otherwise the OS account the server must run as."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(PG_OS_USER)
    except KeyError:
        raise SidecarUnavailable(
            f"running as root, but there is no {PG_OS_USER!r} OS user to run PostgreSQL as "
            "(apt-get install postgresql creates it)"
        ) from None


def postgres_bin_dir() -> Path:
    """The newest /usr/lib/postgresql/<version>/bin, else the directory of `initdb` on PATH."""
    candidates = [path for path in Path("/usr/lib/postgresql").glob("*/bin") if (path / "initdb").exists()]
    if candidates:
        return max(candidates, key=lambda path: _version_key(path.parent.name))
    initdb = require_binary("initdb", hint="apt-get install postgresql")
    bin_dir = Path(initdb).parent
    if not (bin_dir / "postgres").exists():
        raise SidecarUnavailable(f"found {initdb} but no postgres next to it; apt-get install postgresql")
    return bin_dir


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


