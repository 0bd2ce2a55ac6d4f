"""PagerDuty's side of people: on-call people acknowledge what pages them, and incident
notes are a conversation.

Paging: a person whose PagerDuty user (``people.<p>.accounts.pagerduty``) is notified of
an incident (assigned by its escalation policy, a reassignment, an escalation)
acknowledges it after their reply delay (``replies_after``, drawn per page from a stream
of its own), or when back if they are away then, if it is still triggered, through
the REST API with their own token (traced as ``person:NAME``). A person paged again for
an incident they are already about to acknowledge does not acknowledge twice.

Notes: a note on an incident reaches its assignees (direct) and the people whose user
name or e-mail it mentions (direct), never its writer. A person answers with a note on the
same incident. The ``message`` record's fields: ``incident`` (id; ``in: $incident`` selects
it), ``note`` (its id) and ``user`` (the writer's user id).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.reach import Directory, Place, Utterance
from ancha.world.kernel.tool import ToolRequest

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.pagerduty.models import User
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

TOOL = "pagerduty"


class PagerDutyPerson:
    """Calls the REST API as a person's user, one token per person."""

    def __init__(self, replica: PagerDutyReplica, world: WorldPort) -> None:
        self.replica = replica
        self.world = world
        self._tokens: dict[str, str] = {}

    def call(self, person: str, user: User, method: str, path: str, body: Any) -> tuple[int, Any]:
        token = self._tokens.get(person)
        if token is None:
            token = self._tokens[person] = self.replica.issue_token(user, f"person:{person}")
        headers = {"authorization": f"Token token={token}", "from": user.email,
                   "content-type": "application/json", "accept": "application/vnd.pagerduty+json;version=2"}
        answer = self.world.dispatch(TOOL, ToolRequest(method, path, headers=headers, body=json.dumps(body).encode()))
        try:
            return answer.status, json.loads(answer.body) if answer.body else None
        except ValueError:
            return answer.status, None


class PagerDutyReach:
    tool: str = TOOL
    events: tuple[str, ...] = ("incident_annotated",)

    def __init__(self, replica: PagerDutyReplica, world: WorldPort, directory: Directory) -> None:
        self.world = world
        self.directory = directory
        self.person = PagerDutyPerson(replica, world)
        self.state = replica.state
        for user in self.state.users.values():
            if user.person:
                directory.link(TOOL, user.id, user.person.removeprefix("$").rpartition(".")[2])
        self.people = directory.people_on(TOOL)
        digest = hashlib.sha256(f"{world.scene.source_hash}:{world.trial}:pagerduty-people".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        """Acknowledgment delays: their own stream, so other draws do not shift them."""
        self._acking: set[tuple[str, str]] = set()
        if self.people:
            world.bus.subscribe("notification_sent", self._paged)

    # --- paging -------------------------------------------------------------------------

    def _paged(self, event: DomainEvent) -> None:
        user_id = str(event.data.get("notified"))
        person = self.directory.person_of(TOOL, user_id)
        incident = str(event.data.get("incident"))
        if person is None or person not in self.world.scene.people or (person, incident) in self._acking:
            return
        self._acking.add((person, incident))
        at = event.at
        back = self._away_until(person, at)
        low, high = self.world.scene.people[person].replies_after
        due = (back or at) + (low if high <= low else self.rng.uniform(low, high))
        due = self._away_until(person, due) or due
        self.world.schedule(due, lambda: self._acknowledge(person, user_id, incident),
                          f"{person} acknowledges PagerDuty incident")

    def _away_until(self, person: str, at: float) -> float | None:
        """The end of the away window ``person`` is in at ``at`` (following back-to-back
        windows), or None when they are there: the scene's ``people.<p>.away``, read as the
        people engine reads it (a tool does not reach the engine itself)."""
        return self.world.scene.people[person].away_until(self.world.clock.start, at)

    def _acknowledge(self, person: str, user_id: str, incident_id: str) -> None:
        self._acking.discard((person, incident_id))
        incident = self.state.incidents.get(incident_id)
        user = self.state.users.get(user_id)
        if incident is None or user is None or incident.status != "triggered":
            return
        status, _ = self.person.call(person, user, "PUT", f"/incidents/{incident_id}",
                                     {"incident": {"type": "incident_reference", "status": "acknowledged"}})
        if status != 200:
            self.world.record("reply_failed", person=person, tool=TOOL, place={"container": incident_id, "thread": None})

    # --- notes as messages --------------------------------------------------------------

    def utterance(self, event: DomainEvent) -> Utterance | None:
        data = event.data
        incident = self.state.incidents.get(str(data.get("incident")))
        if incident is None:
            return None
        writer = str(data.get("user") or "")
        text = str(data.get("content") or "")
        lowered = text.lower()
        assigned = {u.id for u in incident.assignees}
        audience: dict[str, bool] = {}
        for person, account in self.people:
            if account == writer:
                continue
            user = self.state.users.get(account)
            named = user is not None and (user.name.lower() in lowered or user.email.lower() in lowered)
            if account in assigned or named:
                audience[person] = True
        place = Place(TOOL, incident.id)
        note = data.get("note")
        return Utterance(tool=TOOL, place=place, reply_place=place, author=writer, actor=data.get("actor") or "agent",
                         text=text, at=event.at, locator={"incident": incident.id, "note": note},
                         fields={"incident": incident.id, "note": note, "user": writer}, audience=audience)

    def post(self, person: str, place: Place, text: str) -> dict[str, Any] | None:
        account = self.directory.account(person, TOOL)
        user = self.state.users.get(account or "")
        if user is None:
            return None
        status, answer = self.person.call(person, user, "POST", f"/incidents/{place.container}/notes",
                                          {"note": {"content": text}})
        if status != 200 or not isinstance(answer, dict):
            return None
        return {"incident": place.container, "note": answer["note"]["id"]}
