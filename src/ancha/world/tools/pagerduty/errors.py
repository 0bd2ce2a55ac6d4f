"""PagerDuty's errors, one class per kind, with the vendor's status, code and body.

REST API v2 errors are ``{"error": {"message", "code", "errors"?}}``; the Events API v2
answers ``{"status": "invalid event", "message": "Event object is invalid", "errors": [...]}``.
"""

from __future__ import annotations

from typing import Any


class PagerDutyError(Exception):
    status = 400
    code = 2001
    message = "Invalid Input Provided"

    def __init__(self, *errors: str) -> None:
        super().__init__(self.message)
        self.errors = list(errors)

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors:
            error["errors"] = self.errors
        return {"error": error}


class InvalidInput(PagerDutyError):
    """400 2001: the request's arguments are wrong (``errors`` says which)."""


class Unauthorized(PagerDutyError):
    status = 401
    code = 2006
    message = "Authentication failed"


class FromRequired(PagerDutyError):
    status = 400
    code = 2016
    message = "You must specify a user's email address in the \"From\" header to perform this action"


class RequesterNotFound(PagerDutyError):
    status = 400
    code = 2001
    message = "Invalid Input Provided"

    def __init__(self) -> None:
        super().__init__("Requester User Not Found")


class NotFound(PagerDutyError):
    status = 404
    code = 2100
    message = "Not Found"


class NotImplementedHere(PagerDutyError):
    """501: an endpoint PagerDuty has and this replica does not serve (a coverage gap)."""

    status = 501
    code = 5001
    message = "Not Implemented"

    def __init__(self, method: str, template: str) -> None:
        super().__init__(f"{method} {template} is not implemented by the Ancha PagerDuty replica")
        self.endpoint = f"{method} {template}"


class InvalidEvent(Exception):
    """An Events API v2 event PagerDuty would refuse (400)."""

    def __init__(self, *errors: str) -> None:
        super().__init__("Event object is invalid")
        self.errors = list(errors)

    def body(self) -> dict[str, Any]:
        return {"status": "invalid event", "message": "Event object is invalid", "errors": self.errors}
