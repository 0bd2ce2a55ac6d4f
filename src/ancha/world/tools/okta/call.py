"""One request to the Okta replica as its handlers see it, and what they answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ancha.world.kernel import bounded_json
from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.okta.errors import ApiValidation, MalformedBody

if TYPE_CHECKING:
    from ancha.world.tools.okta.replica import OktaReplica


@dataclass(slots=True)
class Answer:
    """A handler's answer: status, JSON body (None for an empty body) and extra headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Call:
    replica: OktaReplica
    request: ToolRequest
    params: dict[str, str]
    actor: str
    query: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.query = parse_qs(self.request.query, keep_blank_values=True)

    def arg(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def flag(self, name: str, default: bool) -> bool:
        """A boolean query parameter (``activate=false``); anything else than true/false is Okta's 400."""
        value = self.arg(name)
        if value is None or value == "":
            return default
        if value.lower() not in ("true", "false"):
            raise ApiValidation(name, f"{name}: The value must be true or false.")
        return value.lower() == "true"

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        value = self.arg(name)
        if value is None or value == "":
            return default
        try:
            number = int(value)
        except ValueError:
            raise ApiValidation(name, f"{name}: The value must be a number.") from None
        if number < low:
            raise ApiValidation(name, f"{name}: The value must be at least {low}.")
        return min(number, high)

    def json(self) -> dict[str, Any]:
        """The body as a JSON object; Okta's ``E0000003`` when it is not one."""
        raw = self.request.body
        if not raw.strip():
            return {}
        try:
            data = bounded_json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise MalformedBody() from None
        if not isinstance(data, dict):
            raise MalformedBody()
        return data
