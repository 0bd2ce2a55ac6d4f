"""What every tool replica is to its environment: a request handler with state.

The server turns an HTTP request below ``/envs/ENV/TOOL`` into a ``ToolRequest``
and hands it to ``Environment.dispatch``; people and world rules build the same
requests in-process. A replica authenticates the request itself (auth errors are
vendor-specific), acts on its state, publishes domain events on the environment's
bus and answers a ``ToolResponse`` with the vendor's exact bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(slots=True)
class ToolRequest:
    method: str
    """Upper-case HTTP method."""
    path: str
    """Relative to the tool's base URL, starting with '/', without the query."""
    query: str = ""
    """The raw query string, without '?'."""
    headers: dict[str, str] = field(default_factory=dict)
    """Lower-case names."""
    body: bytes = b""


@dataclass(slots=True)
class ToolResponse:
    status: int
    body: bytes
    content_type: str = "application/json; charset=utf-8"
    """Empty: the answer has no ``Content-Type`` header (a vendor's bare 204)."""
    headers: dict[str, str] = field(default_factory=dict)
    actor: str = "agent"
    """Who made the call, as the replica resolved its credentials: ``agent``,
    ``person:NAME`` or ``world``. Calls with unknown credentials count as the agent's."""
    coverage_gap: bool = False
    """The vendor has this endpoint and the replica does not implement it (501)."""
    vendor_ok: bool = True
    """False when the vendor's body says the call failed despite a 2xx (Slack ``ok: false``,
    a GraphQL answer with only ``errors``)."""

    @property
    def worked(self) -> bool:
        return self.status < 400 and not self.coverage_gap and self.vendor_ok


@dataclass(frozen=True, slots=True)
class RecordRef:
    """What a scene ref names in one trial's world."""

    kind: str
    tool: str
    id: str


class Tool(Protocol):
    """A replica of one vendor's service inside one environment."""

    name: str

    def handle(self, request: ToolRequest) -> ToolResponse:
        """Answer one request exactly as the vendor would."""
        ...

    def credentials(self) -> dict[str, str]:
        """The agent's credentials by template name (``token``, ``signing_secret``, ...)."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The whole state, JSON-serialisable, for ``/state`` and ``world.json``."""
        ...

    def place_label(self, place_id: str) -> str | None:
        """How one of this tool's places (a channel, an issue) reads in an explanation; None
        when ``place_id`` is not one of its places."""
        ...


@runtime_checkable
class StreamsSnapshot(Protocol):
    """A tool whose state is large (a long seeded history) gives it as JSON text, a piece at
    a time, for ``/state`` and ``world.json``; ``snapshot()`` is then that text parsed.

    ``snapshot_json`` captures the state when it is called (not when the iterator is first
    read): the pieces are read while the world may go on changing."""

    def snapshot_json(self) -> Iterator[bytes]: ...


@dataclass(slots=True)
class StateOutcome:
    """A state check's verdict on the world as it stands, in the reference's result words."""

    passed: bool
    expected: str
    actual: str
    explanation: str
    evidence: list[int]
    """Trace seqs of the calls behind what was found."""
