"""The trace: every request to a tool in an environment, numbered from 1.

Bodies are kept as the bytes already read and written; they are decoded only
when a check or a report asks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl


@dataclass(slots=True)
class TraceEntry:
    seq: int
    at: float
    actor: str
    tool: str
    method: str
    path: str
    query: str
    status: int
    request: bytes
    response: bytes
    worked: bool
    coverage_gap: bool
    request_type: str = ""

    def request_json(self) -> Any:
        return _decode_body(self.request, self.request_type)

    def response_json(self) -> Any:
        return _decode_body(self.response, "application/json")

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": datetime.fromtimestamp(self.at, UTC).isoformat().replace("+00:00", "Z"),
            "actor": self.actor,
            "tool": self.tool,
            "method": self.method,
            "path": self.path,
            "query": dict(parse_qsl(self.query, keep_blank_values=True)),
            "status": self.status,
            "request": self.request_json(),
            "response": self.response_json(),
            "worked": self.worked,
            "coverage_gap": self.coverage_gap,
        }


def _decode_body(body: bytes, content_type: str) -> Any:
    if not body:
        return None
    text = body.decode("utf-8", errors="replace")
    if "x-www-form-urlencoded" in content_type:
        return dict(parse_qsl(text, keep_blank_values=True))
    try:
        return json.loads(text)
    except ValueError:
        return text


class Trace:
    def __init__(self) -> None:
        self.entries: list[TraceEntry] = []

    def append(self, **fields: Any) -> TraceEntry:
        entry = TraceEntry(seq=len(self.entries) + 1, **fields)
        self.entries.append(entry)
        return entry

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def by_actor(self, actor: str) -> Iterator[TraceEntry]:
        return (e for e in self.entries if e.actor == actor)

    def to_jsonl(self) -> str:
        return "".join(json.dumps(e.to_dict()) + "\n" for e in self.entries)
