"""Errors a caller can cause; the API answers each as {"detail": ...} with its status."""

from __future__ import annotations


class ApiError(Exception):
    status_code = 400
    headers: dict[str, str] | None = None

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(ApiError):
    status_code = 400


class Unauthorized(ApiError):
    """No usable API key; the detail says how to send one."""

    status_code = 401
    headers = {"WWW-Authenticate": "Bearer"}


class Forbidden(ApiError):
    """A known key whose role does not allow the request; the detail names the role needed."""

    status_code = 403


class NotFound(ApiError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


class Unprocessable(ApiError):
    status_code = 422


class TooLarge(ApiError):
    status_code = 413


class OverQuota(ApiError):
    """The workspace's storage quota would be exceeded (507, as Git LFS answers it)."""

    status_code = 507
