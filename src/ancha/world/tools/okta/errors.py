"""Okta's errors, one class per ``errorCode``, with Okta's statuses and wordings.

Every error answers Okta's body: ``errorCode``, ``errorSummary``, ``errorLink`` (Okta
repeats the code there), ``errorId`` (unique per error) and ``errorCauses``.
"""

from __future__ import annotations

from typing import Any


class OktaError(Exception):
    """An error Okta answers; subclasses fix ``code``, ``status`` and the default summary."""

    code = "E0000009"
    status = 500
    summary = "Internal Server Error"

    def __init__(self, summary: str | None = None, causes: list[str] | None = None) -> None:
        super().__init__(summary or self.summary)
        self.error_summary = summary or self.summary
        self.causes = causes or []

    def body(self, error_id: str) -> dict[str, Any]:
        return {"errorCode": self.code, "errorSummary": self.error_summary, "errorLink": self.code,
                "errorId": error_id, "errorCauses": [{"errorSummary": c} for c in self.causes]}


class ApiValidation(OktaError):
    """E0000001: a precondition of the operation failed (``Api validation failed: <field>``)."""

    code, status = "E0000001", 400

    def __init__(self, field: str, cause: str) -> None:
        super().__init__(f"Api validation failed: {field}", [cause])


class IllegalArgument(OktaError):
    code, status, summary = "E0000002", 400, "The request was not valid"

    def __init__(self, detail: str) -> None:
        super().__init__(f"The request was not valid: {detail}")


class MalformedBody(OktaError):
    code, status, summary = "E0000003", 400, "The request body was not well-formed."


class AccessDenied(OktaError):
    code, status, summary = "E0000006", 403, "You do not have permission to perform the requested action"


class ResourceNotFound(OktaError):
    code, status = "E0000007", 404

    def __init__(self, what: str, kind: str) -> None:
        super().__init__(f"Not found: Resource not found: {what} ({kind})")


class PathNotFound(OktaError):
    code, status, summary = "E0000008", 404, "The requested path was not found"


class InvalidToken(OktaError):
    code, status, summary = "E0000011", 401, "Invalid token provided"


class AlreadyActive(OktaError):
    code, status, summary = "E0000016", 403, "Activation failed because the user is already active"


class MethodNotSupported(OktaError):
    code, status, summary = "E0000022", 405, "The endpoint does not support the provided HTTP method"


class InvalidSearch(OktaError):
    code, status, summary = "E0000031", 400, "Invalid search criteria."


class UnlockNotAllowed(OktaError):
    code, status, summary = "E0000032", 403, "Unlock is not allowed for this user."


class WrongStatus(OktaError):
    code, status, summary = "E0000038", 403, "This operation is not allowed in the user's current status."


class UnsupportedOperation(OktaError):
    code, status, summary = "E0000060", 400, "Unsupported operation."


class NotImplementedHere(OktaError):
    """Not Okta's: the replica lacks an operation Okta has (answered 501, a coverage gap)."""

    code, status = "not_implemented", 501

    def __init__(self, operation: str) -> None:
        super().__init__(f"Not implemented in this replica: {operation}")
