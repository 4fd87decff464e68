"""What an answer cost: each stage's tokens priced by its model, in USD per million tokens."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

PER_TOKENS = Decimal(1_000_000)
CENTS_PRECISION = Decimal("0.000001")  # Question.cost_usd has six decimal places


@dataclass(frozen=True)
class Price:
    """USD per million tokens; cached prompt tokens cost `cached_input` (else the input price)."""

    input: Decimal
    output: Decimal
    cached_input: Decimal | None = None


def parse_prices(raw: Mapping[str, Any]) -> dict[str, Price]:
    """Model id → Price from {"model": {"input": 0.15, "output": 0.6, "cached_input": 0.075}}; ValueError if bad."""
    prices: dict[str, Price] = {}
    for model, entry in raw.items():
        if not isinstance(entry, Mapping) or "input" not in entry or "output" not in entry:
            raise ValueError(f"price of {model!r} needs 'input' and 'output' (USD per million tokens)")
        values = [entry["input"], entry["output"], entry.get("cached_input")]
        if any(v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or v < 0) for v in values):
            raise ValueError(f"prices of {model!r} must be non-negative numbers")
        cached = None if values[2] is None else Decimal(str(values[2]))
        prices[model.lower()] = Price(Decimal(str(values[0])), Decimal(str(values[1])), cached)
    return prices


def price_for(model: str, prices: Mapping[str, Price]) -> Price | None:
    """The price of a model id, also for dated or prefixed ids ("models/gemini-2.5-flash", "gpt-4o-2024-08-06").

    The longest known id that the given id starts with wins, so "gpt-4o-mini-…" is not priced as "gpt-4o".
    """
    name = model.lower().removeprefix("models/")
    if name in prices:
        return prices[name]
    matches = [known for known in prices if name.startswith(known)]
    return prices[max(matches, key=len)] if matches else None


def usage_cost(usage: Mapping[str, Mapping[str, Any]], prices: Mapping[str, Price]) -> Decimal:
    """Sum over stages of tokens × price; stages whose model has no price count as free."""
    total = Decimal(0)
    for stage in usage.values():
        price = price_for(str(stage.get("model", "")), prices)
        if price is None:
            continue
        prompt, cached = int(stage.get("prompt_tokens") or 0), int(stage.get("cached_prompt_tokens") or 0)
        cached = min(cached, prompt)
        cached_rate = price.cached_input if price.cached_input is not None else price.input
        total += ((prompt - cached) * price.input + cached * cached_rate
                  + int(stage.get("completion_tokens") or 0) * price.output) / PER_TOKENS
    return total.quantize(CENTS_PRECISION)
