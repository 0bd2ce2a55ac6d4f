"""One REST call: who makes it, its parameters, and GitHub's access rules.

Handlers get a ``Call``. ``call.repo(owner, repo, need=...)`` applies GitHub's
visibility rules in one place: a private repository the caller cannot read does not
exist for them (404), a write without the role answers 403 (401 when anonymous).
``call.page(items)`` slices a list by ``page``/``per_page`` and sets the ``Link``
header; handlers return JSON-able values (200) or a ``Reply`` for other statuses.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode

from ancha.world.kernel import bounded_json
from ancha.world.tools.github import errors
from ancha.world.tools.github.models import Issue, Repo, User, role_rank

if TYPE_CHECKING:
    from ancha.world.tools.github.models import GitHubState
    from ancha.world.tools.github.replica import GitHubReplica
    from ancha.world.tools.github.router import Route

X = TypeVar("X")
NEEDS = {"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100


@dataclass(frozen=True, slots=True)
class Caller:
    user: User
    actor: str
    """The trace actor: ``agent``, ``person:NAME`` or ``world``."""


@dataclass(slots=True)
class Reply:
    """A handler's answer when it is not a plain 200 with JSON."""

    status: int = 200
    body: Any = None
    """JSON-able; None means an empty body (204)."""
    headers: dict[str, str] = field(default_factory=dict)


def no_content() -> Reply:
    return Reply(204)


def created(body: Any, location: str | None = None) -> Reply:
    return Reply(201, body, {"location": location} if location else {})


class Call:
    """Everything a handler needs; ``params`` are the path parameters by the route's names."""

    def __init__(self, replica: GitHubReplica, route: Route, method: str, path: str, params: dict[str, str],
                 query: str, raw_body: bytes, caller: Caller | None, base: str) -> None:
        self.replica = replica
        self.state: GitHubState = replica.state
        self.route = route
        self.method = method
        self.path = path
        self.params = params
        self.raw_query = query
        self.query: dict[str, str] = {}
        for key, value in parse_qsl(query, keep_blank_values=True):
            self.query.setdefault(key, value)
        self.caller = caller
        self.base = base
        self.headers: dict[str, str] = {}
        """Extra response headers (``Link``...)."""
        self.request_headers: dict[str, str] = {}
        """The request's headers, lower-case names (``Accept`` picks raw media types)."""
        self._raw_body = raw_body
        self._body: dict[str, Any] | None = None

    # --- who ----------------------------------------------------------------------------

    @property
    def user(self) -> User:
        """The authenticated user; 401 ``Requires authentication`` for anonymous calls."""
        if self.caller is None:
            raise errors.RequiresAuthentication()
        return self.caller.user

    @property
    def actor(self) -> str:
        return self.caller.actor if self.caller is not None else "agent"

    # --- parameters ---------------------------------------------------------------------

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body (``{}`` when empty); 400 ``Problems parsing JSON`` when it is not an object."""
        if self._body is None:
            raw = self._raw_body.strip()
            if not raw:
                self._body = {}
            else:
                try:
                    value = bounded_json.loads(raw)
                except (ValueError, UnicodeDecodeError):
                    raise errors.ProblemsParsingJSON() from None
                if not isinstance(value, dict):
                    raise errors.ProblemsParsingJSON()
                self._body = value
        return self._body

    @property
    def raw_body(self) -> bytes:
        """The body's bytes as sent (an upload's file)."""
        return self._raw_body

    @property
    def has_body(self) -> bool:
        return bool(self._raw_body.strip())

    def body_or_array(self, key: str) -> dict[str, Any]:
        """The body, where a bare JSON array stands for ``{key: array}`` (GitHub takes both for labels)."""
        raw = self._raw_body.strip()
        if self._body is None and raw.startswith(b"["):
            try:
                value = bounded_json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                raise errors.ProblemsParsingJSON() from None
            self._body = {key: value}
        return self.body

    def number(self, name: str) -> int:
        """A numeric path parameter; anything else is GitHub's 404."""
        value = self.params.get(name, "")
        if not value.isascii() or not value.isdigit() or len(value) > 18:
            raise errors.NotFound()
        return int(value)

    def q_int(self, name: str, default: int, low: int = 1, high: int | None = None) -> int:
        value = self.query.get(name, "")
        try:
            number = int(value)
        except ValueError:
            return default
        if number < low:
            return default
        return min(number, high) if high is not None else number

    def q_enum(self, name: str, allowed: Sequence[str], default: str) -> str:
        value = self.query.get(name, default) or default
        if value not in allowed:
            raise errors.invalid_request(f"For '{name}', \"{value}\" is not one of {', '.join(allowed)}.")
        return value

    def q_time(self, name: str) -> float | None:
        """An ISO 8601 query time (``since``); 422 when malformed, as GitHub does."""
        value = self.query.get(name)
        if not value:
            return None
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise errors.invalid_request(f"For '{name}', \"{value}\" is not a date-time.") from None

    def field_str(self, name: str, *, resource: str = "", required: bool = False, allow_none: bool = True,
                  default: str | None = None) -> str | None:
        """A string body field (numbers are taken as text, as GitHub does for titles)."""
        body = self.body
        if name not in body:
            if required:
                raise errors.missing_field(resource, name)
            return default
        value = body[name]
        if value is None:
            if required or not allow_none:
                raise errors.invalid_request(f"For '{name}', nil is not a string.")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise errors.invalid_request(f"For '{name}', {json.dumps(value)} is not a string.")
        return str(value)

    def field_bool(self, name: str, default: bool | None = None) -> bool | None:
        value = self.body.get(name, default)
        if value is None or isinstance(value, bool):
            return value
        raise errors.invalid_request(f"For '{name}', {json.dumps(value)} is not a boolean.")

    def field_list(self, name: str, *, required: bool = False) -> list[str] | None:
        """A list of strings (a bare string is taken as a one-item list, as GitHub does for labels)."""
        if name not in self.body:
            if required:
                raise errors.invalid_request(f"For '{name}', nil is not an array.")
            return None
        value = self.body[name]
        if value is None:
            return None
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise errors.invalid_request(f"For '{name}', {json.dumps(value)} is not an array.")
        out: list[str] = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                item = item["name"]  # labels may be objects with a name
            if isinstance(item, bool) or not isinstance(item, str | int):
                raise errors.invalid_request(f"For '{name}/{len(out)}', {json.dumps(item)} is not a string.")
            out.append(str(item))
        return out

    # --- access ---------------------------------------------------------------------------

    def role(self, repo: Repo) -> str | None:
        return self.state.role(repo, self.caller.user if self.caller is not None else None)

    def repo(self, owner: str | None = None, name: str | None = None, need: str = "read") -> Repo:
        """The repository at ``owner/name`` (the path's by default) if the caller may ``need`` it."""
        repo = self.state.repo(owner or self.params.get("owner", ""), name or self.params.get("repo", ""))
        if repo is None:
            raise errors.NotFound()
        role = self.role(repo)
        if role is None:
            raise errors.NotFound()
        if role_rank(role) < NEEDS[need]:
            if self.caller is None:
                raise errors.RequiresAuthentication()
            raise errors.MustHaveAdmin() if need == "admin" else errors.MustHavePush()
        return repo

    def can(self, repo: Repo, need: str) -> bool:
        return role_rank(self.role(repo)) >= NEEDS[need]

    def issue(self, repo: Repo, name: str = "issue_number") -> Issue:
        issue = repo.issues.get(self.number(name))
        if issue is None:
            raise errors.NotFound()
        return issue

    # --- pages ----------------------------------------------------------------------------

    def page(self, items: Sequence[X]) -> Sequence[X]:
        """``items`` sliced by ``page``/``per_page`` (30 by default, at most 100), with ``Link``."""
        per_page = self.q_int("per_page", DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)
        page = self.q_int("page", 1, 1)
        last = max(1, -(-len(items) // per_page))
        links: list[str] = []
        if page > 1:
            links.append(f'<{self._page_url(min(page - 1, last))}>; rel="prev"')
        if page < last:
            links.append(f'<{self._page_url(page + 1)}>; rel="next"')
            links.append(f'<{self._page_url(last)}>; rel="last"')
        if page > 1:
            links.append(f'<{self._page_url(1)}>; rel="first"')
        if links:
            self.headers["link"] = ", ".join(links)
        start = (page - 1) * per_page
        return items[start:start + per_page]

    def _page_url(self, page: int) -> str:
        pairs = [(k, v) for k, v in parse_qsl(self.raw_query, keep_blank_values=True) if k != "page"]
        pairs.append(("page", str(page)))
        return f"{self.base}{self.path}?{urlencode(pairs)}"

    # --- time -----------------------------------------------------------------------------

    def now(self) -> float:
        """Simulated now; strictly later than any earlier reading."""
        return self.replica.world.clock.now()
