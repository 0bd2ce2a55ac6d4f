"""One request as a handler sees it: path parameters, query, JSON body, the caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ancha.world.kernel import bounded_json
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.datadog.errors import bad_request

if TYPE_CHECKING:
    from ancha.world.tools.datadog.models import DatadogState
    from ancha.world.tools.datadog.replica import DatadogReplica


@dataclass(slots=True)
class Reply:
    status: int
    body: Any
    """JSON-able, or None for an empty body (204)."""


class Call:
    def __init__(self, replica: DatadogReplica, request: ToolRequest, params: dict[str, str], actor: str) -> None:
        self.replica = replica
        self.state: DatadogState = replica.state
        self.request = request
        self.params = params
        self.actor = actor
        self.query = parse_qs(request.query, keep_blank_values=True)
        self._json: Any = None
        self._parsed = False

    def q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def q_int(self, name: str, default: int | None = None, *, low: int | None = None,
              high: int | None = None) -> int | None:
        text = self.q(name)
        if text is None or text == "":
            return default
        try:
            value = int(text)
        except ValueError:
            raise bad_request(f"Invalid value for parameter '{name}': {text!r} is not an integer") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise bad_request(f"Invalid value for parameter '{name}': {value} is out of range")
        return value

    def q_bool(self, name: str) -> bool:
        return (self.q(name) or "").lower() in ("true", "1", "yes")

    def json(self) -> Any:
        if not self._parsed:
            self._parsed = True
            body = self.request.body
            if not body.strip():
                self._json = None
            else:
                try:
                    self._json = bounded_json.loads(body)
                except ValueError:
                    raise bad_request("Invalid JSON: the request body could not be parsed") from None
        return self._json

    def object(self) -> dict[str, Any]:
        """The body, which must be a JSON object."""
        data = self.json()
        if not isinstance(data, dict):
            raise bad_request("Invalid JSON: expected an object")
        return data
