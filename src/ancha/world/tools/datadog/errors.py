"""Datadog's error answers: ``{"errors": ["..."]}`` with the vendor's status codes."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answer; raised by handlers, turned into the response by the replica."""

    def __init__(self, status: int, *messages: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(messages[0] if messages else str(status))
        self.status = status
        self.messages = list(messages)
        self.extra = extra or {}

    def body(self) -> dict[str, Any]:
        return {"errors": self.messages, **self.extra}


def forbidden() -> ApiError:
    """A missing or wrong API or application key."""
    return ApiError(403, "Forbidden")


def not_found(what: str = "Not found") -> ApiError:
    return ApiError(404, what)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def not_implemented(method: str, template: str) -> ApiError:
    """A Datadog endpoint this replica does not serve: 501, naming it (a coverage gap)."""
    return ApiError(501, f"{method} {template} is a Datadog endpoint that Ancha's replica does not implement yet",
                    extra={"endpoint": f"{method} {template}"})
