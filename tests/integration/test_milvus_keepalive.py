"""The Milvus client's keep-alive suits the gRPC servers it talks to: no GOAWAY "too_many_pings" in the logs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.adapters.vector_store.milvus import RECONNECT_OPTIONS, SERVER_MIN_PING_INTERVAL_MS
from backend.core.sidecars import Sidecar, start_milvus_lite

REPO = Path(__file__).resolve().parents[2]
# gRPC C-core's server default (GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS): milvus-lite keeps it.
GRPC_SERVER_DEFAULT_MIN_PING_MS = 5 * 60 * 1000
# A client pinging every second (pymilvus pings every 10 s) shows pings in this window; ours must show none.
PING_WINDOW_S = 3
CLIENT = """
import sys, time
import backend.adapters.vector_store.milvus as milvus
milvus.RECONNECT_OPTIONS.update({override})
store = milvus.MilvusVectorStore(uri=sys.argv[1])
store.list_collections()
time.sleep(float(sys.argv[2]))  # the idle period is the scenario: a worker between tasks
store.list_collections()
"""


def test_the_client_pings_no_more_often_than_grpc_servers_allow() -> None:
    assert RECONNECT_OPTIONS["grpc.keepalive_time_ms"] == SERVER_MIN_PING_INTERVAL_MS >= GRPC_SERVER_DEFAULT_MIN_PING_MS


@pytest.fixture
def milvus_server(tmp_path: Path) -> Iterator[Sidecar]:
    sidecar = start_milvus_lite(data_dir=tmp_path / "milvus.db", log_dir=tmp_path)
    yield sidecar
    sidecar.stop()


@pytest.mark.slow
def test_an_idle_client_sends_no_keepalive_ping_where_a_frequent_pinger_does(milvus_server: Sidecar) -> None:
    """gRPC's keep-alive trace, in two real processes side by side: the options reach the real channel."""
    env = {**os.environ, "GRPC_TRACE": "http_keepalive", "GRPC_VERBOSITY": "debug"}
    runs = {name: subprocess.Popen([sys.executable, "-c", CLIENT.format(override=override), milvus_server.url,
                                    str(PING_WINDOW_S)], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
            for name, override in (("ours", "{}"), ("pinging", "{'grpc.keepalive_time_ms': 1000}"))}
    pings = {}
    for name, process in runs.items():
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err[-2000:]
        assert "too_many_pings" not in err
        pings[name] = err.count("Finish keepalive ping")
    assert pings["pinging"] >= 1, "the trace shows no ping at all: the test would prove nothing"
    assert pings["ours"] == 0
