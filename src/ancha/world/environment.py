"""One trial's world: its clock, tools, trace, refs and lifecycle."""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Callable
from typing import Any

from ancha.scene.model import Scene
from ancha.world.bus import Bus, DomainEvent
from ancha.world.clock import SimClock
from ancha.world.feed import EventFeed
from ancha.world.records import Record, Records
from ancha.world.tools.base import RecordRef, Tool, ToolRequest, ToolResponse
from ancha.world.trace import Trace

ToolBuilder = Callable[["Environment", Any], Tool]


def tool_builders() -> dict[str, ToolBuilder]:
    """The replicas this build has, by the scene's ``world`` key."""
    from ancha.world.tools.slack.replica import SlackReplica

    return {"slack": SlackReplica}


class UnknownTool(KeyError):
    pass


class Environment:
    """A live world built from a scene for one trial.

    Status goes ``running`` -> ``done`` (the agent or someone said so), or
    ``timed_out`` (the clock passed ``clock.limit``); the runner ends it with a
    verdict after grading.
    """

    def __init__(self, env_id: str, scene: Scene, trial: int, agent: dict[str, Any] | None = None) -> None:
        self.id = env_id
        self.scene = scene
        self.trial = trial
        self.agent = agent or {}
        self.rng = random.Random(trial_seed(scene.source_hash, trial))
        self.clock = SimClock(scene.clock.start, scene.clock.speed)
        self.bus = Bus()
        self.trace = Trace()
        self.feed = EventFeed()
        self.records = Records()
        self.refs: dict[str, RecordRef] = {}
        self.trial_token = "anc_trial_" + secrets.token_hex(16)
        self.events_token = "anc_events_" + secrets.token_hex(16)
        self.status = "running"
        self.ended_reason: str | None = None
        self.verdict: str | None = None
        self.tools: dict[str, Tool] = {}
        builders = tool_builders()
        for name in scene.tools:
            self.tools[name] = builders[name](self, getattr(scene.world, name))

    # --- ids and refs -----------------------------------------------------------------

    def random_hex(self, n: int) -> str:
        """``n`` hex digits from the trial's RNG: the same scene and trial give the same ids."""
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def register_ref(self, name: str | None, kind: str, tool: str, record_id: str) -> None:
        if name:
            self.refs[name] = RecordRef(kind=kind, tool=tool, id=record_id)

    def ref_id(self, name: str) -> str:
        return self.refs[name].id

    # --- requests ---------------------------------------------------------------------

    def dispatch(self, tool_name: str, request: ToolRequest) -> ToolResponse:
        """Hand one request to a tool and trace it, whoever made it."""
        tool = self.tools.get(tool_name)
        if tool is None:
            raise UnknownTool(tool_name)
        response = tool.handle(request)
        entry = self.trace.append(
            at=self.clock.now(),
            actor=response.actor,
            tool=tool_name,
            method=request.method,
            path=request.path,
            query=request.query,
            status=response.status,
            request=request.body,
            response=response.body,
            worked=response.worked,
            coverage_gap=response.coverage_gap,
            request_type=request.headers.get("content-type", ""),
        )
        self.bus.publish(DomainEvent("call_traced", tool_name, entry.at, {"entry": entry}))
        self.check_limit()
        return response

    def record(self, kind: str, at: float | None = None, **data: Any) -> Record:
        """Add a people/process record (at the current simulated time unless given) and
        announce it on the bus as ``record_added`` so that predicates can react."""
        record = self.records.add(kind, self.clock.now() if at is None else at, **data)
        self.bus.publish(DomainEvent("record_added", "world", record.at, {"record": record}))
        return record

    # --- lifecycle --------------------------------------------------------------------

    @property
    def deadline(self) -> float:
        return self.clock.start + self.scene.clock.limit

    def check_limit(self) -> bool:
        """Mark the trial timed out once simulated time passes ``clock.limit``."""
        if self.status == "running" and self.clock.peek() > self.deadline:
            self.finish("timed_out", "the clock passed clock.limit")
        return self.status == "timed_out"

    def finish(self, status: str, reason: str) -> None:
        if self.status == "running":
            self.status = status
            self.ended_reason = reason
            self.feed.close()

    def coverage_gaps(self) -> list[dict[str, Any]]:
        seen: dict[tuple[str, str, str], int] = {}
        for entry in self.trace:
            if entry.coverage_gap:
                key = (entry.tool, entry.method, entry.path)
                seen[key] = seen.get(key, 0) + 1
        return [{"tool": t, "method": m, "path": p, "calls": n} for (t, m, p), n in seen.items()]

    def status_dict(self) -> dict[str, Any]:
        self.check_limit()
        return {
            "id": self.id,
            "scene": self.scene.name,
            "trial": self.trial,
            "status": self.status,
            "ended_reason": self.ended_reason,
            "verdict": self.verdict,
            "clock": {
                "now": self.clock.isoformat(),
                "start": self.clock.isoformat(self.clock.start),
                "elapsed_s": round(self.clock.elapsed(), 3),
                "limit_s": self.scene.clock.limit,
                "speed": self.clock.speed,
            },
            "pending": 0,
            "trace_entries": len(self.trace),
            "coverage_gaps": self.coverage_gaps(),
        }

    def records_jsonl(self) -> str:
        return self.records.to_jsonl()

    def snapshot(self) -> dict[str, Any]:
        return {name: tool.snapshot() for name, tool in self.tools.items()}


def trial_seed(source_hash: str, trial: int) -> int:
    digest = hashlib.sha256(f"{source_hash}:{trial}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
