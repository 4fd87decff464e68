"""Loopback server processes the embedded launcher owns (Milvus Lite); tests/support/sidecars.py adds more."""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from backend.core.os_user import run_as_kwargs

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
_LOG_TAIL_BYTES = 2000
POLL_SECONDS = 0.05


class SidecarError(RuntimeError):
    """A sidecar could not be started or did not become ready."""


class SidecarUnavailable(SidecarError):
    """The sidecar's binary is not installed on this machine."""


@dataclass
class Sidecar:
    """A server process we own; `stop()` leaves no process of its group behind."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    stop_signal: signal.Signals = signal.SIGTERM
    cleanup_paths: tuple[Path, ...] = field(default=())

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        if port is None:
            raise SidecarError(f"sidecar URL has no port: {self.url}")
        return port

    def stop(self, timeout: float = 10) -> None:
        """Ask the process group to stop, SIGKILL what is left after `timeout`, reap, clean up."""
        pgid = self.process.pid  # start_new_session=True makes the leader's pid the group id
        if self.process.returncode is None:  # not reaped yet, so the pid cannot have been reused
            _signal_group(pgid, self.stop_signal)
            if not _wait_for_exit(self.process, timeout):
                logger.warning(
                    "sidecar %s ignored %s for %.1fs; killing it", self.name, self.stop_signal.name, timeout
                )
        # Also sweeps children the leader left behind: orphans keep the group (and its id) alive.
        _signal_group(pgid, signal.SIGKILL)
        returncode = self.process.wait()
        for path in self.cleanup_paths:
            shutil.rmtree(path, ignore_errors=True)
        logger.info("sidecar %s stopped (exit status %s)", self.name, returncode)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def wait_for_port(
    host: str,
    port: int,
    *,
    timeout: float,
    proc: subprocess.Popen[bytes] | None = None,
    log_path: Path | None = None,
) -> None:
    """Block until `host:port` accepts TCP connections; fail fast if `proc` exits."""
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise SidecarError(
                f"process {proc.pid} exited with status {proc.returncode} before {host}:{port} opened"
                + log_tail(log_path)
            )
        if _port_open(host, port):
            return
        if time.monotonic() >= deadline:
            raise SidecarError(f"{host}:{port} did not open within {timeout:.1f}s" + log_tail(log_path))
        time.sleep(POLL_SECONDS)


def start_milvus_lite(
    *,
    data_dir: Path,
    port: int | None = None,
    log_dir: Path,
    milvus_lite_bin: str | None = None,
    startup_timeout: float = 60.0,
    die_with_parent: bool = False,
) -> Sidecar:
    """Run `milvus-lite server` on 127.0.0.1 for `data_dir` (one server per data dir); with `die_with_parent`, it
    closes its database and ends when this process dies (exec_argv says who may ask for that)."""
    binary = milvus_lite_bin or _milvus_lite_binary()
    port = pick_port(port)
    data_dir.mkdir(parents=True, exist_ok=True)
    argv = [binary, "server", "--data-dir", str(data_dir), "--host", LOOPBACK, "--port", str(port)]
    spec = LaunchSpec(
        name="milvus-lite",
        argv=argv,
        url=f"http://{LOOPBACK}:{port}",
        log_path=log_dir / "milvus-lite.log",
        stop_signal=signal.SIGINT,  # its KeyboardInterrupt path closes the DB; SIGTERM just kills it
        env={"PYTHONUNBUFFERED": "1"},
        sigint_back=True,
        death_signal=signal.SIGINT if die_with_parent else None,
    )
    log_start = spec.log_path.stat().st_size if spec.log_path.exists() else 0
    return launch(spec, ready=lambda sidecar: _wait_for_milvus_lite(sidecar, startup_timeout, log_start))


@dataclass(frozen=True)
class LaunchSpec:
    name: str
    argv: list[str]
    url: str
    log_path: Path
    os_user: pwd.struct_passwd | None = None
    stop_signal: signal.Signals = signal.SIGTERM
    cleanup_paths: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    # Stopped by SIGINT, so it must not inherit "ignore SIGINT" (shells give it to & and nohup jobs). A
    # preexec_fn could reset it but may deadlock a fork of a threaded process; an exec prefix does it.
    sigint_back: bool = False
    # Sent to it when the process that started it dies, however (see exec_argv).
    death_signal: signal.Signals | None = None


# Runs before the real command, in the child: "ignore SIGINT" undone, and a parent-death signal asked of the kernel
# (PR_SET_PDEATHSIG = 1; it survives exec). A parent that died before the request took effect is seen as a new
# parent pid: the child then ends at once.
_EXEC_PREFIX = """import os, signal, sys
back, death, parent = (int(value) for value in sys.argv[1:4])
if back:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
if death:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, death)
    if os.getppid() != parent:
        os._exit(1)
os.execvp(sys.argv[4], sys.argv[4:])
"""


def exec_argv(argv: list[str], *, sigint_back: bool = False, death_signal: signal.Signals | None = None) -> list[str]:
    """`argv`, behind a short exec prefix when SIGINT must be restored or the child must end with its parent.

    The death signal reaches the child when the *thread* that started it ends, so only a single-threaded
    supervisor (the launcher) asks for one; it is Linux-only (elsewhere the child outlives a killed parent).
    """
    back = sigint_back and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    death = int(death_signal) if death_signal is not None and sys.platform.startswith("linux") else 0
    if not back and not death:
        return argv
    return [sys.executable, "-c", _EXEC_PREFIX, str(int(back)), str(death), str(os.getpid()), *argv]


def _argv(spec: LaunchSpec) -> list[str]:
    return exec_argv(spec.argv, sigint_back=spec.sigint_back, death_signal=spec.death_signal)


def launch(spec: LaunchSpec, *, ready: Callable[[Sidecar], None]) -> Sidecar:
    """Start `spec.argv` in its own session, output to its log; stop it again if it never gets ready."""
    spec.log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        with spec.log_path.open("ab") as log_file:
            process = subprocess.Popen(
                _argv(spec),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **run_as_kwargs(spec.os_user, spec.env),
            )
    except OSError as exc:
        for path in spec.cleanup_paths:
            shutil.rmtree(path, ignore_errors=True)
        raise SidecarError(f"could not start {spec.name} ({spec.argv[0]}): {exc}") from exc
    sidecar = Sidecar(spec.name, spec.url, process, spec.log_path, spec.stop_signal, spec.cleanup_paths)
    try:
        ready(sidecar)
    except BaseException:
        sidecar.stop(timeout=5)
        raise
    elapsed = time.monotonic() - started
    logger.info("sidecar %s ready at %s in %.2fs (pid %s)", spec.name, spec.url, elapsed, process.pid)
    return sidecar


def wait_for_sidecar_port(sidecar: Sidecar, timeout: float) -> None:
    wait_for_port(LOOPBACK, sidecar.port, timeout=timeout, proc=sidecar.process, log_path=sidecar.log_path)
    if sidecar.process.poll() is not None:  # someone else owned the port and our server gave up
        raise SidecarError(f"{sidecar.name} exited right after its port opened" + log_tail(sidecar.log_path))


def _wait_for_milvus_lite(sidecar: Sidecar, timeout: float, log_start: int) -> None:
    """Its port opens a moment before it can handle SIGINT (which would then kill it with the DB open).

    It prints its "listening" line just before it enters the block that turns SIGINT into a clean close.
    """
    deadline = time.monotonic() + timeout
    wait_for_sidecar_port(sidecar, timeout)
    while b"listening on" not in _log_bytes(sidecar.log_path, log_start):
        if sidecar.process.poll() is not None or time.monotonic() >= deadline:
            raise SidecarError(f"{sidecar.name} never said it was listening" + log_tail(sidecar.log_path))
        time.sleep(POLL_SECONDS)


def _log_bytes(log_path: Path, start: int) -> bytes:
    with log_path.open("rb") as log_file:
        log_file.seek(start)
        return log_file.read()


def _milvus_lite_binary() -> str:
    beside = Path(sys.executable).parent / "milvus-lite"
    return str(beside) if beside.exists() else require_binary("milvus-lite", hint="pip install milvus-lite")


def require_binary(name: str, *, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SidecarUnavailable(f"{name} is not installed or not on PATH; install it with: {hint}")
    return path


def pick_port(port: int | None) -> int:
    """A fresh port, or `port` if nothing listens on it (else readiness checks would find the squatter)."""
    if port is None:
        return free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is fine
        try:
            sock.bind((LOOPBACK, port))
        except OSError as exc:
            raise SidecarError(f"port {LOOPBACK}:{port} is already in use: {exc}") from exc
    return port


def _port_open(host: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
        return True
    return False


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # the whole group is already gone
        os.killpg(pgid, signum)


def _wait_for_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the leader to exit *without reaping it*, so its pid (= our group id) cannot be reused yet."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped elsewhere
            return True
        time.sleep(POLL_SECONDS)
    return False


def log_tail(log_path: Path | None) -> str:
    if log_path is None or not log_path.exists():
        return ""
    with log_path.open("rb") as log_file:
        log_file.seek(max(0, log_path.stat().st_size - _LOG_TAIL_BYTES))
        tail = log_file.read().decode("utf-8", errors="replace")
    return f"\n--- last lines of {log_path} ---\n{tail}"
