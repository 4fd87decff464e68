"""The embedded broker: kombu's filesystem transport made crash-safe (atomic publish, claims, quarantine)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import fcntl
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from queue import Empty
from typing import Any

from kombu.transport import filesystem, virtual
from kombu.utils.json import dumps, loads

logger = logging.getLogger(__name__)

SCHEME = "openguru-fs"
# How often a consumer looks for the claims of consumers that died (a SIGKILL leaves them behind).
RECOVER_EVERY_SECONDS = 5.0
# The longest one wait for a message lasts before the worker looks at its shutdown flag again.
DRAIN_SLICE_S = 0.25
_TABLE_LOCK = ".tables.lock"


def register() -> None:
    """Make `openguru-fs://` resolve to this transport (idempotent; settings call it)."""
    from kombu.transport import TRANSPORT_ALIASES

    TRANSPORT_ALIASES.setdefault(SCHEME, "backend.core.broker:Transport")


def _write_atomically(target: Path, data: bytes, tmp_folder: Path) -> None:
    """Readers see the whole file or nothing: write a private temp file, fsync it, rename it into place."""
    tmp = tmp_folder / f"{uuid.uuid4().hex}.part"
    with open(tmp, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, target)


def decode_message(raw: bytes) -> dict[str, Any] | None:
    """The kombu envelope in `raw`, or None when it (or its JSON body) cannot be decoded."""
    try:
        payload = loads(raw.decode("utf-8"))
        properties = payload["properties"]
        if not isinstance(properties.get("delivery_tag"), str) or "body" not in payload:
            return None
        body = payload["body"]
        if properties.get("body_encoding") == "base64":
            body = base64.b64decode(body, validate=True)
        if payload.get("content-type") == "application/json":
            json.loads(body)
    except (UnicodeDecodeError, ValueError, binascii.Error, KeyError, TypeError, AttributeError):
        return None
    return payload if isinstance(payload, dict) else None


class Channel(filesystem.Channel):
    """Messages are claimed by renaming them into this consumer's folder and deleted only on ack.

    Folders (siblings of the queue folder unless set): `unacked/<owner>/` holds claimed messages,
    `unacked/<owner>.lock` is flock-ed by the owner for its lifetime (the kernel drops the lock when
    the process dies, even on SIGKILL), `quarantine/` keeps messages that cannot be decoded, `tmp/`
    holds messages being written.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._claims: dict[str, Path] = {}
        self._owner: Path | None = None
        self._owner_lock: Any = None
        self._next_recovery = 0.0

    def _folder(self, option: str, default: str) -> Path:
        folder = Path(self.transport_options.get(option) or Path(self.data_folder_in).parent / default)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    @property
    def tmp_folder(self) -> Path:
        return self._folder("tmp_folder", "tmp")

    @property
    def unacked_folder(self) -> Path:
        return self._folder("unacked_folder", "unacked")

    @property
    def quarantine_folder(self) -> Path:
        return self._folder("quarantine_folder", "quarantine")

    # --- publishing -----------------------------------------------------------------------------

    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        # Nanosecond wall-clock names keep the folder in publish order across processes.
        name = f"{time.time_ns():020d}_{uuid.uuid4().hex}.{queue}.msg"
        _write_atomically(Path(self.data_folder_out) / name, dumps(payload).encode(), self.tmp_folder)

    # --- consuming ------------------------------------------------------------------------------

    def _get(self, queue: str) -> dict[str, Any]:  # type: ignore[override]
        if time.monotonic() >= self._next_recovery:
            self._next_recovery = time.monotonic() + RECOVER_EVERY_SECONDS
            self.recover_dead_claims()
        wanted = f"{queue}.msg"
        inbox = Path(self.data_folder_in)
        for name in sorted(os.listdir(inbox)):
            if name.partition(".")[2] != wanted:
                continue
            claimed = self._owner_folder() / name
            try:
                os.rename(inbox / name, claimed)  # atomic: exactly one consumer wins the message
            except FileNotFoundError:
                continue
            payload = decode_message(claimed.read_bytes())
            if payload is None:
                self._quarantine(claimed, "it cannot be decoded")
                continue
            self._claims[payload["properties"]["delivery_tag"]] = claimed
            return payload
        raise Empty()

    def basic_ack(self, delivery_tag: str, multiple: bool = False) -> None:
        super().basic_ack(delivery_tag, multiple=multiple)
        claimed = self._claims.pop(delivery_tag, None)
        if claimed is not None:
            claimed.unlink(missing_ok=True)

    def basic_reject(self, delivery_tag: str, requeue: bool = False) -> None:
        claimed = None if requeue else self._claims.pop(delivery_tag, None)
        super().basic_reject(delivery_tag, requeue=requeue)
        if claimed is not None and claimed.exists():
            self._quarantine(claimed, "the consumer rejected it")

    def _restore(self, message: Any) -> None:
        """Put an unacknowledged message back where it was in the queue (shutdown, requeue)."""
        claimed = self._claims.pop(message.delivery_tag, None)
        if claimed is None:
            super()._restore(message)
            return
        with contextlib.suppress(FileNotFoundError):
            os.rename(claimed, Path(self.data_folder_out) / claimed.name)

    def close(self) -> None:
        super().close()  # restores unacknowledged messages first
        if self._owner is not None:
            with contextlib.suppress(OSError):
                self._owner.rmdir()
            with contextlib.suppress(OSError):
                _lock_of(self._owner).unlink()
            self._owner_lock.close()
            self._owner = None

    def _owner_folder(self) -> Path:
        if self._owner is None:
            host = socket.gethostname().replace(".", "_")
            owner = self.unacked_folder / f"{host}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            # Lock under a temporary name, then rename, then create the folder: a recoverer only ever
            # sees locked owners, and never removes a folder that is about to be used.
            tmp_lock = self.tmp_folder / f"{owner.name}.lock"
            handle = open(tmp_lock, "w")  # noqa: SIM115  (held open for the channel's life)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            os.rename(tmp_lock, _lock_of(owner))
            owner.mkdir()
            self._owner, self._owner_lock = owner, handle
        return self._owner

    def recover_dead_claims(self) -> int:
        """Move the claims of consumers whose lock is free (they died) back to the queue; returns how many."""
        restored = 0
        for lock_path in self.unacked_folder.glob("*.lock"):
            if self._owner is not None and lock_path == _lock_of(self._owner):
                continue
            with _lock_if_free(lock_path) as free:
                if free:
                    restored += self._restore_folder(lock_path.with_name(lock_path.name.removesuffix(".lock")))
                    lock_path.unlink(missing_ok=True)
        if restored:
            logger.warning("broker: %d message(s) of a consumer that died were put back in the queue", restored)
        return restored

    def _restore_folder(self, folder: Path) -> int:
        count = 0
        for path in folder.glob("*.msg") if folder.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                os.rename(path, Path(self.data_folder_out) / path.name)
                count += 1
        with contextlib.suppress(OSError):
            folder.rmdir()
        return count

    def _quarantine(self, path: Path, why: str) -> None:
        target = self.quarantine_folder / path.name
        with contextlib.suppress(FileNotFoundError):
            os.rename(path, target)
            logger.error("broker: message %s was set aside in %s because %s", path.name, target.parent, why)

    # --- exchange tables (one small JSON file per exchange) ---------------------------------------

    def _queue_bind(self, exchange: str, routing_key: str | None, pattern: str | None, queue: str | None) -> None:
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        self._update_table(exchange, lambda rows: rows if entry in rows else [entry, *rows])

    def _delete(self, queue: str, exchange: str, routing_key: str, pattern: str, *args: Any, **kwargs: Any) -> None:
        virtual.Channel._delete(self, queue, exchange, routing_key, pattern, *args, **kwargs)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        self._update_table(exchange, lambda rows: [row for row in rows if row != entry])

    def _update_table(self, exchange: str, change: Callable[[list[Any]], list[Any]]) -> None:
        """Read-modify-write under one lock file, written atomically so readers never see it half done."""
        file: Path = self._exchange_file(exchange)  # type: ignore[attr-defined]
        self.control_folder.mkdir(parents=True, exist_ok=True)
        with open(self.control_folder / _TABLE_LOCK, "a") as guard:
            fcntl.flock(guard.fileno(), fcntl.LOCK_EX)
            rows = self.get_table(exchange)
            updated = change(rows)
            if updated != rows or not file.exists():
                _write_atomically(file, dumps([list(row) for row in updated]).encode(), self.tmp_folder)


def _lock_of(owner: Path) -> Path:
    return owner.with_name(f"{owner.name}.lock")


@contextlib.contextmanager
def _lock_if_free(path: Path) -> Iterator[bool]:
    """Yield True while holding `path`'s flock when nobody else holds it (its owner is gone)."""
    try:
        handle = open(path)  # noqa: SIM115
    except FileNotFoundError:
        yield False
        return
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


class Transport(filesystem.Transport):
    """`openguru-fs://`: the filesystem transport with the crash-safe Channel above."""

    Channel = Channel
    driver_name = "openguru-fs"

    @property
    def default_connection_params(self) -> dict[str, object]:
        # Folders, not a host: without this kombu warns "No hostname was supplied" on every connection.
        return {}

    def drain_events(self, connection: Any, timeout: float | None = None) -> None:  # type: ignore[override]
        # Celery's blocking loop (used with this transport) notices a warm shutdown only between calls,
        # and asks for 2 s each: capping a call lets Ctrl-C stop an idle worker at once. (kombu-stubs give the
        # base class another signature than the virtual transport it really overrides.)
        super().drain_events(connection, timeout=timeout if timeout is None else min(timeout, DRAIN_SLICE_S))
