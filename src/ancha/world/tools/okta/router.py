"""Okta's paths: the served routes, and what every other path answers.

Every path template Okta publishes (the coverage ledger) and every served one compile to
one matcher. A path takes the most specific template that matches it (a literal segment
beats a parameter, left to right: ``/api/v1/groups/rules`` is not group ``rules``). Then
the method decides: served -> its handler; in Okta's list but not served -> 501, a
coverage gap; otherwise Okta's 405 ``E0000022``. A path no template matches gets Okta's
404 ``E0000008``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

_PARAM = re.compile(r"\{[^}]+\}")


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    template: str
    handler: Callable[..., Any]
    partial: str = ""
    """What this replica leaves out of the operation ('' when complete)."""


_ROUTES: dict[tuple[str, str], Route] = {}


def route(method: str, template: str, partial: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a handler for ``METHOD template`` (Okta's own template text)."""

    def register(handler: Callable[..., Any]) -> Callable[..., Any]:
        _ROUTES[(method, template)] = Route(method, template, handler, partial)
        return handler
    return register


def registered() -> list[Route]:
    return list(_ROUTES.values())


@dataclass(frozen=True, slots=True)
class _Template:
    text: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    rank: tuple[int, ...]
    """1 per literal segment, 0 per parameter: larger sorts first."""


def _compile(template: str) -> _Template:
    names = tuple(m.group(0)[1:-1] for m in _PARAM.finditer(template))
    pieces = _PARAM.split(template)
    regex = "".join(re.escape(p) + ("([^/]+)" if i < len(pieces) - 1 else "") for i, p in enumerate(pieces))
    rank = tuple(0 if "{" in s else 1 for s in template.strip("/").split("/"))
    return _Template(template, re.compile(f"^{regex}$"), names, rank)


@dataclass(frozen=True, slots=True)
class Match:
    template: str
    params: dict[str, str]
    route: Route | None
    vendor: bool
    """Okta has this method on this template."""
    methods: frozenset[str]


class Table:
    """Served routes plus Okta's ledger, by path."""

    def __init__(self, vendor: set[str]) -> None:
        self.vendor = vendor
        methods: dict[str, set[str]] = {}
        for key in vendor | {f"{m} {t}" for m, t in _ROUTES}:
            method, _, template = key.partition(" ")
            methods.setdefault(template, set()).add(method)
        self.methods = {t: frozenset(m) for t, m in methods.items()}
        compiled = sorted((_compile(t) for t in methods), key=lambda t: t.rank, reverse=True)
        self.literal = {t.text: t for t in compiled if not t.names}
        self.by_length: dict[int, list[_Template]] = {}
        for item in compiled:
            if item.names:
                self.by_length.setdefault(len(item.rank), []).append(item)

    def match(self, method: str, path: str) -> Match | None:
        best: _Template | None = self.literal.get(path)
        groups: tuple[str, ...] = ()
        if best is None:
            # Sorted most specific first: the first match is the best one.
            for template in self.by_length.get(path.strip("/").count("/") + 1, ()):
                found = template.pattern.match(path)
                if found is not None:
                    best, groups = template, found.groups()
                    break
        if best is None:
            return None
        params = dict(zip(best.names, groups, strict=True))
        return Match(best.text, params, _ROUTES.get((method, best.text)), f"{method} {best.text}" in self.vendor,
                     self.methods[best.text])


@cache
def table() -> Table:
    from ancha.world.tools.okta.coverage_ledger import LEDGER
    from ancha.world.tools.okta.routes import load_all

    load_all()
    return Table(set(LEDGER))
