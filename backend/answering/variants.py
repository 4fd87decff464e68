"""Names a question uses that the guru holds under another form: "MacBook" where the docs say "macOS"."""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from backend.adapters import registry
from backend.pipeline.ports import Embedder
from backend.pipeline.rerank_local import _stem, identifier_parts

VARIANT_SIMILARITY = 0.78
"""MiniLM cosine of two single words from which one names what the other does. Pairs measured: postgres ~
postgresql 0.90, jinja2 ~ jinja 0.88, reboot ~ restart 0.85, macbook ~ mac 0.80 at or above it; chrome ~ browser
0.77, oauth ~ auth 0.75, firefox ~ browser 0.75, windows ~ window 0.71, docker ~ container 0.65 (related, not the
same thing) below, and rival or sibling products far below (deno ~ node 0.22, pnpm ~ npm 0.57, mariadb ~ mysql
0.50, chromium ~ chrome 0.65)."""
MIN_LETTERS = 3
MAX_CANDIDATES = 3000
"""Evidence words compared per question (a few contexts hold a few hundred)."""
CACHE_WORDS = 50_000
"""Word vectors kept per process (384 floats each: about 75 MB at most)."""

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
_Vector = npt.NDArray[np.float32]
_caches: weakref.WeakKeyDictionary[Embedder, OrderedDict[str, _Vector]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _vectors(embedder: Embedder, words: Sequence[str]) -> dict[str, _Vector]:
    """Each word's unit vector, embedding in one batch only the words not cached yet."""
    with _lock:
        cache = _caches.setdefault(embedder, OrderedDict())
        found = {w: cache[w] for w in words if w in cache}
        for word in found:
            cache.move_to_end(word)
    missing = [w for w in dict.fromkeys(words) if w not in found]
    if missing:
        raw = np.asarray(embedder.embed_documents(missing), dtype=np.float32)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        embedded: _Vector = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        fresh = dict(zip(missing, embedded, strict=True))
        found.update(fresh)
        with _lock:
            cache.update(fresh)
            while len(cache) > CACHE_WORDS:
                cache.popitem(last=False)
    return found


def _candidates(texts: Iterable[str], asked: Collection[str]) -> list[str]:
    """The evidence's words as written and their parts ("macOS": "macos", "mac")."""
    words = {part.lower() for text in texts for w in _WORD.findall(text) for part in (w, *identifier_parts(w))}
    return sorted(w for w in words if len(w) >= MIN_LETTERS and not w.isdigit() and w not in asked)[:MAX_CANDIDATES]


def _as_written(question: str, names: Sequence[str]) -> dict[str, str]:
    """Each name (a stem, as the guru's counts hold it) → the word the question wrote ("postgr" → "postgres"): the
    model knows words, not stems. Named compounds ("flask-login") name one product and are left out."""
    written: dict[str, str] = {}
    for word in _WORD.findall(question):
        lower = word.lower()
        for name in (lower, _stem(lower)):
            if name in names and name.isalnum():
                written.setdefault(name, lower)
    return written


def name_variants(question: str, names: Sequence[str], texts: Sequence[str], *,
                  embedder: Embedder | None = None) -> frozenset[str]:
    """Of `names` (the question's names the guru does not hold), those a word of `texts` (the retrieved evidence)
    means as well.

    A user writes the thing they have ("MacBook", "reboot", "postgres") where the docs write its kind or its other
    name ("macOS", "restart", "PostgreSQL"): such a name is no sign that the question is about something the guru
    lacks. A named compound ("Flask-Login") names one product, never a variant of a word.
    """
    written = _as_written(question, names)
    candidates = _candidates(texts, set(written.values())) if written else []
    if not candidates:
        return frozenset()
    vectors = _vectors(embedder or registry.word_embedder(), [*dict.fromkeys(written.values()), *candidates])
    evidence = np.stack([vectors[w] for w in candidates])
    return frozenset(n for n, w in written.items() if float(np.max(evidence @ vectors[w])) >= VARIANT_SIMILARITY)
