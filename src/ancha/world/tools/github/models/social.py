"""Stars, watching, and pending org invitations: who follows a repository, who is invited.

Stars and subscriptions live in ``Repo.extra`` (``stargazers``/``subscribers``: login key ->
``Star``/``Subscription``), so they go with the repository and ``Repo.to_dict`` can count
them. Pending org memberships (an invitation not yet accepted) live beside the trial's
``GitHubState`` (``invitations_of(state)``): until accepted they grant nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from ancha.world.tools.github.models.repos import Repo
from ancha.world.tools.github.models.state import GitHubState
from ancha.world.tools.github.models.users import User


@dataclass(slots=True)
class Star:
    user: User
    starred_at: float


@dataclass(slots=True)
class Subscription:
    user: User
    created_at: float
    subscribed: bool = True
    ignored: bool = False


def stargazers(repo: Repo) -> dict[str, Star]:
    found = repo.extra.setdefault("stargazers", {})
    assert isinstance(found, dict)
    return found


def subscribers(repo: Repo) -> dict[str, Subscription]:
    """Everyone with a subscription setting (``subscribed`` or ``ignored``)."""
    found = repo.extra.setdefault("subscribers", {})
    assert isinstance(found, dict)
    return found


def watching(repo: Repo) -> list[Subscription]:
    return [s for s in subscribers(repo).values() if s.subscribed and not s.ignored]


@dataclass(slots=True)
class Invitation:
    """A pending org membership: the role it grants, and teams it joins when accepted."""

    role: str
    teams: dict[str, str] = field(default_factory=dict)
    """Team slug -> team role (``member``/``maintainer``)."""


_INVITATIONS: WeakKeyDictionary[GitHubState, dict[str, dict[str, Invitation]]] = WeakKeyDictionary()


def invitations_of(state: GitHubState) -> dict[str, dict[str, Invitation]]:
    """Org key -> user key -> pending invitation."""
    found = _INVITATIONS.get(state)
    if found is None:
        found = _INVITATIONS[state] = {}
    return found
