"""The errors the AgentOS SDK raises.

Every error the server answers with carries its `detail`, and `str(error)` is that
detail unchanged, so what a user prints is exactly what the server said.
"""

from __future__ import annotations

import json
from typing import Any


class AgentOSError(Exception):
    """An error answered by the AgentOS server (or raised before reaching it).

    `status_code` is the HTTP status (None when no response was received) and
    `detail` is the server's `detail` field as it was sent.
    """

    def __init__(self, detail: Any, status_code: int | None = None) -> None:
        self.detail = detail
        self.status_code = status_code
        super().__init__(detail if isinstance(detail, str) else json.dumps(detail))

    def __str__(self) -> str:
        return str(self.args[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status_code={self.status_code!r}, detail={self.detail!r})"


class AuthenticationError(AgentOSError):
    """401: the API key is missing, malformed or unknown."""


class NotFoundError(AgentOSError):
    """404: no workflow, run, evaluation or release with that id or name in the key's workspace."""


class ConflictError(AgentOSError):
    """409: the change clashes with what exists, e.g. a workflow name already taken."""


class ValidationError(AgentOSError):
    """400 or 422: the request was understood but its content is invalid (e.g. bad checks)."""


class ReleaseBlockedError(ValidationError):
    """422 on release: the evaluation gate blocked the deployment."""


class APIConnectionError(AgentOSError):
    """The server could not be reached, or the connection broke before it answered."""


def error_for_status(status_code: int, detail: Any, *, releasing: bool = False) -> AgentOSError:
    """The typed error for a server answer with `status_code` and `detail`."""
    if status_code == 422 and releasing:
        return ReleaseBlockedError(detail, status_code)
    kind: type[AgentOSError] = {
        401: AuthenticationError,
        404: NotFoundError,
        409: ConflictError,
        400: ValidationError,
        422: ValidationError,
    }.get(status_code, AgentOSError)
    return kind(detail, status_code)
