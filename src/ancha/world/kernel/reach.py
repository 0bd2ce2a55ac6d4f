"""Who a message reaches, whatever tool carries it.

People (``people.py``) never look at a tool's state: each tool that carries
conversations declares a ``Reach`` adapter in its ``ToolSpec`` (``reach=``). The adapter
turns the tool's "a message was written" domain event into an ``Utterance`` (where it
was said, where an answer goes, who wrote it and whom it reaches) and writes a person's
answer back through the tool's own API, so the people code never changes for a tool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ancha.world.kernel.bus import DomainEvent

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort


@dataclass(frozen=True, slots=True)
class Place:
    """Where a conversation happens: ``container`` is the tool's id of it (a channel, a DM,
    an issue ``owner/repo#13``); ``thread`` a thread's root within it, where the tool has them."""

    tool: str
    container: str
    thread: str | None = None


@dataclass(slots=True)
class Utterance:
    """A message written in the world, as people see it."""

    tool: str
    place: Place
    """Where it was said."""
    reply_place: Place
    """Where an answer to it goes (the same thread; a new thread under a channel message;
    the direct conversation or the issue itself)."""
    author: str
    """The author's account id on the tool."""
    actor: str
    """The trace actor that wrote it: ``agent``, ``person:NAME``, ``world``."""
    text: str
    at: float
    """Simulated time it was written."""
    locator: dict[str, Any]
    """What records point at for this message (``{"channel", "ts"}`` for a chat message)."""
    fields: dict[str, Any]
    """The tool's own fields of the ``message`` record (channel, ts, thread_ts, user; or
    issue/pull and comment for an issue tracker)."""
    audience: dict[str, bool] = field(default_factory=dict)
    """Person key -> whether the message addresses them directly (a DM or a mention) rather
    than reaching them in a thread they are in or a channel they listen to."""


class Reach(Protocol):
    """One tool's adapter between its conversations and the world's people."""

    tool: str
    events: tuple[str, ...]
    """The domain event types that announce a newly written message."""

    def utterance(self, event: DomainEvent) -> Utterance | None:
        """The message ``event`` announces, with its audience; None when it is not one."""
        ...

    def post(self, person: str, place: Place, text: str) -> dict[str, Any] | None:
        """Write ``text`` as ``person`` in ``place`` through the tool's API (traced with actor
        ``person:NAME``); the new message's locator, or None when the tool refused it."""
        ...


class Directory:
    """The people's accounts on each tool, and the places they listen to, as ids."""

    def __init__(self, env: WorldPort) -> None:
        self.env = env
        self._account: dict[tuple[str, str], str] = {}
        self._person: dict[tuple[str, str], str] = {}
        self._listens: dict[str, set[str]] = {}
        for key, person in env.scene.people.items():
            for tool, ref in person.accounts.items():
                record = env.refs.get(_bare(ref))
                if record is not None:
                    self.link(tool, record.id, key)
            self._listens[key] = {r.id for r in (env.refs.get(_bare(ref)) for ref in person.listens)
                                  if r is not None}

    def link(self, tool: str, account: str, person: str) -> None:
        """Say that ``account`` on ``tool`` is ``person``'s (first link per person wins)."""
        if person not in self.env.scene.people:
            return
        self._account.setdefault((person, tool), account)
        self._person.setdefault((tool, account), person)

    def account(self, person: str, tool: str) -> str | None:
        return self._account.get((person, tool))

    def person_of(self, tool: str, account: str) -> str | None:
        return self._person.get((tool, account))

    def people_on(self, tool: str) -> list[tuple[str, str]]:
        """``(person, account)`` of everyone with an account on ``tool``, in scene order."""
        return [(p, self._account[(p, tool)]) for p in self.env.scene.people if (p, tool) in self._account]

    def listens_to(self, person: str, container: str) -> bool:
        return container in self._listens.get(person, ())


ReachFactory = Callable[[Any, "WorldPort", Directory], Reach]
"""Builds a tool's ``Reach`` from its replica, the world and the people's directory."""


def _bare(ref: str) -> str:
    """``$user.laura_chat`` / ``$laura_chat`` / ``laura_chat`` -> ``laura_chat``."""
    return ref.removeprefix("$").rpartition(".")[2]
