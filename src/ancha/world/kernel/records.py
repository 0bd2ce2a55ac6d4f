"""The people/process records of a trial: who learned, revealed and decided what, when."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass(slots=True)
class Record:
    kind: str
    at: float
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = datetime.fromtimestamp(self.at, UTC).isoformat().replace("+00:00", "Z")
        return {"kind": self.kind, "at": at, **self.data}


class Records:
    def __init__(self) -> None:
        self.items: list[Record] = []

    def add(self, kind: str, at: float, **data: Any) -> Record:
        return self.append(kind, at, data)

    def append(self, kind: str, at: float, data: dict[str, Any]) -> Record:
        """``add`` with the fields as one dict (kept, not copied)."""
        record = Record(kind, at, data)
        self.items.append(record)
        return record

    def of_kind(self, kind: str) -> list[Record]:
        return [r for r in self.items if r.kind == kind]

    def to_jsonl(self) -> str:
        return "".join(json.dumps(r.to_dict()) + "\n" for r in self.items)
