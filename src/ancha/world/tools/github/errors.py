"""GitHub's REST errors: one class per kind of answer GitHub gives.

Every error body is ``{"message", "documentation_url", "status"}`` (the current API
repeats the status as a string); 422 ``Validation Failed`` adds ``errors``, a list of
``{resource, field, code}`` (plus ``message``/``value`` where GitHub sends them).
Handlers raise these; ``replica.handle`` renders them with the operation's
documentation URL when the route has one.
"""

from __future__ import annotations

from typing import Any

DOCS = "https://docs.github.com/rest"


class GitHubError(Exception):
    status = 500
    message = "Server Error"

    def __init__(self, message: str | None = None, *, documentation_url: str | None = None,
                 errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message or self.message)
        if message is not None:
            self.message = message
        self.documentation_url = documentation_url
        self.errors = errors

    def body(self, docs: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            body["errors"] = self.errors
        body["documentation_url"] = self.documentation_url or docs or DOCS
        body["status"] = str(self.status)
        return body


class NotModified(GitHubError):
    """304: the caller's ``If-None-Match`` still matches (rendered with an empty body)."""

    status = 304
    message = ""


class BadRequest(GitHubError):
    status = 400
    message = "Bad Request"


class ProblemsParsingJSON(BadRequest):
    message = "Problems parsing JSON"


class BadCredentials(GitHubError):
    status = 401
    message = "Bad credentials"


class RequiresAuthentication(GitHubError):
    status = 401
    message = "Requires authentication"


class Forbidden(GitHubError):
    status = 403
    message = "Forbidden"


class MustHavePush(Forbidden):
    message = "Must have push access to repository."


class MustHaveAdmin(Forbidden):
    message = "Must have admin rights to Repository."


class RateLimitExceeded(Forbidden):
    def __init__(self, user_id: int) -> None:
        super().__init__(f"API rate limit exceeded for user ID {user_id}. If you reach out to GitHub Support "
                         "for help, please include the request ID.",
                         documentation_url="https://docs.github.com/rest/overview/rate-limits-for-the-rest-api")


class NotFound(GitHubError):
    status = 404
    message = "Not Found"


class MethodNotAllowed(GitHubError):
    status = 405
    message = "Method Not Allowed"


class Conflict(GitHubError):
    status = 409
    message = "Conflict"


class Gone(GitHubError):
    status = 410
    message = "Gone"


class Unprocessable(GitHubError):
    """422 with a message of its own (``Invalid request.`` and friends), no ``errors`` list."""

    status = 422
    message = "Unprocessable Entity"


class ValidationFailed(Unprocessable):
    message = "Validation Failed"

    def __init__(self, *errors: dict[str, Any], message: str | None = None) -> None:
        super().__init__(message, errors=list(errors))


def missing_field(resource: str, field: str) -> ValidationFailed:
    return ValidationFailed({"resource": resource, "code": "missing_field", "field": field})


def invalid_field(resource: str, field: str, value: Any = None) -> ValidationFailed:
    error: dict[str, Any] = {"resource": resource, "code": "invalid", "field": field}
    if value is not None:
        error["value"] = value
    return ValidationFailed(error)


def already_exists(resource: str, field: str) -> ValidationFailed:
    return ValidationFailed({"resource": resource, "code": "already_exists", "field": field})


def invalid_request(detail: str) -> Unprocessable:
    """GitHub's schema check of a body: ``Invalid request.\\n\\n<detail>``."""
    return Unprocessable(f"Invalid request.\n\n{detail}")


class NotImplementedHere(GitHubError):
    """501: GitHub has this endpoint, the replica does not serve it (a coverage gap)."""

    status = 501

    def __init__(self, method: str, template: str) -> None:
        super().__init__(f"Not Implemented: {method} {template} is not served by this replica")
