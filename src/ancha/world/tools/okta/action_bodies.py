"""The ``okta.user`` world-rule action, as scene files write it, and resolved.

``okta.user: { user: <$ref or login>, status: <target>, groups: [...] }`` moves an existing
user; ``okta.user: { login, email, first_name, last_name, status, groups }`` acts on the user
with that login, creating it when it does not exist. Refs come out bare.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.predicates import Resolver
from ancha.world.tools.okta.pointers import TOOL, GroupPointer, UserPointer, resolve_user
from ancha.world.tools.okta.scene_file import STATUSES, Status


class UserActionFile(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    user: UserPointer | None = None
    login: str | None = None
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    status: Annotated[Status, Expect("one of " + ", ".join(STATUSES))] | None = None
    groups: list[GroupPointer] = Field(default_factory=list)


class UserAction(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

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


def resolve_user_action(data: dict[str, Any], path: str, resolver: Resolver) -> UserAction | None:
    has_user, has_login = data.get("user") is not None, data.get("login") is not None
    if has_user == has_login:
        resolver.add(path, "okta.user needs exactly one of user or login",
                     "user: $okta_dana moves an existing user; login: dana@acme.com also creates it when missing")
        return None
    ok = True
    ref = login = None
    if has_user:
        ref, login, ok = resolve_user(resolver, data["user"], join(path, "user"))
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
