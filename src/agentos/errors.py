"""Errors a caller can cause; the API answers each as {"detail": ...} with its status."""

from __future__ import annotations


class ApiError(Exception):
    status_code = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadRequest(ApiError):
    status_code = 400


class Unauthorized(ApiError):
    status_code = 401


class NotFound(ApiError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


class Unprocessable(ApiError):
    status_code = 422
