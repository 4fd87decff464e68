"""Database connections held only while queries run, so a long answer stream does not pin one."""

from __future__ import annotations

from django.db import connections


def release_connections() -> None:
    """Close (or, with a pool, give back) this thread's connections that are not inside a transaction.

    Streams wait seconds on a model between short queries; a connection kept for that time is one fewer
    for everybody else (PostgreSQL refuses clients beyond max_connections). The next query reconnects.
    """
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.in_atomic_block:
            connection.close()
