"""What a model call costs: a small, dated table of list prices per million tokens.

Prices change; this table is a snapshot (``PRICES_AS_OF``) of the providers' published
list prices for common models. A model not in it has no cost (``None``), and the call
says so, rather than a guess. OpenRouter reports each call's own cost in its usage
(``usage.cost``); that figure wins over the table when present.

A call whose usage cannot be trusted (``usage.UsageReader``) costs the most one call of its
model can: its whole context window read and its longest answer written, at list price
(``worst_case_usd``), or ``CALL_USD_CEILING`` for a model the table does not know.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRICES_AS_OF = "2025-11-01"

CALL_USD_CEILING = 100.0
"""What a call whose usage is not trusted costs when its model has no price; and a cost a
provider reports above it is not trusted. More than one call of any published model can
cost at list price (the dearest, o1-pro: 200k tokens in at $150/M and 100k out at $600/M, $90)."""


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens. ``cached_input``: tokens read from the provider's
    prompt cache, when it prices them apart; ``cache_write``: Anthropic's cache writes.
    ``context``, ``max_output``: the model's published context window and longest answer
    in tokens (betas included), the most one call can read and write."""

    input: float
    output: float
    context: int
    max_output: int
    cached_input: float | None = None
    cache_write: float | None = None


def _anthropic(input: float, output: float, context: int, max_output: int) -> Price:
    # Anthropic: cache reads cost a tenth of input, 5-minute cache writes a quarter more.
    return Price(input, output, context, max_output, cached_input=round(input * 0.1, 6),
                 cache_write=round(input * 1.25, 6))


PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-5": Price(1.25, 10.00, 400_000, 128_000, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 400_000, 128_000, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 400_000, 128_000, 0.005),
    "gpt-4.1": Price(2.00, 8.00, 1_047_576, 32_768, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 1_047_576, 32_768, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 1_047_576, 32_768, 0.025),
    "gpt-4o": Price(2.50, 10.00, 128_000, 16_384, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 128_000, 16_384, 0.075),
    "o3": Price(2.00, 8.00, 200_000, 100_000, 0.50),
    "o3-mini": Price(1.10, 4.40, 200_000, 100_000, 0.55),
    "o4-mini": Price(1.10, 4.40, 200_000, 100_000, 0.275),
    "gpt-3.5-turbo": Price(0.50, 1.50, 16_385, 4_096),
    # Anthropic
    "claude-opus-4-5": _anthropic(5.00, 25.00, 200_000, 64_000),
    "claude-opus-4-1": _anthropic(15.00, 75.00, 200_000, 32_000),
    "claude-opus-4": _anthropic(15.00, 75.00, 200_000, 32_000),
    "claude-sonnet-4-5": _anthropic(3.00, 15.00, 1_000_000, 64_000),
    "claude-sonnet-4": _anthropic(3.00, 15.00, 1_000_000, 64_000),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00, 200_000, 128_000),
    "claude-3-5-sonnet": _anthropic(3.00, 15.00, 200_000, 8_192),
    "claude-haiku-4-5": _anthropic(1.00, 5.00, 200_000, 64_000),
    "claude-3-5-haiku": _anthropic(0.80, 4.00, 200_000, 8_192),
    "claude-3-haiku": _anthropic(0.25, 1.25, 200_000, 4_096),
    "claude-3-opus": _anthropic(15.00, 75.00, 200_000, 4_096),
    # Google, as OpenRouter serves it (google/...)
    "gemini-2.5-pro": Price(1.25, 10.00, 1_048_576, 65_536),
    "gemini-2.5-flash": Price(0.30, 2.50, 1_048_576, 65_536),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, 1_048_576, 65_536),
}

_VERSION_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)?$")


def _canonical(name: str) -> str:
    """``anthropic/claude-3.5-sonnet`` and ``claude-3-5-sonnet-20241022`` name one model:
    the vendor prefix goes, dots in versions become dashes, a date or ``-latest`` suffix goes."""
    name = name.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]
    name = re.sub(r"(?<=\d)\.(?=\d)", "-", name)
    return _VERSION_SUFFIX.sub("", name, count=1)


_CANONICAL = {_canonical(name): price for name, price in PRICES.items()}


def price_of(model: str | None) -> Price | None:
    """The table's price for ``model`` (any provider's spelling of it), or None."""
    if not model:
        return None
    return _CANONICAL.get(_canonical(model))


def cost_usd(model: str | None, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
             cache_write_tokens: int = 0) -> float | None:
    """The call's cost by the table; ``input_tokens`` counts every prompt token, cached ones too."""
    price = price_of(model)
    if price is None:
        return None
    cached = min(cached_input_tokens, input_tokens)
    writes = min(cache_write_tokens, input_tokens - cached)
    plain = input_tokens - cached - writes
    usd = (plain * price.input + output_tokens * price.output
           + cached * (price.cached_input if price.cached_input is not None else price.input)
           + writes * (price.cache_write if price.cache_write is not None else price.input))
    return round(usd / 1_000_000, 8)


def worst_case_usd(model: str | None) -> float | None:
    """The most one call of ``model`` can cost at list price: its whole context window read
    uncached and its longest answer written. None for a model the table does not know."""
    price = price_of(model)
    if price is None:
        return None
    return round((price.context * price.input + price.max_output * price.output) / 1_000_000, 8)
