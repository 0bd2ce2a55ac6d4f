"""Path-template routing, compiled once into a segment trie.

Route modules declare handlers with ``@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}")``,
using the vendor's own templates (``endpoints.txt``), so the coverage ledger can tell
which of GitHub's endpoints are served. Matching walks the request path one segment at
a time, literals before parameters, backtracking when a branch dead-ends, so cost is
proportional to the path's depth, not to the number of routes.

A final parameter named ``path``, ``ref``, ``name`` or ``branch`` (and a segment such as
``{base}...{head}``) is greedy: it takes the rest of the path, slashes included, as
``contents/docs/README.md``, ``git/refs/heads/feature/x`` and label names like
``area/ui`` need.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ancha.world.tools.github.call import Call

Handler = Callable[["Call"], Any]
T = TypeVar("T")

GREEDY_TAIL = frozenset({"path", "ref", "name", "branch"})


@dataclass(slots=True)
class Route:
    method: str
    template: str
    handler: Handler
    partial: str = ""
    """What of GitHub's behaviour this route leaves out ('' when complete); goes to the ledger."""
    resource: str = "core"
    """The rate-limit bucket it counts against (``core``, ``search``)."""


_ROUTES: list[Route] = []


def route(method: str, template: str, *, partial: str = "", resource: str = "core") -> Callable[[Handler], Handler]:
    """Serve ``method template`` with the decorated handler (one per vendor operation)."""

    def register(handler: Handler) -> Handler:
        _ROUTES.append(Route(method.upper(), template, handler, partial, resource))
        return handler

    return register


def registered() -> list[Route]:
    """Every route declared so far (import ``routes`` first to load them all)."""
    return list(_ROUTES)


def _param(segment: str) -> str | None:
    """The parameter name of a template segment, or None for a literal."""
    if "{" not in segment:
        return None
    if segment.startswith("{") and segment.endswith("}") and segment.count("{") == 1:
        return segment[1:-1]
    return "".join(ch for ch in segment if ch.isalnum() or ch == "_")  # {base}...{head} -> basehead


@dataclass(slots=True)
class _Node(Generic[T]):
    literals: dict[str, _Node[T]] = field(default_factory=dict)
    param: tuple[str, _Node[T]] | None = None
    greedy: tuple[str, dict[str, T]] | None = None
    methods: dict[str, T] = field(default_factory=dict)


class Router(Generic[T]):
    """Templates -> values per method. ``match`` gives ``(values by method, params)`` or None."""

    def __init__(self) -> None:
        self._root: _Node[T] = _Node()

    def add(self, method: str, template: str, value: T) -> None:
        segments = [s for s in template.split("/") if s]
        node = self._root
        for i, segment in enumerate(segments):
            name = _param(segment)
            last = i == len(segments) - 1
            if name is not None and last and (name in GREEDY_TAIL or segment.count("{") > 1):
                if node.greedy is None:
                    node.greedy = (name, {})
                node.greedy[1][method] = value
                # The same template also matches a single segment exactly (one trie path).
            if name is None:
                node = node.literals.setdefault(segment.lower(), _Node())
            else:
                if node.param is None:
                    node.param = (name, _Node())
                # Templates may name one position differently ({issue_number}, {pull_number}):
                # values come back by position and each route zips them with its own names.
                node = node.param[1]
        node.methods[method] = value

    def add_all(self, entries: Iterable[tuple[str, str, T]]) -> None:
        for method, template, value in entries:
            self.add(method, template, value)

    def match(self, path: str, method: str | None = None) -> tuple[dict[str, T], list[str]] | None:
        """The values at ``path`` and the parameter values in path order; with ``method``,
        a branch that serves it is preferred over one that only has the path."""
        segments = [s for s in path.split("/") if s]
        if method is not None:
            found = self._walk(self._root, segments, 0, [], method)
            if found is not None:
                return found
        return self._walk(self._root, segments, 0, [], None)

    def _walk(self, node: _Node[T], segments: list[str], i: int, values: list[str],
              method: str | None) -> tuple[dict[str, T], list[str]] | None:
        if i == len(segments):
            return (node.methods, values) if node.methods and (method is None or method in node.methods) else None
        segment = segments[i]
        child = node.literals.get(segment.lower())
        if child is not None:
            found = self._walk(child, segments, i + 1, values, method)
            if found is not None:
                return found
        if node.param is not None:
            found = self._walk(node.param[1], segments, i + 1, [*values, segment], method)
            if found is not None:
                return found
        if node.greedy is not None and (method is None or method in node.greedy[1]):
            return node.greedy[1], [*values, "/".join(segments[i:])]
        return None


@functools.cache
def template_params(template: str) -> tuple[str, ...]:
    """Parameter names of a template, in order (worked out once per template: every call asks)."""
    return tuple(name for s in template.split("/") if s and (name := _param(s)) is not None)
