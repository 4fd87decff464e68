"""Lease tokens that name the process holding them, so a lease left behind by a process that died on this
machine can be taken over at once instead of after its TTL.

A token is `<random>.<machine>.<pid>.<start>`: the machine is a hash of the kernel's boot id and the host name
(a reboot or another host never matches), `start` is the process's start time in clock ticks since boot (a pid
reused by a new process does not match). Only a holder on this machine can be judged; any other is left to its
TTL, as is every holder where /proc is not there to read.
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import uuid
from pathlib import Path

_PROC = Path("/proc")
_GONE_STATES = frozenset("ZXx")  # zombie or dead: it holds nothing any more, whoever reaps it


@functools.lru_cache(maxsize=1)
def _machine() -> str:
    """This kernel boot on this host, as 10 hex digits; "" when the boot id cannot be read."""
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""
    return hashlib.sha256(f"{boot}/{socket.gethostname()}".encode()).hexdigest()[:10]


def _started(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, or None when no live process has that pid."""
    try:
        # The command name (field 2) may hold spaces and parentheses: the fields after its last ")" are plain.
        fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    state, start = fields[0], fields[19]
    return None if state in _GONE_STATES else start


def holder_token(pid: int | None = None) -> str:
    """A fresh lease token naming the process `pid` (this one by default) as its holder."""
    pid, machine, nonce = os.getpid() if pid is None else pid, _machine(), uuid.uuid4().hex[:16]
    start = _started(pid) if machine else None
    return f"{nonce}.{machine}.{pid}.{start}" if start is not None else nonce


def holder_gone(token: str) -> bool:
    """Whether the token names a process of this machine that no longer runs (a SIGKILLed worker)."""
    parts = token.split(".")
    if len(parts) != 4 or not _machine() or parts[1] != _machine() or not parts[2].isdigit():
        return False
    return _started(int(parts[2])) != parts[3]
