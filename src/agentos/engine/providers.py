"""Model providers behind `llm` nodes: OpenAI-compatible, Anthropic, and the offline mock.

Base URLs and keys come from the environment at call time (OPENAI_BASE_URL,
OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY), so any OpenAI-compatible
endpoint (OpenRouter, vLLM, Ollama) works by pointing OPENAI_BASE_URL at it.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from typing import Any

import httpx

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"


class ProviderError(Exception):
    """The provider refused or failed; the message is the provider's own."""


@dataclass
class Completion:
    text: str
    input_tokens: int
    output_tokens: int


class Providers:
    """One shared keep-alive HTTP client for every model call of the process."""

    def __init__(self, timeout: float = 120.0) -> None:
        self.http = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0))
        # Set when the server stops: waits (a mock's delay) end at once instead of holding it up.
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()

    def close(self) -> None:
        self.stopping.set()
        self.http.close()

    def complete(self, node: dict[str, Any], prompt: str, system: str | None) -> Completion:
        provider = node.get("provider", "openai")
        if provider == "mock":
            return mock_complete(node, prompt, self.stopping)
        if provider == "anthropic":
            return self._anthropic(node, prompt, system)
        return self._openai(node, prompt, system)

    def _openai(self, node: dict[str, Any], prompt: str, system: str | None) -> Completion:
        base = os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE
        headers = {}
        if key := os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {key}"
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": prompt}
        ]
        body: dict[str, Any] = {"model": node["model"], "messages": messages}
        if node.get("temperature") is not None:
            body["temperature"] = node["temperature"]
        if node.get("max_tokens") is not None:
            body["max_tokens"] = node["max_tokens"]
        data = self._post(base.rstrip("/") + "/chat/completions", headers, body)
        try:
            text = data["choices"][0]["message"]["content"] or ""
            usage = data.get("usage") or {}
            return Completion(text, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0)))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ProviderError(f"unexpected response shape: {exc!r}") from None

    def _anthropic(self, node: dict[str, Any], prompt: str, system: str | None) -> Completion:
        base = (os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_DEFAULT_BASE).rstrip("/")
        url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key := os.environ.get("ANTHROPIC_API_KEY"):
            headers["x-api-key"] = key
        body: dict[str, Any] = {
            "model": node["model"],
            "max_tokens": node.get("max_tokens") or 1024,
            "messages": [{"role": "user", "content": prompt}],
        }
        if system:
            body["system"] = system
        if node.get("temperature") is not None:
            body["temperature"] = node["temperature"]
        data = self._post(url, headers, body)
        try:
            text = "".join(b.get("text", "") for b in data["content"] if b.get("type") == "text")
            usage = data.get("usage") or {}
            return Completion(text, int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProviderError(f"unexpected response shape: {exc!r}") from None

    def _post(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self.http.post(url, headers=headers, json=body)
        except httpx.HTTPError as exc:
            raise ProviderError(f"request to {url} failed: {exc}") from None
        if response.status_code >= 400:
            raise ProviderError(f"HTTP {response.status_code}: {_error_message(response)}")
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(f"HTTP {response.status_code}: response is not JSON") from None
        if not isinstance(data, dict):
            raise ProviderError("unexpected response shape: not an object")
        return data


def _error_message(response: httpx.Response) -> str:
    """Both OpenAI and Anthropic answer errors as {"error": {"message": ...}}."""
    try:
        data = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return data["message"]
    return response.text.strip()[:500]


def mock_complete(node: dict[str, Any], prompt: str, stopping: threading.Event | None = None) -> Completion:
    """Answer from the node's `responses` table, offline.

    A response is a string or {"text", "match"?, "input_tokens"?, "output_tokens"?,
    "delay_ms"?, "error"?}: the first whose `match` occurs in the prompt (case folded)
    wins, else the first without `match`. Token counts default to ~4 characters a token.
    """
    responses = node.get("responses") or []
    chosen: Any = None
    folded = prompt.casefold()
    for response in responses:
        match = response.get("match") if isinstance(response, dict) else None
        if isinstance(match, str) and match.casefold() in folded:
            chosen = response
            break
    if chosen is None:
        chosen = next(
            (r for r in responses if not (isinstance(r, dict) and r.get("match"))),
            responses[0] if responses else "",
        )
    if isinstance(chosen, str):
        chosen = {"text": chosen}
    if chosen.get("delay_ms") and (stopping or threading.Event()).wait(float(chosen["delay_ms"]) / 1000):
        raise ProviderError("interrupted: the server stopped")
    if isinstance(chosen.get("error"), str):
        raise ProviderError(chosen["error"])
    text = str(chosen.get("text", ""))
    return Completion(
        text,
        int(chosen.get("input_tokens", math.ceil(len(prompt) / 4))),
        int(chosen.get("output_tokens", math.ceil(len(text) / 4))),
    )
