"""Runs the whole product on the embedded default: migrate, first admin, Milvus Lite sidecar,
Celery worker (+ beat) and the ASGI web server, supervised until Ctrl-C.

Deliberately Django-free: every Django step runs in a child process with the same environment, so
only the sidecar ever opens the Milvus Lite data dir.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from backend.core.sidecars import LOOPBACK, Sidecar, SidecarError, start_milvus_lite, wait_for_port

logger = logging.getLogger("openguru.launcher")
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Running:
    """Everything the launcher started, stopped in reverse order."""

    sidecar: Sidecar | None = None
    processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)

    def stop(self) -> None:
        for name, proc in reversed(self.processes):
            if proc.poll() is None:
                logger.info("stopping %s", name)
                proc.send_signal(signal.SIGTERM)
        for _, proc in reversed(self.processes):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
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


def _spawn(running: Running, name: str, cmd: list[str], env: dict[str, str], log_dir: Path) -> None:
    log = open(log_dir / f"{name}.log", "ab")  # noqa: SIM115  (handed to the child, closed at exit)
    proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    running.processes.append((name, proc))


def _start_services(args: argparse.Namespace, env: dict[str, str], running: Running) -> str:
    data_dir: Path = args.data_dir
    log_dir = data_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    _manage(env, "migrate", "--noinput", capture=True)
    admin_text = _manage(env, "ensure_admin", capture=True)
    running.sidecar = start_milvus_lite(data_dir=data_dir / "milvus.db", port=args.milvus_port, log_dir=log_dir)
    env["MILVUS_URI"] = running.sidecar.url
    (data_dir / "run.env").write_text(f"MILVUS_URI={running.sidecar.url}\n")
    _manage(env, "check", "--deploy", "--tag", "vectors", "--fail-level", "ERROR", capture=True)
    celery = [sys.executable, "-m", "celery", "-A", "backend.config.celery_app", "worker", "--beat",
              "--loglevel", "INFO", "--concurrency", str(args.concurrency),
              "--schedule", str(data_dir / "celerybeat-schedule")]
    _spawn(running, "worker", celery, env, log_dir)
    web = [sys.executable, "-m", "uvicorn", "backend.config.asgi:application",
           "--host", args.host, "--port", str(args.port)]
    _spawn(running, "web", web, env, log_dir)
    wait_for_port(LOOPBACK if args.host in ("0.0.0.0", "::") else args.host, args.port,
                  timeout=60, proc=running.processes[-1][1], log_path=log_dir / "web.log")
    return admin_text


def _banner(args: argparse.Namespace, admin_text: str) -> str:
    url = f"http://{'localhost' if args.host in (LOOPBACK, '0.0.0.0') else args.host}:{args.port}/"
    lines = ["", "OpenGuru is running (embedded default).", f"  Open:   {url}", f"  Admin:  {url}admin/"]
    lines += ["  " + line.strip() for line in admin_text.strip().splitlines()]
    lines += [f"  Logs:   {args.data_dir / 'logs'}", "  Stop:   Ctrl-C", ""]
    return "\n".join(lines)


def _supervise(running: Running) -> int:
    stop = {"requested": False}

    def _request_stop(signum: int, frame: object) -> None:
        stop["requested"] = True

    signal.signal(signal.SIGINT, _request_stop)
    signal.signal(signal.SIGTERM, _request_stop)
    while not stop["requested"]:
        for name, proc in running.processes:
            if proc.poll() is not None:
                logger.error("%s exited with status %s; stopping everything (see its log)", name, proc.returncode)
                return 1
        if running.sidecar is not None and running.sidecar.process.poll() is not None:
            logger.error("the Milvus Lite sidecar exited; stopping everything")
            return 1
        time.sleep(0.5)
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    args = _parse(sys.argv[1:] if argv is None else argv)
    args.data_dir = args.data_dir.resolve()
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
    finally:
        running.stop()
        (args.data_dir / "run.env").unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
