"""``agent.log``, capped: the head and the tail of what the agent wrote, up to a limit.

An agent can write gigabytes in seconds. The log keeps the first half of the limit as it
comes (on disk at once, so a short log reads like a plain file) and the last half in a
ring of chunks (memory bounded by the limit), and counts what fell in between. On close,
a line ``ancha: agent.log: N bytes dropped here ...`` marks the cut, and ``cut`` says the
same for ``checks.json`` and ``ancha explain``.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

DEFAULT_LIMIT = 16 * 1024 * 1024
"""``agent.log_limit`` when ancha.yaml does not set it: 16 MiB."""


class AgentLog:
    """A binary writer for ``agent.log`` that keeps at most ``limit`` bytes of it."""

    def __init__(self, path: Path, limit: int = DEFAULT_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.written = 0
        self.dropped = 0
        self._head_room = limit - limit // 2
        self._tail_limit = limit // 2
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._file = path.open("wb")

    def write(self, data: bytes) -> int:
        size = len(data)
        self.written += size
        if self._head_room > 0:
            head = data[: self._head_room]
            self._file.write(head)
            self._head_room -= len(head)
            data = data[len(head):]
        if data:
            self._tail.append(bytes(data))
            self._tail_size += len(data)
            # Whole chunks go as soon as the rest still fills the tail; the first one is trimmed on close.
            while self._tail and self._tail_size - len(self._tail[0]) >= self._tail_limit:
                self.dropped += len(self._tail[0])
                self._tail_size -= len(self._tail.popleft())
        return size

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if self._file.closed:
            return
        excess = self._tail_size - self._tail_limit
        if excess > 0:
            self._tail[0] = self._tail[0][excess:]
            self._tail_size -= excess
            self.dropped += excess
        if self.dropped:
            kept_head = self.limit - self.limit // 2
            self._file.write(
                f"\nancha: agent.log: {self.dropped:,} bytes dropped here; the agent wrote {self.written:,}, "
                f"the log keeps the first {kept_head:,} and the last {self._tail_size:,} "
                f"(agent.log_limit: {self.limit:,} bytes)\n".encode())
        for chunk in self._tail:
            self._file.write(chunk)
        self._tail.clear()
        self._file.close()

    @property
    def cut(self) -> dict[str, Any] | None:
        """What was dropped, for ``checks.json``: None when the log is whole."""
        if not self.dropped:
            return None
        return {"written": self.written, "dropped": self.dropped, "limit": self.limit}

    def __enter__(self) -> AgentLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
