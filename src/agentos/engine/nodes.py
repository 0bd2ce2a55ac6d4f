"""The interpreter: walks a workflow's nodes over its state variables.

Nodes run in order from the first, or jump to `next` (and a condition's `then`/`else`;
a condition without `else` falls through to the following node when false). A node that
fails ends the run with a NodeFailure whose message becomes the run's `error`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agentos import storable
from agentos.engine.pricing import Price, price_of
from agentos.engine.providers import ProviderError, Providers
from agentos.engine.templates import render, render_value
from agentos.evals.expression import ExpressionError, compile_expression

MAX_STEPS = 1000

# emit(kind, data, slow): `slow` says the node is about to wait on the network or a timer.
Emit = Callable[[str, dict[str, Any], bool], None]


class NodeFailure(Exception):
    pass


class Execution:
    """One run's walk through the graph; `state` and `cost_usd` are its results."""

    def __init__(
        self,
        nodes: list[dict[str, Any]],
        input: dict[str, Any],
        providers: Providers,
        prices: dict[str, Price],
        emit: Emit,
    ) -> None:
        self.nodes = nodes
        self.input = input
        self.state: dict[str, Any] = {}
        self.cost_usd = 0.0
        self._providers = providers
        self._prices = prices
        self._emit = emit

    def run(self) -> None:
        position = {node["id"]: i for i, node in enumerate(self.nodes)}
        i = 0
        steps = 0
        while i < len(self.nodes):
            steps += 1
            if steps > MAX_STEPS:
                raise NodeFailure(f"stopped after {MAX_STEPS} node steps (does the graph loop?)")
            node = self.nodes[i]
            self._emit("node_started", {"node_id": node["id"], "node_type": node["type"]}, is_slow(node))
            started = time.perf_counter()
            details: dict[str, Any] = {}
            try:
                jump = self._step(node, details)
            except NodeFailure as exc:
                self._finished(node, started, details, "failed", str(exc))
                raise
            except Exception as exc:  # a bug or an odd value must fail the run, not the server
                message = f"node '{node['id']}' failed: {type(exc).__name__}: {exc}"
                self._finished(node, started, details, "failed", message)
                raise NodeFailure(message) from exc
            self._finished(node, started, details, "success", None)
            i = position[jump] if jump is not None else i + 1

    def _finished(
        self, node: dict[str, Any], started: float, details: dict[str, Any], status: str, error: str | None
    ) -> None:
        data = {
            "node_id": node["id"],
            "node_type": node["type"],
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000),
            **details,
        }
        if error is not None:
            data["error"] = error
        self._emit("node_finished", data, False)

    def _names(self) -> dict[str, Any]:
        return {**self.state, "state": self.state, "input": self.input}

    def _evaluate(self, node: dict[str, Any], source: str) -> Any:
        try:
            return compile_expression(source).evaluate(self._names())
        except ExpressionError as exc:
            raise NodeFailure(f"node '{node['id']}': expression error: {exc}") from None

    def _step(self, node: dict[str, Any], details: dict[str, Any]) -> str | None:
        kind = node["type"]
        if kind == "llm":
            self._llm(node, details)
        elif kind == "condition":
            held = bool(self._evaluate(node, node["expression"]))
            details["result"] = held
            target = node.get("then") if held else node.get("else")
            return target if isinstance(target, str) else None
        elif kind == "set":
            for var, source in node["values"].items():
                self._assign(node, var, self._evaluate(node, source), "value")
        elif kind == "http":
            self._http(node, details)
        next_id = node.get("next")
        return next_id if isinstance(next_id, str) else None

    def _llm(self, node: dict[str, Any], details: dict[str, Any]) -> None:
        provider = node.get("provider", "openai")
        prompt = render(node["prompt"], self.state, self.input)
        system = render(node["system"], self.state, self.input) if node.get("system") else None
        details.update(provider=provider, model=node["model"], mock=provider == "mock")
        try:
            completion = self._providers.complete(node, prompt, system)
        except ProviderError as exc:
            raise NodeFailure(f"llm node '{node['id']}' ({provider}): {exc}") from None
        cost = price_of(node["model"], self._prices).cost(completion.input_tokens, completion.output_tokens)
        self.cost_usd += cost
        self._assign(node, node["output"], completion.text, "output")
        details.update(
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cost_usd=round(cost, 8),
        )

    def _http(self, node: dict[str, Any], details: dict[str, Any]) -> None:
        method = str(node.get("method", "GET")).upper()
        url = render(node["url"], self.state, self.input)
        headers = {k: render(str(v), self.state, self.input) for k, v in (node.get("headers") or {}).items()}
        body = render_value(node.get("body"), self.state, self.input) if node.get("body") is not None else None
        details.update(method=method, url=url)
        try:
            response = self._providers.http.request(method, url, headers=headers, json=body)
        except Exception as exc:
            raise NodeFailure(f"http node '{node['id']}': {method} {url} failed: {exc}") from None
        details["http_status"] = response.status_code
        if response.status_code >= 400:
            raise NodeFailure(
                f"http node '{node['id']}': {method} {url} answered {response.status_code}: "
                f"{response.text.strip()[:300]}"
            )
        try:
            answer: Any = response.json()
        except ValueError:
            answer = response.text
        self._assign(node, node["output"], answer, "output")

    def _assign(self, node: dict[str, Any], var: str, value: Any, what: str) -> None:
        """Set a state variable; a value the database could not store fails the node."""
        reason = storable.problem(value, var)
        if reason:
            raise NodeFailure(f"node '{node['id']}': {what} '{var}' cannot be stored: {reason}")
        self.state[var] = value


def is_slow(node: dict[str, Any]) -> bool:
    """Whether the node waits on the network or a timer."""
    if node["type"] == "http":
        return True
    if node["type"] != "llm":
        return False
    if node.get("provider", "openai") != "mock":
        return True
    return any(isinstance(r, dict) and r.get("delay_ms") for r in node.get("responses") or [])
