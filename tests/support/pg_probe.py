"""Is a PostgreSQL server ready for logins? Checked with the wire protocol itself (stdlib only)."""

from __future__ import annotations

import errno
import socket
import struct


def postgres_login_ok(host: str, port: int, *, user: str, database: str) -> bool:
    """Speak just enough of the v3 protocol (trust auth) to see ReadyForQuery; stdlib only."""
    params = f"user\0{user}\0database\0{database}\0\0".encode()
    try:
        with socket.create_connection((host, port), timeout=2) as sock:
            sock.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
            while True:
                kind, body = _read_pg_message(sock)
                if kind == b"E" or (kind == b"R" and body[:4] != b"\0\0\0\0"):
                    return False
                if kind == b"Z":
                    sock.sendall(b"X" + struct.pack("!i", 4))
                    return True
    except OSError:
        return False


def _read_pg_message(sock: socket.socket) -> tuple[bytes, bytes]:
    header = _recv_exactly(sock, 5)
    (length,) = struct.unpack("!i", header[1:])
    return header[:1], _recv_exactly(sock, length - 4)


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionResetError(errno.ECONNRESET, "postgres closed the connection")
        data += chunk
    return data
