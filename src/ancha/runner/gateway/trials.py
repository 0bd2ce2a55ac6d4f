"""A trial as the model gateway sees it: its URL prefix, its calls and their cost, its budget;
and the variables that point an agent's model clients at the gateway."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from ancha.results.run_folder import TrialFolder
from ancha.runner.gateway.prices import CALL_USD_CEILING, PRICES_AS_OF, cost_usd, worst_case_usd
from ancha.runner.gateway.usage import Usage

PROVIDERS = {"api.openai.com": "openai", "api.anthropic.com": "anthropic", "openrouter.ai": "openrouter"}
"""The providers the gateway knows by domain; any other allowed domain is recorded by its domain."""


def model_environment(trial_url: str, hosts: Iterable[str], existing: Mapping[str, str] | None = None) \
        -> dict[str, str]:
    """The variables that send an agent's model calls through the gateway, for a trial whose
    gateway prefix is ``trial_url`` (``http://HOST:PORT/t/KEY``; a container passes the
    address it reaches the gateway at). ``existing``: the agent's environment so far, so that
    ``OPENAI_BASE_URL`` is pointed at OpenRouter only when nothing else set it.

    - ``api.openai.com``: ``OPENAI_BASE_URL`` (``.../api.openai.com/v1``, as the SDKs expect);
    - ``api.anthropic.com``: ``ANTHROPIC_BASE_URL`` (``.../api.anthropic.com``);
    - ``openrouter.ai``: ``OPENROUTER_BASE_URL`` (``.../openrouter.ai/api/v1``), and
      ``OPENAI_BASE_URL`` too when unset, since OpenRouter speaks OpenAI's API;
    - every domain: ``ANCHA_MODEL_URLS``, a JSON object from domain to its gateway URL.
    """
    trial_url = trial_url.rstrip("/")
    hosts = list(dict.fromkeys(hosts))
    urls = {host: f"{trial_url}/{host}" for host in hosts}
    env: dict[str, str] = {}
    if "api.openai.com" in urls:
        env["OPENAI_BASE_URL"] = urls["api.openai.com"] + "/v1"
    if "api.anthropic.com" in urls:
        env["ANTHROPIC_BASE_URL"] = urls["api.anthropic.com"]
    if "openrouter.ai" in urls:
        env["OPENROUTER_BASE_URL"] = urls["openrouter.ai"] + "/api/v1"
        if "OPENAI_BASE_URL" not in env and "OPENAI_BASE_URL" not in (existing or {}):
            env["OPENAI_BASE_URL"] = env["OPENROUTER_BASE_URL"]
    env["ANCHA_MODEL_URLS"] = json.dumps(urls, separators=(",", ":"))
    return env


@dataclass
class ModelCall:
    """One call through the gateway, as ``models.jsonl`` holds it."""

    seq: int
    host: str
    method: str
    path: str
    status: int
    stream: bool
    latency_ms: float
    usage: Usage = field(default_factory=Usage)
    requested_model: str | None = None
    error: str | None = None

    @property
    def provider(self) -> str:
        return PROVIDERS.get(self.host, self.host)

    @property
    def cost(self) -> tuple[float | None, str]:
        """The call's cost in US dollars and where it comes from (``provider``, ``price_table``;
        for a usage not trusted, ``worst_case`` or ``ceiling``), or None and why there is none."""
        u = self.usage
        model = u.model or self.requested_model
        if u.untrusted is not None:
            worst = worst_case_usd(model)
            return (worst, "worst_case") if worst is not None else (CALL_USD_CEILING, "ceiling")
        if u.provider_cost_usd is not None:
            return u.provider_cost_usd, "provider"
        if not u.known:
            return (0.0, "no_usage") if self.status >= 400 else (None, "no usage in the answer")
        usd = cost_usd(model, u.input_tokens or 0, u.output_tokens or 0, u.cached_input_tokens,
                       u.cache_write_tokens)
        if usd is None:
            return None, f"no price for model {model!r} in the price table of {PRICES_AS_OF}"
        return usd, "price_table"

    def to_dict(self) -> dict[str, Any]:
        usd, source = self.cost
        u = self.usage
        trusted = u.untrusted is None
        body: dict[str, Any] = {
            "seq": self.seq, "provider": self.provider, "host": self.host, "method": self.method,
            "path": self.path, "status": self.status, "stream": self.stream,
            "model": u.model or self.requested_model, "input_tokens": u.input_tokens if trusted else None,
            "output_tokens": u.output_tokens if trusted else None, "latency_ms": round(self.latency_ms, 2),
            "cost_usd": usd,
        }
        if u.cached_input_tokens and trusted:
            body["cached_input_tokens"] = u.cached_input_tokens
        if u.cache_write_tokens and trusted:
            body["cache_write_tokens"] = u.cache_write_tokens
        if usd is None or source != "no_usage":
            body["cost_source" if usd is not None else "cost_note"] = source
        if not trusted:
            body["usage_untrusted"] = u.untrusted
        if self.error:
            body["error"] = self.error
        return body


class GatewayTrial:
    """A trial's place in the gateway: calls under ``/t/KEY/`` are its own. It records each
    call to the trial folder's ``models.jsonl`` as the call ends (buffered: whole on disk after
    ``flush()`` or ``close()``), keeps the totals, and is over budget once the cost passes
    ``budget_usd``. Safe to read from another thread."""

    def __init__(self, gateway_url: str, hosts: Iterable[str], folder: TrialFolder | None = None,
                 budget_usd: float | None = None, key: str | None = None) -> None:
        self.key = key or secrets.token_hex(8)
        self.url = f"{gateway_url.rstrip('/')}/t/{self.key}"
        """The trial's prefix on the gateway: ``{url}/{domain}/...`` reaches ``https://{domain}/...``."""
        self.hosts = list(dict.fromkeys(hosts))
        self.folder = folder
        self.budget_usd = budget_usd
        self.calls = 0
        self.priced_calls = 0
        self.usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self._started = 0
        self._out: TextIO | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._over_budget = threading.Event()

    def environment(self, existing: Mapping[str, str] | None = None, trial_url: str | None = None) -> dict[str, str]:
        """``model_environment`` for this trial; ``trial_url`` replaces the gateway address
        the runner's own process uses (a container reaches it at another)."""
        return model_environment(trial_url or self.url, self.hosts, existing)

    @property
    def over_budget(self) -> bool:
        return self._over_budget.is_set()

    def record(self, call: ModelCall) -> None:
        usd, _ = call.cost
        with self._lock:
            self.calls += 1
            if usd is not None:
                self.usd += usd
                self.priced_calls += 1
            if call.usage.untrusted is None:
                self.input_tokens += call.usage.input_tokens or 0
                self.output_tokens += call.usage.output_tokens or 0
            if self.budget_usd is not None and self.usd > self.budget_usd:
                self._over_budget.set()
            if self.folder is not None:
                try:
                    if self._out is None and not self._closed:
                        self._out = self.folder.open_model_calls()
                    self.folder.append_model_call(call.to_dict(), self._out)
                except OSError:  # the trial's folder is gone (or the disk full): the totals still count
                    pass

    def flush(self) -> None:
        """Write out the calls recorded so far to ``models.jsonl``."""
        with self._lock:
            if self._out is not None:
                try:
                    self._out.flush()
                except OSError:
                    pass

    def close(self) -> None:
        """The trial has ended: its ``models.jsonl`` is closed (a call still finishing is appended alone)."""
        with self._lock:
            self._closed = True
            if self._out is not None:
                try:
                    self._out.close()
                except OSError:
                    pass
                self._out = None

    def next_seq(self) -> int:
        with self._lock:
            self._started += 1
            return self._started

    def cost(self) -> dict[str, Any]:
        """The trial's ``cost`` in ``checks.json``: dollars (priced calls only), calls, tokens."""
        with self._lock:
            body: dict[str, Any] = {
                "usd": round(self.usd, 8) if self.priced_calls or not self.calls else None,
                "calls": self.calls, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            }
            if self.calls > self.priced_calls:
                body["unpriced_calls"] = self.calls - self.priced_calls
            if self.budget_usd is not None:
                body["budget_usd"] = self.budget_usd
            return body

    def budget_reason(self) -> str:
        return (f"the trial's model calls cost ${self.usd:.6g}, over agent.budget_usd ${self.budget_usd:g}; "
                "the agent was stopped")
