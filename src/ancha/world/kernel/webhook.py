"""How a vendor POSTs its events to a URL: the shape a tool declares (its ``ToolSpec.webhook``).

The world's endpoint delivery (``ancha.world.endpoint``) sends every attempt by this form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.kernel.tool import Tool


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try at delivering one event."""

    delivery: str
    """The delivery's id, the same on every retry (a vendor's delivery id header)."""
    number: int = 0
    """0 for the first attempt, then 1, 2, ... for the retries."""
    reason: str | None = None
    """Why the previous attempt failed: ``http_timeout``, ``http_error`` or ``connection_failed``."""


@dataclass(frozen=True, slots=True)
class Handshake:
    """A request the vendor sends once before any event (a URL verification):
    the agent must answer 2xx with ``expect`` (as the body, or as a JSON field ``field``)."""

    payload: dict[str, Any]
    expect: str
    field: str
    name: str


def every_error(status: int) -> bool:
    """The default rule: every answer that is not 2xx is retried."""
    return True


@dataclass(frozen=True, slots=True)
class WebhookForm:
    """How a vendor POSTs its events to a URL."""

    headers: Callable[[Tool, dict[str, Any], bytes, Attempt], dict[str, str]]
    """The headers of one attempt: (the tool's replica, the feed event, the body, the attempt)."""
    timeout_s: float
    """Real seconds the vendor waits for an answer."""
    retries_after_s: tuple[float, ...] = ()
    """Simulated seconds after a failed attempt before each retry (empty: never retried)."""
    no_retry_header: str | None = None
    """A response header by which the agent asks for no retries (such as a no-retry header)."""
    handshake: Callable[[Tool], Handshake] | None = None
    retried: Callable[[int], bool] = every_error
    """Whether an answer that is not 2xx is retried, by its status (for one vendor, 5xx and
    429; for another, only 5xx). A timeout or a failed connection always is, while retries remain."""
