"""An example longer than a chunk, its lines commented: the answer still quotes its end as code.

Real chunking as the indexer runs it, a Git source over file://, real Milvus Lite, the offline answerer.
langchain's markdown separators cut before "# …" lines, comments included, so the example's last chunk began
with a comment that read as a heading and loose prose, and the offline answer left out the line that answered.
"""

from __future__ import annotations

import pytest

from backend.adapters import registry
from backend.evaluation.runner import _ask
from backend.gurus.models import VectorCollection
from backend.sources.models import SourceStatus
from tests.integration.retrieval.conftest import IndexRepo

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]
POOLS = "\n".join(f"# Pool {i} keeps {i * 4} connections open\npool_{i} = quarry.Pool(size={i * 4})" for i in range(24))
PAGE = ("# Timeouts\n\nEvery client waits for the network at four points; configure each one like this:\n\n"
        f"```python\n{POOLS}\n# A client with a 60s timeout for connecting, and a 10s timeout elsewhere.\n"
        "timeout = quarry.Timeout(10.0, connect=60.0)\nclient = quarry.Client(timeout=timeout)\n```\n")


def test_the_end_of_a_long_commented_example_is_quoted_as_code(
    index_repo: IndexRepo,
) -> None:
    guru, source = index_repo({"timeouts.md": PAGE})
    assert source.status == SourceStatus.INDEXED and source.chunk_count >= 2, source.error_message
    asked = _ask(guru, "How do I set a 60 second connect timeout but keep 10 seconds for everything else?", None)
    assert "timeout = quarry.Timeout(10.0, connect=60.0)" in asked.text
    before = asked.text[: asked.text.index("connect=60.0")]
    assert before.rfind("```python") > before.rfind("\n```\n")  # inside a code block that opened as Python
    # Read back from Milvus, the chunk holding the answer begins with the block's opening fence.
    assert asked.grounding is not None
    contexts = asked.grounding.retrieval.contexts
    ids = [i for c in contexts for i in c.chunk_ids]
    texts = [h.text for h in registry.vector_store().chunks(VectorCollection.objects.get(guru_id=guru.pk).name, ids)]
    holding = [t for t in texts if "connect=60.0" in t]
    assert holding and all(t.startswith("```python\n") for t in holding)
