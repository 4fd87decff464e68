"""export_data and import_data stream: an install ten times larger costs them no more memory, measured as the
peak resident size of the real command processes.

The installs use a Milvus server process (the `milvus-lite server` sidecar that `./openguru start` runs and
`./openguru manage` talks to): Milvus Lite opened in-process holds the loaded collection in the command's own
memory (450 MB for 15,000 chunks), which is Milvus's memory, not the export's.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.core.sidecars import Sidecar, start_milvus_lite

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

# Large: ~28 MB of answers and ~15 MB of chunks (text + 384 floats); small: a tenth of it.
LARGE, SMALL = (5_000, 6_000), (500, 600)
# The large install holds ~40 MB more: holding any sizeable part of it at once would show. Measured: +5 MB
# for the export (one 256-row page of vectors), +0.3 MB for the import.
GROWTH_LIMIT_KB = 20 * 1024


def seed(questions: int, chunks: int) -> None:
    """Fill the install: one guru, one indexed source, `questions` long answers, `chunks` chunks."""
    from backend.adapters import registry
    from backend.answering.models import Question
    from backend.gurus.models import Guru, VectorCollection
    from backend.gurus.services import guru_collection_sync
    from backend.pipeline.types import Chunk, SourceKind
    from backend.sources.models import DataSource

    guru = Guru.objects.create(slug="big", name="Big", domain_knowledge="volume")
    guru_collection_sync(guru_id=guru.pk)
    source = DataSource.objects.create(guru=guru, kind="WEBSITE", url="https://example.com/", status="INDEXED",
                                       generation=1, indexed_generation=1, chunk_count=chunks)
    rng = random.Random(7)
    words = [f"word{i}" for i in range(5000)]
    Question.objects.bulk_create(
        [Question(guru=guru, user_question=f"q{i}", question=f"q{i}", slug=f"q-{i}",
                  content=" ".join(rng.choices(words, k=700))) for i in range(questions)], batch_size=500)
    name, store = VectorCollection.objects.get(guru_id=guru.pk).name, registry.vector_store()
    for start in range(0, chunks, 1000):
        store.upsert(name, [Chunk(id=f"c{i}", text=" ".join(rng.choices(words, k=120)),
                                  vector=tuple(rng.uniform(-1, 1) for _ in range(384)), source_id=source.pk,
                                  generation=1, kind=SourceKind.WEBSITE, metadata={"title": f"page {i}"})
                            for i in range(start, min(chunks, start + 1000))])


@pytest.fixture(scope="module")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sidecar]:
    work = tmp_path_factory.mktemp("milvus-server")
    sidecar = start_milvus_lite(data_dir=work / "milvus.db", log_dir=work)
    yield sidecar
    sidecar.stop()


def _env(data_dir: Path, milvus: Sidecar) -> dict[str, str]:
    drop = {"DATABASE_URL", "REDIS_URL", "MILVUS_URI", "DJANGO_SETTINGS_MODULE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return env | {"OPENGURU_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "backend.config.settings.base",
                  "OPENGURU_EMBEDDER": "hashing", "OPENGURU_EMBEDDING_DIMENSION": "384", "MILVUS_URI": milvus.url,
                  "OPENGURU_COLLECTION_PREFIX": f"{data_dir.parent.name}_{data_dir.name}_"}


# VmHWM, read by the process itself as it exits: the peak of its own memory since exec. (wait4's ru_maxrss is
# no use here: Linux carries the forking parent's peak - pytest's - into the child's.)
_PEAK = ("import atexit, runpy, sys; out = sys.argv.pop(1); sys.argv[0] = 'manage.py'; "
         "atexit.register(lambda: open(out, 'w').write("
         "next(l for l in open('/proc/self/status') if l.startswith('VmHWM')))); "
         "runpy.run_path('manage.py', run_name='__main__')")


def _manage(data_dir: Path, milvus: Sidecar, *args: str) -> int:
    """Run manage.py; its peak resident size in KiB."""
    report = data_dir.parent / "peak.txt"
    done = subprocess.run([sys.executable, "-c", _PEAK, str(report), *args], cwd=REPO, env=_env(data_dir, milvus),
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return int(report.read_text().split()[1])


def _round_trip(tmp_path: Path, milvus: Sidecar, size: tuple[int, int]) -> tuple[int, int]:
    source, target, archive = tmp_path / "source", tmp_path / "target", tmp_path / "install.zip"
    for data_dir in (source, target):
        _manage(data_dir, milvus, "migrate", "--noinput")
    _manage(source, milvus, "shell", "-c", f"from tests.integration.test_portability_memory import seed; seed{size}")
    exported = _manage(source, milvus, "export_data", str(archive))
    imported = _manage(target, milvus, "import_data", str(archive))
    return exported, imported


def test_export_and_import_memory_does_not_grow_with_the_install(tmp_path: Path, milvus_server: Sidecar) -> None:
    small = _round_trip(tmp_path / "small", milvus_server, SMALL)
    large = _round_trip(tmp_path / "large", milvus_server, LARGE)
    assert (tmp_path / "large" / "install.zip").stat().st_size > 8 * (tmp_path / "small" / "install.zip").stat().st_size
    print(f"peak RSS KiB: export {small[0]} -> {large[0]}, import {small[1]} -> {large[1]}")
    assert large[0] - small[0] < GROWTH_LIMIT_KB
    assert large[1] - small[1] < GROWTH_LIMIT_KB
