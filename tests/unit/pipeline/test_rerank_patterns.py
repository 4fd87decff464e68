"""The reranker's fast text patterns find exactly what the straightforward ones do (issue #13: 2.8 → 1.6 ms)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from backend.pipeline import rerank_local

# The patterns as first written: split into alphanumeric runs, then camelCase parts; identifiers without \b.
WORD = re.compile(r"[A-Za-z0-9]+")
IDENTIFIER = re.compile(r"`[^`\n]+`|\w+(?:\.\w+)+|\w*_\w+|\b[a-z]+[A-Z]\w*|\b\w+(?=\()")
text = st.text(alphabet="aAbBzZ09_-. `()#\néÉxyXY\t", max_size=40)


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(text)
def test_one_pass_tokenizing_equals_splitting_into_runs_first(sample: str) -> None:
    parts = [part for run in WORD.findall(sample) for part in rerank_local._CAMEL_PART.findall(run)]
    assert rerank_local.tokenize(sample) == [rerank_local._stem(part.lower()) for part in parts]


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(text)
def test_anchored_identifier_pattern_finds_the_same_spans(sample: str) -> None:
    assert rerank_local._IDENTIFIER.findall(sample) == IDENTIFIER.findall(sample)


def test_examples() -> None:
    assert rerank_local.tokenize("Call apply_async, applyAsync or HTTPServer2.start()") == [
        "call", "apply", "async", "apply", "async", "or", "http", "server", "2", "start"]
    assert rerank_local._IDENTIFIER.findall("use `x y`, app.conf.update, max_retries, getValue and run(") == [
        "`x y`", "app.conf.update", "max_retries", "getValue", "run"]
