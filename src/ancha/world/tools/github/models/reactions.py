"""Reactions: who reacted with which emoji to an issue, a comment or a release.

GitHub keeps one reaction per (subject, user, content): reacting twice with the same
content gives back the first reaction (200) instead of a new one (201). The store lives
in the subject's repository (``reactions_of(repo)``, in ``Repo.extra``), keyed by subject
kind and id, since reaction ids and subject ids are global on GitHub; keeping it with the
repository lets issues, comments, review comments and releases embed their real
``reactions`` rollup (``rollup(repo, subject, url)``) without reaching for the state.
The store counts each subject's reactions as they are added and removed, so a rollup and
the wire caches' stamps (``counts(repo, subject)``) cost a dictionary look-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ancha.world.tools.github.models.users import Account
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id

if TYPE_CHECKING:
    from ancha.world.tools.github.models.repos import Repo

CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
"""What GitHub's REST API accepts as ``content``, in its order."""
ROLLUP = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")
"""The contents in the order GitHub's ``reaction-rollup`` shows them."""

Subject = tuple[str, int]
"""(``issue``/``issue_comment``/``review_comment``/``release``, the subject's id)."""

Counts = tuple[int, ...]
"""A subject's reactions per content, in ``ROLLUP`` order."""

_KEY = "reactions"
"""Where a repository keeps its ``Reactions`` (``Repo.extra``)."""
_NONE: Counts = (0,) * len(ROLLUP)
_INDEX = {content: i for i, content in enumerate(ROLLUP)}


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
    """Every reaction in one repository, by subject, oldest first, and their counts."""

    def __init__(self) -> None:
        self.by_subject: dict[Subject, list[Reaction]] = {}
        self.counts: dict[Subject, Counts] = {}
        """Per subject with reactions, how many of each content (``ROLLUP`` order)."""

    def of(self, subject: Subject, content: str | None = None) -> list[Reaction]:
        return [r for r in self.by_subject.get(subject, []) if content is None or r.content == content]

    def add(self, subject: Subject, user: Account, content: str, at: float, id: int) -> tuple[Reaction, bool]:
        """The user's reaction with ``content`` (made now unless it exists) and whether it is new."""
        existing = next((r for r in self.of(subject, content) if r.user.key == user.key), None)
        if existing is not None:
            return existing, False
        reaction = Reaction(id, user, content, at)
        self.by_subject.setdefault(subject, []).append(reaction)
        self._count(subject)
        return reaction, True

    def find(self, subject: Subject, reaction_id: int) -> Reaction | None:
        return next((r for r in self.by_subject.get(subject, []) if r.id == reaction_id), None)

    def remove(self, subject: Subject, reaction: Reaction) -> None:
        self.by_subject[subject] = [r for r in self.by_subject.get(subject, []) if r is not reaction]
        self._count(subject)

    def _count(self, subject: Subject) -> None:
        counts = [0] * len(ROLLUP)
        for reaction in self.by_subject.get(subject, []):
            counts[_INDEX[reaction.content]] += 1
        if any(counts):
            self.counts[subject] = tuple(counts)
        else:
            self.counts.pop(subject, None)


def reactions_of(repo: Repo) -> Reactions:
    """The repository's reactions (made on first use)."""
    store = repo.extra.get(_KEY)
    if not isinstance(store, Reactions):
        store = repo.extra[_KEY] = Reactions()
    return store


def counts(repo: Repo, subject: Subject) -> Counts:
    """How many of each content the subject has (``ROLLUP`` order); makes no store."""
    store = repo.extra.get(_KEY)
    if not isinstance(store, Reactions):
        return _NONE
    return store.counts.get(subject, _NONE)


def rollup(repo: Repo, subject: Subject, url: str) -> JSONDict:
    """``reaction-rollup`` as issues, comments and releases embed it; ``url`` is the subject's own."""
    found = counts(repo, subject)
    return {"url": f"{url}/reactions", "total_count": sum(found), **dict(zip(ROLLUP, found, strict=True))}
