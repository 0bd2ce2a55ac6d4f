"""Model prices in USD per million tokens; a workspace can override any model's price."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


# Published list prices; a dated model name matches its family by prefix.
BUILT_IN: dict[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4-turbo": Price(10.00, 30.00),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "o1-mini": Price(1.10, 4.40),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "o1": Price(15.00, 60.00),
    "o3": Price(2.00, 8.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-3-haiku": Price(0.25, 1.25),
    "claude-3-opus": Price(15.00, 75.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-opus-4": Price(15.00, 75.00),
    "claude-haiku-4": Price(1.00, 5.00),
}

FREE = Price(0.0, 0.0)


def price_of(model: str, overrides: dict[str, Price] | None = None) -> Price:
    """The workspace's override, else the built-in price (longest prefix), else free.

    A router prefix such as `openai/` or `anthropic/` (OpenRouter names) is ignored.
    """
    if overrides and model in overrides:
        return overrides[model]
    bare = model.rsplit("/", 1)[-1]
    if overrides and bare in overrides:
        return overrides[bare]
    best = ""
    for name in BUILT_IN:
        if bare.startswith(name) and len(name) > len(best):
            best = name
    return BUILT_IN[best] if best else FREE
