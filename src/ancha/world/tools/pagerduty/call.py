"""One authenticated REST call: who makes it, on whose behalf, and its arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.pagerduty import errors
from ancha.world.tools.pagerduty.params import Query, json_body

if TYPE_CHECKING:
    from ancha.world.tools.pagerduty.lifecycle import IncidentDesk
    from ancha.world.tools.pagerduty.models import Incident, PagerDutyState, User
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica


@dataclass(frozen=True, slots=True)
class Caller:
    user: User | None
    """The token's owner (None for the world's token)."""
    actor: str
    """The trace actor: ``agent``, ``person:NAME`` or ``world``."""


class Call:
    __slots__ = ("replica", "state", "desk", "params", "query", "raw", "caller", "headers", "base", "_body")

    def __init__(self, replica: PagerDutyReplica, params: dict[str, str], query: str, raw: bytes, caller: Caller,
                 headers: dict[str, str]) -> None:
        self.replica = replica
        self.state: PagerDutyState = replica.state
        self.desk: IncidentDesk = replica.desk
        self.params = params
        self.query = Query(query)
        self.raw = raw
        self.caller = caller
        self.headers = headers
        self.base = replica.base_url
        self._body: dict[str, Any] | None = None

    @property
    def actor(self) -> str:
        return self.caller.actor

    def body(self) -> dict[str, Any]:
        if self._body is None:
            self._body = json_body(self.raw)
        return self._body

    def requester(self) -> User | None:
        """The user a write acts as: the ``From`` header's e-mail (PagerDuty's 400 without it).
        The world may write without one (as the integration itself)."""
        email = self.headers.get("from", "").strip()
        if not email:
            if self.caller.actor == "world":
                return self.caller.user
            raise errors.FromRequired()
        user = self.state.user_by_email(email)
        if user is None:
            raise errors.RequesterNotFound()
        return user

    def incident(self, id: str | None = None) -> Incident:
        key = id if id is not None else self.params.get("id", "")
        incident = self.state.incidents.get(key)
        if incident is None and is_plain_int(key):
            incident = self.state.by_number.get(int(key))
        if incident is None:
            raise errors.NotFound()
        return incident


def paginated(name: str, items: list[Any], limit: int, offset: int, total: int | None, more: bool) -> dict[str, Any]:
    return {name: items, "limit": limit, "offset": offset, "total": total, "more": more}
