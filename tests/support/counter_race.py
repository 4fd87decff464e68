"""Run in several processes at once: threads hammer one counter and one lease of the counter store named.

Prints "ready", waits for the go file (so every process races in the same moment), then prints one JSON
line: the values its increments returned and how many of its claims succeeded.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import django

THREADS = 8
INCREMENTS = 20


def main(go_file: Path, store_path: str) -> None:
    django.setup()
    from django.db import connection
    from django.utils.module_loading import import_string

    store = import_string(store_path)()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while not go_file.exists():
        time.sleep(0.01)
    start = threading.Barrier(THREADS)

    def run(_: int) -> tuple[list[int], int]:
        start.wait()
        try:
            values = [store.increment("race:counter", ttl=300) for _ in range(INCREMENTS)]
            return values, int(store.claim("race:lease", uuid.uuid4().hex, ttl=300))
        finally:
            connection.close()  # each thread has its own connection

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(pool.map(run, range(THREADS)))
    values = [value for thread_values, _ in results for value in thread_values]
    sys.stdout.write(json.dumps({"values": values, "claims": sum(claims for _, claims in results)}) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
