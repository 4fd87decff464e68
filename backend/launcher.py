"""Runs the whole product on the embedded default: migrate, first admin, Milvus Lite sidecar,
Celery worker (+ beat), one process for the Slack Socket Mode and Discord gateway connections and the ASGI web
server, supervised until Ctrl-C.

Deliberately Django-free: every Django step runs in a child process with the same environment, so
only the sidecar ever opens the Milvus Lite data dir.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from backend.core.sidecars import LOOPBACK, Sidecar, SidecarError, exec_argv, start_milvus_lite, wait_for_port

logger = logging.getLogger("openguru.launcher")
REPO = Path(__file__).resolve().parents[1]


# A crashed worker (or web server) is restarted after 1, 2, 4 … s, at most a minute apart; the delay
# starts again from 1 s once the process has stayed up for a minute.
RESTART_FIRST_DELAY_S = 1.0
RESTART_MAX_DELAY_S = 60.0
STABLE_AFTER_S = 60.0


@dataclass
class Backoff:
    """Exponential, capped restart delays; reset when the process ran long enough to count as healthy."""

    first: float = RESTART_FIRST_DELAY_S
    cap: float = RESTART_MAX_DELAY_S
    stable_after: float = STABLE_AFTER_S
    failures: int = 0

    def next_delay(self, ran_for: float) -> float:
        if ran_for >= self.stable_after:
            self.failures = 0
        self.failures += 1
        return min(self.cap, self.first * 2 ** (self.failures - 1))


@dataclass
class Child:
    """A supervised process and how to start it again."""

    name: str
    cmd: list[str]
    env: dict[str, str]
    log_path: Path
    proc: subprocess.Popen[bytes]
    started_at: float
    backoff: Backoff = field(default_factory=Backoff)
    restart_at: float | None = None


@dataclass
class Running:
    """Everything the launcher started, stopped in reverse order."""

    sidecar: Sidecar | None = None
    processes: list[Child] = field(default_factory=list)

    def stop(self) -> None:
        for child in reversed(self.processes):
            if child.proc.poll() is None:
                logger.info("stopping %s", child.name)
                child.proc.send_signal(signal.SIGTERM)
        for child in reversed(self.processes):
            try:
                child.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.proc.kill()
                child.proc.wait()
            _end_group(child.proc)
        if self.sidecar is not None:
            self.sidecar.stop()


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="openguru start", description=__doc__)
    parser.add_argument("--host", default=os.environ.get("OPENGURU_HOST", LOOPBACK))
    parser.add_argument("--port", type=int, default=int(os.environ.get("OPENGURU_PORT", "8000")))
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("OPENGURU_DATA_DIR", REPO / "var")))
    parser.add_argument("--milvus-port", type=int, default=int(os.environ.get("OPENGURU_MILVUS_PORT", "0")) or None)
    parser.add_argument("--concurrency", type=int, default=int(os.environ.get("OPENGURU_WORKERS", "2")))
    return parser.parse_args(argv)


def _manage(env: dict[str, str], *args: str, capture: bool = False) -> str:
    cmd = [sys.executable, str(REPO / "manage.py"), *args]
    result = subprocess.run(cmd, env=env, cwd=REPO, check=False, capture_output=capture, text=True)
    if result.returncode != 0:
        detail = (result.stdout or "") + (result.stderr or "") if capture else ""
        raise SystemExit(f"`manage.py {' '.join(args)}` failed (exit {result.returncode}).\n{detail}")
    return result.stdout or ""


def _popen(cmd: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    # Each child leads its own process group, so what it forked (Celery's pool and embedded beat) can be
    # ended with it: a SIGKILLed worker otherwise leaves a second beat and pool processes behind.
    # Each child also ends when the launcher dies, however it dies: a SIGKILLed launcher used to leave the whole
    # product running without it (the next start found the port taken and Milvus Lite's data dir locked).
    with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(exec_argv(cmd, death_signal=signal.SIGTERM), env=env, cwd=REPO, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL whatever is left of an exited child's process group (its leader's pid is the group id)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _spawn(running: Running, name: str, cmd: list[str], env: dict[str, str], log_dir: Path) -> None:
    log_path = log_dir / f"{name}.log"
    proc = _popen(cmd, env, log_path)
    running.processes.append(Child(name, cmd, env, log_path, proc, time.monotonic()))
    logger.info("started %s (pid %s)", name, proc.pid)


def _tend(child: Child, now: float) -> None:
    """Schedule a restart for a child that exited, and restart it when its delay has passed."""
    if child.restart_at is None and child.proc.poll() is not None:
        _end_group(child.proc)
        delay = child.backoff.next_delay(now - child.started_at)
        child.restart_at = now + delay
        logger.error("%s exited with status %s; restarting it in %.0f s (see %s)",
                     child.name, child.proc.returncode, delay, child.log_path)
    elif child.restart_at is not None and now >= child.restart_at:
        child.proc = _popen(child.cmd, child.env, child.log_path)
        child.started_at, child.restart_at = now, None
        logger.info("restarted %s (pid %s)", child.name, child.proc.pid)


def _manage_hint(data_dir: Path) -> str:
    """How the user reaches this data dir's management commands from a shell in the checkout."""
    if data_dir == (REPO / "var").resolve():
        return "./openguru manage"
    return f"OPENGURU_DATA_DIR={shlex.quote(str(data_dir))} ./openguru manage"


def _start_services(args: argparse.Namespace, env: dict[str, str], running: Running) -> str:
    data_dir: Path = args.data_dir
    log_dir = data_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    running.sidecar = start_milvus_lite(data_dir=data_dir / "milvus.db", port=args.milvus_port, log_dir=log_dir,
                                        die_with_parent=True)
    env["MILVUS_URI"] = running.sidecar.url
    (data_dir / "run.env").write_text(f"MILVUS_URI={running.sidecar.url}\n")
    # Migrate, collect static files (pre-compressed, so WhiteNoise sends gzip/brotli with far-future cache
    # headers), check the vector collections against the embedder, then the first admin.
    admin_text = _manage(env, "prepare", "--check-tag", "vectors", "--manage-command", _manage_hint(data_dir),
                         capture=True)
    celery = [sys.executable, "-m", "celery", "-A", "backend.config.celery_app", "worker", "--beat",
              "--loglevel", "INFO", "--concurrency", str(args.concurrency), "--without-mingle", "--without-gossip",
              "--schedule", str(data_dir / "celerybeat-schedule")]
    # `prepare` ran the system checks for this start; Celery's Django fixup would run them again, importing
    # every URL module the worker never serves.
    _spawn(running, "worker", celery, dict(env, CELERY_SKIP_CHECKS="1"), log_dir)
    # Slack's Socket Mode and Discord's gateway connections share one process: both are idle until a maintainer
    # sets one up, and a process of its own each cost a second CPU-second and ~70 MB at every start.
    _spawn(running, "chat_listeners", [sys.executable, str(REPO / "manage.py"), "chat_listeners"], env, log_dir)
    web = [sys.executable, "-m", "uvicorn", "backend.config.asgi:application",
           "--host", args.host, "--port", str(args.port), "--no-proxy-headers"]  # see backend/config/asgi.py
    _spawn(running, "web", web, env, log_dir)
    wait_for_port(LOOPBACK if args.host in ("0.0.0.0", "::") else args.host, args.port,
                  timeout=60, proc=running.processes[-1].proc, log_path=log_dir / "web.log")
    return admin_text


def _url(args: argparse.Namespace) -> str:
    return f"http://{'localhost' if args.host in (LOOPBACK, '0.0.0.0') else args.host}:{args.port}/"


def _banner(args: argparse.Namespace, admin_text: str) -> str:
    url = _url(args)
    lines = ["", "OpenGuru is running (embedded default).", f"  Open:   {url}", f"  Admin:  {url}admin/"]
    lines += ["  " + line.strip() for line in admin_text.strip().splitlines()]
    lines += [f"  Logs:   {args.data_dir / 'logs'}", "  Stop:   Ctrl-C", ""]
    return "\n".join(lines)


def _supervise(running: Running) -> int:
    stop = {"requested": False}

    def _request_stop(signum: int, frame: object) -> None:
        stop["requested"] = True

    # Children have sessions of their own, so a closed terminal (SIGHUP) reaches only us: stop them too.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _request_stop)
    while not stop["requested"]:
        # Web and worker come back after a crash; without Milvus neither can work, so that stops all.
        for child in running.processes:
            _tend(child, time.monotonic())
        if running.sidecar is not None and running.sidecar.process.poll() is not None:
            logger.error("the Milvus Lite sidecar exited; stopping everything")
            return 1
        time.sleep(0.5)
    return 0


def _hold_data_dir(data_dir: Path, url: str) -> IO[str] | None:
    """An exclusive lock on the data dir for as long as this launcher lives, holding its pid and `url` for a second
    start to say; None when another launcher holds it or the data dir cannot be made (both said in a sentence).
    (The kernel drops an flock with its process, however it ends: a killed launcher leaves nothing to clean.)"""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        handle = (data_dir / "launcher.lock").open("a+")
    except OSError as exc:
        logger.error("Cannot use %s as the data dir: %s. Choose another with --data-dir DIR.", data_dir,
                     exc.strerror or exc)
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        logger.error("OpenGuru is already running with the data dir %s (%s). Stop it first (Ctrl-C in its "
                     "terminal), or start another instance with --data-dir DIR and --port PORT.",
                     data_dir, holder or "another process")
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, {url}\n")
    handle.flush()
    return handle


def _port_taken(host: str, port: int) -> bool:
    """Whether another program already listens on host:port. The web server would fail to bind it and be restarted
    forever, while the banner pointed at the other program (the port opens, just not for us)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no obstacle
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE  # any other error is the web server's to report
    return False


def main(argv: list[str] | None = None) -> int:
    # SIGINT stops the launcher from its first moment, even when it was started with SIGINT ignored (shells give
    # that to `&` jobs, test runners to their workers): _supervise handles it later anyway, and a start that
    # could not be interrupted would leave a Ctrl-C pressed during `prepare` unanswered until it finished.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    args = _parse(sys.argv[1:] if argv is None else argv)
    args.data_dir = args.data_dir.resolve()
    lock = _hold_data_dir(args.data_dir, _url(args))
    if lock is None:
        return 1  # before anything is started or removed: a running instance's run.env stays
    if _port_taken(args.host, args.port):
        logger.error("Port %s on %s is already in use by another program (or an OpenGuru with another data dir). "
                     "Stop it, or start on another port: ./openguru start --port %s", args.port, args.host,
                     args.port + 1)
        lock.close()
        return 1
    env = dict(os.environ, OPENGURU_DATA_DIR=str(args.data_dir), PYTHONUNBUFFERED="1")
    env.setdefault("DJANGO_SETTINGS_MODULE", "backend.config.settings.base")
    running = Running()
    try:
        admin_text = _start_services(args, env, running)
        sys.stdout.write(_banner(args, admin_text) + "\n")
        sys.stdout.flush()
        return _supervise(running)
    except (SidecarError, SystemExit) as exc:
        logger.error("%s", exc)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before the handlers of _supervise were installed
        logger.info("stopped before everything was running (Ctrl-C)")
        return 130
    finally:
        running.stop()
        (args.data_dir / "run.env").unlink(missing_ok=True)
        lock.close()


if __name__ == "__main__":
    sys.exit(main())
