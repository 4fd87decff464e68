"""The embedded broker's transport in one process: atomic publish, decoding, claims and acks."""

from __future__ import annotations

import threading
from pathlib import Path

import kombu

from backend.core.broker import DRAIN_SLICE_S, SCHEME, decode_message, register

register()
BIG = 8 * 1024 * 1024


def _options(root: Path) -> dict[str, object]:
    return {"data_folder_in": str(root / "queue"), "data_folder_out": str(root / "queue"),
            "control_folder": str(root / "control"), "polling_interval": 0.01}


def test_a_reader_never_meets_a_message_that_is_still_being_written(tmp_path: Path) -> None:
    (tmp_path / "queue").mkdir()
    queue = kombu.Queue("big", routing_key="big")
    done = threading.Event()

    def produce() -> None:
        with kombu.Connection(f"{SCHEME}://", transport_options=_options(tmp_path)) as conn:
            producer = conn.Producer()
            for i in range(5):
                producer.publish({"i": i, "pad": "x" * BIG}, routing_key="big", declare=[queue], serializer="json")
        done.set()

    thread = threading.Thread(target=produce)
    thread.start()
    seen: dict[str, bytes] = {}
    while not done.is_set():  # what a consumer sees when it lists the folder, as often as it can
        for path in (tmp_path / "queue").iterdir():
            seen.setdefault(path.name, path.read_bytes())
    thread.join()
    assert seen, "the reader saw no message at all"
    assert all(decode_message(raw) is not None for raw in seen.values())


def test_decode_message_refuses_what_a_worker_could_not_handle() -> None:
    good = (b'{"body": "eyJhIjogMX0=", "content-type": "application/json", "headers": {}, '
            b'"properties": {"delivery_tag": "t", "body_encoding": "base64"}}')
    assert decode_message(good) is not None
    for raw in (b"", b"{", b"\xff", b"[]", b'{"body": "x"}', good.replace(b"eyJhIjogMX0=", b"eyJhIjog")):
        assert decode_message(raw) is None


def test_a_message_stays_claimed_until_acked_and_returns_when_its_consumer_closes(tmp_path: Path) -> None:
    (tmp_path / "queue").mkdir()
    queue = kombu.Queue("q", routing_key="q")
    with kombu.Connection(f"{SCHEME}://", transport_options=_options(tmp_path)) as conn:
        conn.Producer().publish({"n": 1}, routing_key="q", declare=[queue], serializer="json")
        message = queue(conn.default_channel).get(no_ack=False)
        assert message is not None and message.payload == {"n": 1}
        assert not list((tmp_path / "queue").iterdir())
        claimed = list((tmp_path / "unacked").glob("*/*.msg"))
        assert len(claimed) == 1
    # Closing without an ack puts the message back in the queue for the next consumer.
    assert len(list((tmp_path / "queue").iterdir())) == 1
    with kombu.Connection(f"{SCHEME}://", transport_options=_options(tmp_path)) as conn:
        message = queue(conn.default_channel).get(no_ack=False)
        assert message is not None
        message.ack()
    assert not list((tmp_path / "queue").iterdir())
    assert not list((tmp_path / "unacked").glob("**/*.msg"))


def test_a_wait_for_messages_returns_within_a_slice_so_a_worker_notices_shutdown(tmp_path: Path) -> None:
    """Celery's blocking loop checks for a warm shutdown only between waits, and asks for 2 s each: a wait
    on an empty queue must give control back after a short slice (Ctrl-C stopped an idle worker in 6 s)."""
    (tmp_path / "queue").mkdir()
    outcome: list[BaseException] = []
    returned = threading.Event()

    def wait() -> None:
        with kombu.Connection(f"{SCHEME}://", transport_options=_options(tmp_path)) as conn:
            consumer = conn.Consumer(kombu.Queue("idle", routing_key="idle"), callbacks=[lambda body, msg: None])
            with consumer:
                try:
                    conn.drain_events(timeout=600)
                except BaseException as exc:  # noqa: BLE001 - the outcome is asserted below
                    outcome.append(exc)
        returned.set()

    threading.Thread(target=wait, daemon=True).start()
    assert returned.wait(timeout=60), "a wait asked for 600 s blocked instead of returning after a slice"
    assert [type(exc) for exc in outcome] == [TimeoutError]
    assert DRAIN_SLICE_S <= 1.0
