"""A page whose chunk boundary falls between a paragraph and its example: the context still holds the example.

Real chunking (the splitter as the indexer runs it), a Git source over file://, real Milvus Lite: the context
is completed from the next chunk read back by id.
"""

from __future__ import annotations

import pytest

from backend.adapters import registry
from backend.pipeline.chunking import default_chunking, split_document
from backend.pipeline.ingest_types import ContentType, Document
from backend.retrieval.services import CHUNKS_PER_DOCUMENT, retrieve
from backend.sources.models import SourceStatus
from tests.integration.retrieval.conftest import IndexRepo

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]
CODE = "```python\nfrom quarry.middleware import TrustProxies\n\napp.wsgi_app = TrustProxies(app.wsgi_app, hops=1)\n```"
AFTER = "Restart the server after changing the number of hops; every worker reads it once, at start."
SENTENCE = "The quarry server trusts forwarded headers only from the proxies you name in front of it. "


def _page() -> str:
    """A page whose chunk boundary falls right before CODE, after as many chunks of the paragraph as a context
    takes from one page (so the chunk holding the code is not among them): the paragraph grows until it does."""
    embedder = registry.embedder()
    config = default_chunking(embedder_max_tokens=embedder.max_input_tokens)
    for repeats in range(1, 200):
        page = f"# Proxies\n\n{SENTENCE * repeats}Wrap the application to tell it so.\n\n{CODE}\n\n{AFTER}\n"
        doc = Document(key="proxies.md", text=page, title="proxies.md", link="", content_type=ContentType.MARKDOWN)
        chunks = split_document(doc, config, embedder.count_tokens)
        ends = [i for i, c in enumerate(chunks) if c.text.rstrip().endswith("so.") and "TrustProxies" not in c.text]
        if ends and ends[0] >= CHUNKS_PER_DOCUMENT - 1:  # the passages before the code fill the page's slots
            return page
    raise AssertionError("no paragraph length puts the chunk boundary right before the example")


def test_the_example_after_a_chunk_boundary_reaches_the_context(
    index_repo: IndexRepo,
) -> None:
    guru, source = index_repo({"proxies.md": _page()})
    assert source.status == SourceStatus.INDEXED and source.chunk_count >= 2, source.error_message
    contexts = retrieve(guru=guru, query="Which proxies does the quarry server trust forwarded headers from?",
                        rerank_threshold=0.0).contexts
    assert contexts and "trusts forwarded headers" in contexts[0].text
    assert len(contexts[0].chunk_ids) == CHUNKS_PER_DOCUMENT  # the code's own chunk is not one of them
    # The whole block, closed: the chunking moves the closing fence back to the chunk holding the code.
    assert contexts[0].text.rstrip().endswith("TrustProxies(app.wsgi_app, hops=1)\n```")
    assert contexts[0].text.count("TrustProxies(app.wsgi_app") == 1
