"""Making an agent's recorded calls again, at the instants they arrived (``ancha replay --calls``, fork).

A world is a function of its scene, trial and seed and of the agent's calls with the
simulated instants they arrived at (``Environment.answer``). A replayed world has no
agent and no ticker: its clock stands still but for jumps to each recorded call's
instant, so what was due by then happens first, exactly as it did, then the call is
made with the headers and body the agent sent. ``end`` finishes the trial where the
original ended, after what was due by then.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.kernel.trace import TraceEntry

if TYPE_CHECKING:
    from ancha.world.environment import Environment


class CallsInvalid(ValueError):
    """A recorded call that cannot be made (the message says which and why)."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One agent call as ``calls.jsonl`` keeps it."""

    seq: int
    arrived: float
    tool: str
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @classmethod
    def of_entry(cls, entry: TraceEntry) -> RecordedCall:
        head = entry.head
        headers = json.loads(head) if head else {}
        return cls(entry.seq, entry.arrived, entry.tool, entry.method, entry.path, entry.query, headers, entry.request)

    def to_dict(self) -> dict[str, Any]:
        line: dict[str, Any] = {"seq": self.seq, "arrived": _iso(self.arrived), "tool": self.tool,
                                "method": self.method, "path": self.path, "query": self.query,
                                "headers": self.headers}
        try:
            line["body"] = self.body.decode("utf-8")
        except UnicodeDecodeError:
            line["body_base64"] = base64.b64encode(self.body).decode("ascii")
        return line

    def to_line(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False) + "\n"

    @classmethod
    def of_dict(cls, line: Any, where: str = "") -> RecordedCall:
        try:
            if not isinstance(line, dict):
                raise TypeError("a call is a JSON object")
            headers = line.get("headers") or {}
            if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
                raise TypeError("headers must be an object of strings")
            if "body_base64" in line:
                body = base64.b64decode(str(line["body_base64"]), validate=True)
            else:
                body = str(line.get("body") or "").encode("utf-8")
            return cls(int(line["seq"]), _epoch(str(line["arrived"])), str(line["tool"]), str(line["method"]),
                       str(line["path"]), str(line.get("query") or ""), dict(headers), body)
        except (KeyError, TypeError, ValueError) as exc:
            raise CallsInvalid(f"{where or 'a call'}: {exc}") from exc


def agent_calls(entries: Iterable[TraceEntry]) -> Iterator[RecordedCall]:
    """The agent's calls among a trace's entries (the world's own are made again by the world)."""
    for entry in entries:
        if entry.arrived:
            yield RecordedCall.of_entry(entry)


def make(env: Environment, call: RecordedCall) -> ToolResponse:
    """Make one recorded call in ``env`` at its instant."""
    if call.tool not in env.tools:
        raise CallsInvalid(f"call {call.seq}: this world has no {call.tool}")
    if call.arrived < env.clock.peek() - 1e-6 and env.trace.entries:
        raise CallsInvalid(f"call {call.seq} arrived at {_iso(call.arrived)}, before the world's clock "
                           f"({_iso(env.clock.peek())}): calls must come in the order they were made")
    env.clock.advance_to(call.arrived)
    request = ToolRequest(call.method, call.path, call.query, call.headers, call.body)
    return env.dispatch(call.tool, request, from_agent=True, arrived=call.arrived)


def go_on(env: Environment, until: float) -> None:
    """Let the replayed world go on to ``until``: what is due by then happens, at its time."""
    if env.status != "running":
        raise CallsInvalid(f"the world ended ({env.status}) at {_iso(env.ended_at or env.clock.peek())}: "
                           "it goes on no further")
    if until > env.clock.peek():
        env.clock.advance_to(until)
    env.timekeeper.run_due(upto=until)


def end(env: Environment, at: float, status: str, reason: str) -> None:
    """Finish the replayed trial where the original ended (unless it ended itself already)."""
    if env.status == "running" and at < env.clock.peek():
        raise CallsInvalid(f"end.at {_iso(at)} is before the world's clock ({_iso(env.clock.peek())}): "
                           "a trial ends no earlier than its last call")
    if env.status == "running":
        env.end(status, reason, at=at)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).isoformat().replace("+00:00", "Z")


def _epoch(text: str) -> float:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone (write it as 2026-03-02T14:00:00.000001Z)")
    return round(value.timestamp() * 1_000_000) / 1_000_000
