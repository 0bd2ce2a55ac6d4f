"""The ``okta.user`` state check and the ``okta.user`` world-rule action, as scene files
write them, and resolved.

Check: ``{ okta.user: <$ref or login>, status: DEPROVISIONED }``, or ``status_in: [...]``,
or ``exists: false`` beside it (exactly one). Action: ``okta.user: { user: <$ref or login>,
status: <target>, groups: [...] }`` moves an existing user; ``okta.user: { login, email,
first_name, last_name, status, groups }`` acts on the user with that login, creating it
when it does not exist. Refs come out bare.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.predicates import Resolver
from ancha.world.tools.okta.seed_model import STATUSES, Status

TOOL = "okta"
UserPointer = Annotated[str, Expect("a user ref such as $okta_dana, or a login such as dana@acme.com")]
GroupPointer = Annotated[str, Expect("a group ref such as $okta_eng, or a group's name")]
STATUS_HINT = "Okta's statuses: " + ", ".join(STATUSES)
SIBLINGS: dict[str, Any] = {"status": str, "status_in": list[str], "exists": bool}
"""Written beside ``okta.user`` in a check. ``status`` is a plain string here (another tool's
check may share the sibling's name); its values are checked by ``resolve_user_state``."""


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


UserStateFile = UserPointer


class UserState(_Model):
    """Resolved: one of ``user`` (a bare ref) or ``login``; one of the three conditions."""

    user: str | None = None
    login: str | None = None
    status: Status | None = None
    status_in: list[Status] | None = None
    exists: bool | None = None


class UserActionFile(_File):
    user: UserPointer | None = None
    login: str | None = None
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    status: Annotated[Status, Expect("one of " + ", ".join(STATUSES))] | None = None
    groups: list[GroupPointer] = Field(default_factory=list)


class UserAction(_Model):
    user: str | None = None
    """A bare user ref (the user must exist)."""
    login: str | None = None
    """A login: the user it names, created when missing (``user`` absent)."""
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    status: Status | None = None
    groups: list[str] = Field(default_factory=list)
    group_refs: list[bool] = Field(default_factory=list)
    """Per group: True when it is a bare ref, False when it is a name."""


def _user(resolver: Resolver, value: Any, path: str) -> tuple[str | None, str | None, bool]:
    """(bare ref, login, ok) of a user pointer."""
    if not isinstance(value, str) or not value.strip():
        resolver.add(path, f"expected a user ref such as $okta_dana or a login, got {value!r}")
        return None, None, False
    if value.startswith("$"):
        name = resolver.refs.resolve(value, "user", resolver.source.reporter(path), tool=TOOL)
        return name, None, name is not None
    return None, value, True


def _statuses(resolver: Resolver, values: list[Any], path: str) -> bool:
    wrong = [v for v in values if v not in STATUSES]
    for value in wrong:
        resolver.add(path, f"unknown Okta status {value!r}", STATUS_HINT)
    return not wrong


def resolve_user_state(data: dict[str, Any], path: str, resolver: Resolver) -> UserState | None:
    parent = path.rsplit(".", 2)[0]
    given = [name for name in SIBLINGS if data.get(name) is not None]
    if len(given) != 1:
        resolver.add(parent, "okta.user needs exactly one of status, status_in or exists" if not given else
                     f"okta.user takes one of status, status_in or exists, not {' and '.join(given)}",
                     "for example status: DEPROVISIONED, status_in: [SUSPENDED, DEPROVISIONED] or exists: false")
        return None
    ref, login, ok = _user(resolver, data["value"], path)
    if data.get("status") is not None:
        ok = _statuses(resolver, [data["status"]], join(parent, "status")) and ok
    if data.get("status_in") is not None:
        if not data["status_in"]:
            resolver.add(join(parent, "status_in"), "needs at least one status", STATUS_HINT)
            ok = False
        ok = _statuses(resolver, data["status_in"], join(parent, "status_in")) and ok
    if not ok:
        return None
    return UserState.model_validate({"user": ref, "login": login, "status": data.get("status"),
                                     "status_in": data.get("status_in"), "exists": data.get("exists")})


def resolve_user_action(data: dict[str, Any], path: str, resolver: Resolver) -> UserAction | None:
    has_user, has_login = data.get("user") is not None, data.get("login") is not None
    if has_user == has_login:
        resolver.add(path, "okta.user needs exactly one of user or login",
                     "user: $okta_dana moves an existing user; login: dana@acme.com also creates it when missing")
        return None
    ok = True
    ref = login = None
    if has_user:
        ref, login, ok = _user(resolver, data["user"], join(path, "user"))
        if ok and data.get("status") is None and not data.get("groups"):
            resolver.add(path, "okta.user with user needs a status or groups",
                         "for example status: SUSPENDED")
            ok = False
    else:
        login = data["login"]
        if not login.strip():
            resolver.add(join(path, "login"), "needs a login such as dana@acme.com")
            ok = False
    groups: list[str] = []
    is_ref: list[bool] = []
    for i, pointer in enumerate(data.get("groups") or []):
        if pointer.startswith("$"):
            name = resolver.refs.resolve(pointer, "group", resolver.source.reporter(join(join(path, "groups"), i)),
                                         tool=TOOL)
            ok = ok and name is not None
            groups.append(name or "")
            is_ref.append(True)
        else:
            groups.append(pointer)
            is_ref.append(False)
    if not ok:
        return None
    return UserAction(user=ref, login=login, email=data.get("email"), first_name=data.get("first_name"),
                      last_name=data.get("last_name"), status=data.get("status"), groups=groups, group_refs=is_ref)
