"""Question cost: tokens per stage × the model's price, with dated ids, cached tokens and unknown models."""

from __future__ import annotations

from decimal import Decimal

import pytest

from backend.pipeline.pricing import parse_prices, price_for, usage_cost

PRICES = parse_prices({
    "gpt-4o": {"input": 2.5, "output": 10},
    "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cached_input": 0.075},
    "gemini-2.5-flash": {"input": 0.3, "output": 2.5},
})


def test_the_longest_matching_id_wins_and_provider_prefixes_are_ignored() -> None:
    assert price_for("gpt-4o-mini-2024-07-18", PRICES) == PRICES["gpt-4o-mini"]
    assert price_for("GPT-4o-2024-08-06", PRICES) == PRICES["gpt-4o"]
    assert price_for("models/gemini-2.5-flash", PRICES) == PRICES["gemini-2.5-flash"]
    assert price_for("llama3.1:8b", PRICES) is None


def test_cost_sums_stages_and_prices_cached_prompt_tokens_apart() -> None:
    usage = {
        "grade": {"model": "gpt-4o-mini", "prompt_tokens": 2_000, "completion_tokens": 100, "cached_prompt_tokens": 0},
        "answer": {"model": "gpt-4o-mini", "prompt_tokens": 3_000, "completion_tokens": 500,
                   "cached_prompt_tokens": 2_000},
        "understand": {"model": "llama3.1:8b", "prompt_tokens": 10_000, "completion_tokens": 10_000},
    }
    # grade: 2000×0.15 + 100×0.6 = 360; answer: 1000×0.15 + 2000×0.075 + 500×0.6 = 600 (per million)
    assert usage_cost(usage, PRICES) == Decimal("0.000960")
    assert usage_cost({}, PRICES) == Decimal("0.000000")


@pytest.mark.parametrize("raw", [{"m": {"input": 1}}, {"m": {"input": -1, "output": 1}},
                                 {"m": {"input": "1", "output": 1}}, {"m": {"input": True, "output": 1}}, {"m": 3}])
def test_malformed_prices_are_refused(raw: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError):
        parse_prices(raw)
