"""Query strings and JSON bodies as PagerDuty reads them.

Array parameters come as ``statuses[]=a&statuses[]=b`` (the official clients' form) or
``statuses=a``; ``limit``/``offset`` are offset pagination (``limit`` at most 100,
``offset + limit`` at most 10,000). A filter value (the ``query`` text filter, an
``incident_key``, a comma-separated id list) longer than the shared query bound
(``ancha.world.kernel.query_limits``) is PagerDuty's 400 ``Invalid Input Provided``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from ancha.world.kernel import bounded_json
from ancha.world.kernel.query_limits import MAX_QUERY_LENGTH, too_long
from ancha.world.tools.pagerduty.errors import InvalidInput

MAX_LIMIT = 100
MAX_WINDOW = 10_000


class Query:
    def __init__(self, raw: str) -> None:
        self.values: dict[str, list[str]] = {}
        for key, value in parse_qsl(raw, keep_blank_values=True):
            self.values.setdefault(key.removesuffix("[]"), []).append(value)

    def _read(self, name: str) -> list[str]:
        found = self.values.get(name, [])
        if any(too_long(value) for value in found):
            raise InvalidInput(f"{name.capitalize()} is longer than {MAX_QUERY_LENGTH} characters.")
        return found

    def get(self, name: str) -> str | None:
        found = self._read(name)
        return found[-1] if found else None

    def many(self, name: str) -> list[str]:
        """Every value of an array parameter (comma-separated values split too)."""
        return [part for value in self._read(name) for part in value.split(",") if part]

    def flag(self, name: str) -> bool:
        return (self.get(name) or "").lower() == "true"

    def integer(self, name: str, default: int, low: int = 0, high: int | None = None) -> int:
        text = self.get(name)
        if text is None or text == "":
            return default
        try:
            value = int(text)
        except ValueError:
            raise InvalidInput(f"{name.capitalize()} must be an integer.") from None
        if value < low or (high is not None and value > high):
            raise InvalidInput(f"{name.capitalize()} must be between {low} and {high}." if high is not None
                               else f"{name.capitalize()} must be at least {low}.")
        return value

    def page(self, default_limit: int = 25) -> tuple[int, int]:
        limit = self.integer("limit", default_limit, 1, MAX_LIMIT) if self.get("limit") not in (None, "") else \
            default_limit
        offset = self.integer("offset", 0, 0)
        if offset + limit > MAX_WINDOW:
            raise InvalidInput(f"Offset must be less than {MAX_WINDOW - limit + 1}.")
        return limit, offset

    def time(self, name: str) -> float | None:
        text = self.get(name)
        if text is None or text == "":
            return None
        return parse_time(text, name)


def parse_time(text: str, name: str = "time") -> float:
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        raise InvalidInput(f"Invalid '{name}' parameter value.") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def json_body(raw: bytes) -> dict[str, Any]:
    """The request's JSON object; PagerDuty's 400 for anything else."""
    if not raw.strip():
        raise InvalidInput("params must be a Hash")
    try:
        body = bounded_json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput("params must be a Hash") from None
    if not isinstance(body, dict):
        raise InvalidInput("params must be a Hash")
    return body


def object_id(value: Any, what: str) -> str:
    """The ``id`` of a reference object (``{"id": "P...", "type": "..._reference"}``)."""
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"]:
        return str(value["id"])
    raise InvalidInput(f"{what} must be a reference object with an id.")
