"""Slack's Web API rate limits, on with ``world.slack.rate_limits: real`` (off by default).

Slack limits each method per app per workspace (https://api.slack.com/docs/rate-limits):
Tier 1 allows 1+ calls a minute, Tier 2 20+, Tier 3 50+, Tier 4 100+, each with some
burst; special tiers have their own rules, chat.postMessage "one message per second per
channel" with short bursts. Which method has which tier comes from Slack's own SDK
metadata (``web_api_rate_limit_tiers.json``), packaged as ``vendor/rate_tiers.json.gz`` by
``python -m ancha.vendor regenerate``.

Each agent token has one token bucket per method (per method and channel for the
per-channel tiers) that holds ``burst`` calls and refills at the tier's per-minute rate,
in simulated time. A call finding its bucket empty is answered as Slack answers: HTTP 429,
``Retry-After: <seconds>`` and ``{"ok": false, "error": "ratelimited"}``. Retry-After is
the simulated wait in real seconds at the clock's speed, rounded up (the same number at
speed 1): what a client sleeping it, as slack_sdk's ``RateLimitErrorRetryHandler`` does,
needs. The scene's own people and rules are never limited: they are the script, not a client.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ancha.world.kernel import vendor_data

TIERS: dict[str, str] = vendor_data.read("slack", "rate_tiers")["tiers"]
"""Web API method -> its rate-limit tier name (``Tier3``, ``special``...)."""

REAL = "real"
OFF = "off"
MODES = (OFF, REAL)
"""The values of ``world.slack.rate_limits``."""

HOLD_MARGIN_S = 2.0
"""Real seconds a limited agent counts as working beyond Retry-After: slack_sdk sleeps
Retry-After plus up to a second of jitter before it retries."""


@dataclass(frozen=True, slots=True)
class Budget:
    """A tier's allowance: ``per_minute`` calls a minute, ``burst`` of them at once."""

    per_minute: float
    burst: int
    per_channel: bool = False
    """One bucket per channel (the ``channel`` argument) rather than one per method."""


BUDGETS: dict[str, Budget] = {
    # Slack's documented floors (https://api.slack.com/docs/rate-limits). The burst is ours:
    # Slack says "a small amount" for Tier 1, "occasional bursts" for Tier 2 and more above.
    "Tier1": Budget(1, 2),
    "Tier2": Budget(20, 20),
    "Tier3": Budget(50, 50),
    "Tier4": Budget(100, 100),
    # The special tiers' numbers are the ones Slack's Java SDK paces itself by
    # (slackapi/java-slack-sdk, MethodsRateLimitTier.java): "hundreds of requests per
    # minute" is 600; chat.postMessage 1 a second per channel, setStatus the same per DM.
    "SpecialTier_auth_test": Budget(600, 600),
    "SpecialTier_chat_getPermalink": Budget(600, 600),
    "SpecialTier_chat_postMessage": Budget(60, 10, per_channel=True),
    "SpecialTier_assistant_threads_setStatus": Budget(60, 10, per_channel=True),
}
DEFAULT_TIER = "Tier2"
"""A method Slack's table lacks (an older name): Tier 2, as Slack's Java SDK assumes."""


def budget_of(method: str) -> Budget:
    """The allowance of ``method`` (its tier's, or Tier 2's when its tier is unknown)."""
    return BUDGETS.get(TIERS.get(method, DEFAULT_TIER), BUDGETS[DEFAULT_TIER])


class _Bucket:
    __slots__ = ("at", "tokens")

    def __init__(self, tokens: float, at: float) -> None:
        self.tokens = tokens
        self.at = at


class RateLimiter:
    """The buckets of one workspace, in simulated time."""

    def __init__(self) -> None:
        self._buckets: dict[tuple[str, str, str], _Bucket] = {}

    def take(self, token: str, method: str, channel: str | None, now: float) -> float:
        """Spend one call of ``token`` on ``method`` at simulated time ``now``: 0 when it may
        go ahead, else the simulated seconds until it may (nothing is spent then)."""
        budget = budget_of(method)
        rate = budget.per_minute / 60.0
        key = (token, method, (channel or "") if budget.per_channel else "")
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(budget.burst), now)
        bucket.tokens = min(float(budget.burst), bucket.tokens + max(0.0, now - bucket.at) * rate)
        bucket.at = max(bucket.at, now)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / rate


def retry_after(wait: float, speed: float) -> int:
    """Retry-After for a simulated ``wait``: real seconds at ``speed``, rounded up, at least 1
    (Slack sends whole seconds; slack_sdk reads the header as an integer)."""
    return max(1, math.ceil(wait / speed - 1e-9))
