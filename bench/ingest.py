"""Ingestion throughput: chunks/second through the whole write path against the raw embedder.

Pipeline = split documents (token-measured) -> embed in batches -> upsert dense + BM25 into Milvus Lite.
Baseline = the same embedder embedding the same chunk texts, nothing else, in the same run.
Target: the pipeline keeps at least 80 % of the embedder's throughput (ratio >= 0.8).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder  # noqa: E402
from backend.adapters.vector_store.milvus import MilvusVectorStore  # noqa: E402
from backend.pipeline.chunking import default_chunking, split_document  # noqa: E402
from backend.pipeline.ingest_types import ContentType, Document  # noqa: E402
from backend.pipeline.types import SourceKind  # noqa: E402
from backend.sources.writer import ChunkWriter  # noqa: E402

VOCABULARY = (
    "worker broker queue task retry result backend schedule routing message acknowledge timeout "
    "concurrency prefork signal chord group chain serializer redis configuration option default example "
    "command monitoring event guru source index chunk vector search answer citation trust stream"
).split()


def _documents(count: int, paragraphs: int, seed: int = 11) -> list[Document]:
    rng = random.Random(seed)

    def sentence() -> str:
        return " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(8, 20))).capitalize() + "."

    docs = []
    for i in range(count):
        body = "\n\n".join(f"## Section {p}\n\n" + " ".join(sentence() for _ in range(6)) for p in range(paragraphs))
        docs.append(Document(key=f"https://docs.example.com/page-{i}", text=body, title=f"Page {i}",
                             link=f"https://docs.example.com/page-{i}", content_type=ContentType.MARKDOWN))
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="~120 chunks instead of ~2,000 (< 60 s)")
    quick = parser.parse_args().quick
    embedder = LocalMiniLMEmbedder()
    embedder.load()
    config = default_chunking(embedder_max_tokens=embedder.max_input_tokens)
    docs = _documents(count=20 if quick else 330, paragraphs=12)
    embedder.embed_documents([docs[0].text[:1200]] * 8)  # warm up: the first full-window batch allocates
    with tempfile.TemporaryDirectory() as tmp:
        store = MilvusVectorStore(uri=str(Path(tmp) / "bench.db"))
        store.ensure_collection("bench", dimension=embedder.dimension)
        writer = ChunkWriter(store=store, embedder=embedder, collection="bench", source_id=1, generation=1,
                             kind=SourceKind.WEBSITE, config=config)
        start = time.perf_counter()
        for doc in docs:
            writer.add(doc)
        writer.flush()
        pipeline_s = time.perf_counter() - start
        chunks = writer.written
        info = store.collection_info("bench")
    texts = [c.text for doc in docs for c in split_document(doc, config, embedder.count_tokens)]
    start = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed_documents(texts[i : i + 32])
    raw_s = time.perf_counter() - start
    pipeline_rate, raw_rate = chunks / pipeline_s, len(texts) / raw_s
    rows = info.row_count if info else 0
    print(f"documents={len(docs)} chunks={chunks} rows_in_milvus={rows} pipeline_s={pipeline_s:.1f} raw_s={raw_s:.1f}")
    print(f"ingest_chunks_per_s={pipeline_rate:.1f} raw_embed_chunks_per_s={raw_rate:.1f} target=0.8 "
          f"ratio={pipeline_rate / raw_rate:.3f}")


if __name__ == "__main__":
    main()
