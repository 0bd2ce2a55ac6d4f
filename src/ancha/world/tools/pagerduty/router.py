"""Path templates (PagerDuty's own, as in ``endpoints.txt``) matched segment by segment.

Routes are grouped by their number of segments; within a group, templates with more
literal segments are tried first, so ``/users/me`` wins over ``/users/{id}``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class _Entry(Generic[T]):
    method: str
    template: str
    segments: tuple[str | None, ...]
    """Literal segments, None for a parameter."""
    names: tuple[str, ...]
    value: T


class Router(Generic[T]):
    def __init__(self) -> None:
        self._by_length: dict[int, list[_Entry[T]]] = {}

    def add(self, method: str, template: str, value: T) -> None:
        parts = [p for p in template.split("/") if p]
        segments = tuple(None if p.startswith("{") else p for p in parts)
        names = tuple(p.strip("{}") for p in parts if p.startswith("{"))
        entries = self._by_length.setdefault(len(parts), [])
        entries.append(_Entry(method.upper(), template, segments, names, value))
        entries.sort(key=lambda e: sum(s is None for s in e.segments))

    def match(self, method: str, path: str) -> tuple[T, dict[str, str]] | None | bool:
        """``(value, params)`` for ``method path``; True when the path exists for another
        method only; None when no template has the path."""
        parts = [p for p in path.split("/") if p]
        other = False
        for entry in self._by_length.get(len(parts), ()):
            if all(s is None or s == p for s, p in zip(entry.segments, parts, strict=True)):
                if entry.method == method:
                    values = [p for s, p in zip(entry.segments, parts, strict=True) if s is None]
                    return entry.value, dict(zip(entry.names, values, strict=True))
                other = True
        return True if other else None


Handler = Callable[..., Any]


@dataclass(slots=True)
class Route:
    method: str
    template: str
    handler: Handler
    partial: str = ""
    """What of PagerDuty's behaviour this route leaves out ('' when complete); goes to the ledger."""


ROUTES: list[Route] = []
LINKS: list[Route] = []
"""Paths PagerDuty's API description lacks that the replica answers because its own links
lead there (a priority's ``self``); kept out of the coverage ledger."""


def route(method: str, template: str, *, partial: str = "") -> Callable[[Handler], Handler]:
    """Serve ``method template`` with the decorated handler (one per vendor operation)."""

    def register(handler: Handler) -> Handler:
        ROUTES.append(Route(method.upper(), template, handler, partial))
        return handler

    return register


def link(template: str) -> Callable[[Handler], Handler]:
    """Answer ``GET template``, a path only the replica's links lead to (see ``LINKS``)."""

    def register(handler: Handler) -> Handler:
        LINKS.append(Route("GET", template, handler))
        return handler

    return register
