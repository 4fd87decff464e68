"""Lease tokens name their holder process: one that died on this machine is told from one that still runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from backend.core.holders import holder_gone, holder_token


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_running_process_holds_its_token_and_a_killed_one_does_not() -> None:
    assert not holder_gone(holder_token())  # this process
    process = _sleeper()
    try:
        token = holder_token(process.pid)
        assert not holder_gone(token)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert holder_gone(token)


def test_a_killed_process_not_yet_reaped_holds_nothing() -> None:
    process = _sleeper()
    token = holder_token(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    # Until it is reaped the process is a zombie with the same pid and start time: it must count as gone.
    os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
    try:
        assert holder_gone(token)
    finally:
        process.wait()


def test_a_reused_pid_another_machine_or_an_opaque_token_is_never_judged_gone() -> None:
    nonce, machine, pid, start = holder_token().split(".")
    assert holder_gone(f"{nonce}.{machine}.{pid}.{int(start) + 1}")  # the pid now belongs to another process
    assert not holder_gone(f"{nonce}.{'0' * len(machine)}.{pid}.{start}")  # another host: left to the TTL
    for token in ("queued", "a.b.c", f"{nonce}.{machine}.x.{start}", ""):
        assert not holder_gone(token)


def test_tokens_are_unique_and_fit_the_lease_column() -> None:
    tokens = {holder_token() for _ in range(100)}
    assert len(tokens) == 100 and max(len(t) for t in tokens) <= 64
