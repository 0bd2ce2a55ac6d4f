"""Reactions: who reacted with which emoji to an issue, a comment or a release.

GitHub keeps one reaction per (subject, user, content): reacting twice with the same
content gives back the first reaction (200) instead of a new one (201). The store
lives beside the trial's ``GitHubState`` (``reactions_of(state)``), keyed by subject
kind and id, since reaction ids and subject ids are global on GitHub.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from ancha.world.tools.github.models.state import GitHubState
from ancha.world.tools.github.models.users import Account
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id

CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
"""What GitHub's REST API accepts as ``content``, in its order."""

Subject = tuple[str, int]
"""(``issue``/``issue_comment``/``review_comment``/``release``, the subject's id)."""


class Reaction:
    def __init__(self, id: int, user: Account, content: str, created_at: float) -> None:
        self.id = id
        self.node_id = node_id("Reaction", id)
        self.user = user
        self.content = content
        self.created_at = created_at

    def to_dict(self, base: str) -> JSONDict:
        """``reaction``."""
        return {"id": self.id, "node_id": self.node_id, "user": self.user.simple(base), "content": self.content,
                "created_at": iso(self.created_at)}


class Reactions:
    """Every reaction of one trial, by subject, oldest first."""

    def __init__(self) -> None:
        self.by_subject: dict[Subject, list[Reaction]] = {}

    def of(self, subject: Subject, content: str | None = None) -> list[Reaction]:
        return [r for r in self.by_subject.get(subject, []) if content is None or r.content == content]

    def add(self, subject: Subject, user: Account, content: str, at: float, id: int) -> tuple[Reaction, bool]:
        """The user's reaction with ``content`` (made now unless it exists) and whether it is new."""
        existing = next((r for r in self.of(subject, content) if r.user.key == user.key), None)
        if existing is not None:
            return existing, False
        reaction = Reaction(id, user, content, at)
        self.by_subject.setdefault(subject, []).append(reaction)
        return reaction, True

    def find(self, subject: Subject, reaction_id: int) -> Reaction | None:
        return next((r for r in self.by_subject.get(subject, []) if r.id == reaction_id), None)

    def remove(self, subject: Subject, reaction: Reaction) -> None:
        self.by_subject[subject] = [r for r in self.by_subject.get(subject, []) if r is not reaction]

    def rollup(self, subject: Subject, url: str) -> JSONDict:
        """``reaction-rollup`` as issues and comments embed it."""
        counts = dict.fromkeys(CONTENTS, 0)
        for reaction in self.by_subject.get(subject, []):
            counts[reaction.content] += 1
        return {"url": url, "total_count": sum(counts.values()), **counts}


_STORES: WeakKeyDictionary[GitHubState, Reactions] = WeakKeyDictionary()


def reactions_of(state: GitHubState) -> Reactions:
    store = _STORES.get(state)
    if store is None:
        store = _STORES[state] = Reactions()
    return store
