"""Routes in Datadog's own path templates (``/api/v1/monitor/{monitor_id}``), so the coverage
ledger can tell which of the vendor's operations are served.

Matching is by method and segment count, literal segments before parameters: a handful of
candidates per request, whatever the number of routes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ancha.world.tools.datadog.call import Call

Handler = Callable[["Call"], Any]
T = TypeVar("T")


@dataclass(slots=True)
class Route:
    method: str
    template: str
    handler: Handler
    partial: str = ""
    """What of Datadog's behaviour this route leaves out ('' when complete); goes to the ledger."""
    app_key: bool = True
    """Datadog wants an application key as well as the API key (most endpoints)."""


_ROUTES: list[Route] = []


def route(method: str, template: str, *, partial: str = "", app_key: bool = True) -> Callable[[Handler], Handler]:
    """Serve ``method template`` (as the vendor writes it) with the decorated handler."""

    def register(handler: Handler) -> Handler:
        _ROUTES.append(Route(method.upper(), template, handler, partial, app_key))
        return handler

    return register


def registered() -> list[Route]:
    return list(_ROUTES)


class Table(Generic[T]):
    """``METHOD template`` -> value, matched against concrete paths."""

    def __init__(self) -> None:
        self._by_shape: dict[tuple[str, int], list[tuple[tuple[str | None, ...], list[str], T]]] = defaultdict(list)

    def add(self, method: str, template: str, value: T) -> None:
        segments = [s for s in template.split("/") if s]
        pattern = tuple(None if s.startswith("{") and s.endswith("}") else s for s in segments)
        names = [s[1:-1] for s in segments if s.startswith("{") and s.endswith("}")]
        bucket = self._by_shape[(method, len(segments))]
        bucket.append((pattern, names, value))
        # Literals first: /monitor/search before /monitor/{monitor_id}.
        bucket.sort(key=lambda item: [s is None for s in item[0]])

    def match(self, method: str, path: str) -> tuple[T, dict[str, str]] | None:
        segments = [s for s in path.split("/") if s]
        for pattern, names, value in self._by_shape.get((method, len(segments)), ()):
            values: list[str] = []
            for want, got in zip(pattern, segments, strict=True):
                if want is None:
                    values.append(got)
                elif want != got:
                    break
            else:
                return value, dict(zip(names, values, strict=True))
        return None
