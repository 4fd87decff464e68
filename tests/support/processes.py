"""Processes read from /proc: a process's descendants, and whether one still runs."""

from __future__ import annotations

import contextlib
from pathlib import Path


def descendants(root: int) -> list[int]:
    """`root` and every process below it, `root` first."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            children.setdefault(int(stat.read_text().rsplit(")", 1)[1].split()[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        found.append(pid := todo.pop())
        todo.extend(children.get(pid, []))
    return found


def running(pid: int) -> bool:
    """Whether the process runs (a zombie waiting to be reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
