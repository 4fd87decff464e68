"""bench/summaries.py's expectations agree with the tree builder's own count; its PDFs and fake LLM work."""

from __future__ import annotations

import asyncio
import io
import json
import math
from typing import Any

import pytest
from pypdf import PdfReader

from backend.pipeline.summary_tree import tree_size
from bench.summaries import Plan, layer_calls, source_pdfs
from tests.fakes import paced_llm


@pytest.mark.parametrize("fan_in", [2, 3, 7, 8])
def test_the_layers_add_up_to_the_tree_size_and_the_fewest_merges(fan_in: int) -> None:
    for pieces in range(1, 80):
        assert sum(layer_calls(pieces, fan_in, leaves=True)) == tree_size(pieces, fan_in)
        assert sum(layer_calls(pieces, fan_in, leaves=False)) == math.ceil((pieces - 1) / (fan_in - 1))


def test_rounds_are_each_layers_calls_over_the_concurrency() -> None:
    plan = Plan(fan_in=7, pieces=[11, 1], chars=1, layers=[[11, 1, 1], [1], [1]])
    assert plan.rounds(4) == 3 + 1 + 1 + 1 + 1
    assert plan.rounds(1) == 15


def test_the_pdfs_hold_at_least_the_asked_characters() -> None:
    (small, chars), (larger, more) = source_pdfs((2000, 6000))
    assert chars >= 2000 and more >= 6000
    for data, count in ((small, chars), (larger, more)):
        text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
        assert len(text) >= count * 0.9


def _call(body: dict[str, Any], path: str = "/v1/chat/completions", method: str = "POST") -> dict[str, Any]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(paced_llm.app({"type": "http", "path": path, "method": method}, receive, send))
    return dict(json.loads(b"".join(m.get("body", b"") for m in sent)))


def test_the_paced_fake_answers_a_plain_call_with_text_and_counts_it() -> None:
    paced_llm.STATS.reset()
    prompt = "Summarise the following material in at most 1500 characters.\n\n" + "word " * 400
    reply = _call({"model": "paced", "messages": [{"role": "user", "content": prompt}]})
    text = reply["choices"][0]["message"]["content"]
    assert 1000 < len(text) <= paced_llm.PLAIN_CHARS and not text.startswith("{")
    assert reply["usage"]["prompt_tokens"] == math.ceil(len(prompt) / 4)
    stats = _call({}, "/stats", "GET")
    assert stats["plain_calls"] == 1 and stats["json_calls"] == 0
    assert stats["plain_mean_ms"] >= paced_llm.JSON_MS
    paced_llm.STATS.reset()
