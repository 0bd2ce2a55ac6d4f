"""``world.okta``: one model for the section as written in a scene file and as resolved.

Refs: ``users[].ref`` declares a ``user``, ``groups[].ref`` a ``group`` (both of tool
``okta``). A user's ``groups`` name groups by ``$ref`` or by name; logins and group names
are unique (Okta refuses duplicates), and every problem is reported with its path.
Resolved (what the replica is built from), refs are bare (``okta_dana``) and a user's
``groups`` hold group refs or group names.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from ancha.config.validation import Expect, FileModel, join
from ancha.scene.file_model import RefName
from ancha.scene.refs import Declared
from ancha.scene.sections import SectionContext
from ancha.world.tools.okta.pointers import TOOL, GroupPointer

Status = Literal["STAGED", "PROVISIONED", "ACTIVE", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED", "SUSPENDED",
                 "DEPROVISIONED"]
STATUSES: tuple[str, ...] = ("STAGED", "PROVISIONED", "ACTIVE", "RECOVERY", "LOCKED_OUT", "PASSWORD_EXPIRED",
                             "SUSPENDED", "DEPROVISIONED")
"""Okta's user statuses (the ``UserStatus`` enum of the Management API)."""
Login = Annotated[str, StringConstraints(min_length=1, max_length=100), Expect("a login such as dana@acme.com")]
GroupName = Annotated[str, StringConstraints(min_length=1, max_length=255), Expect("a group name such as Engineering")]
OrgLabel = Annotated[str, StringConstraints(pattern=r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"),
                    Expect("an org subdomain such as acme: one DNS label of lower-case letters, digits and "
                           "hyphens, at most 63, not starting or ending with a hyphen")]


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# The models below are both the section as written and as resolved (``build_world`` validates
# the same classes again from the resolved data). No class docstrings: they would show up in
# ``ancha schema scene`` and in the docs' seed tables.


class UserFile(_File):
    # A seeded user; ``login`` is Okta's sign-in name (an email by default).
    unsupported_fields: ClassVar[dict[str, str]] = {
        "person": "link the user from its person instead: people.<name>.accounts.okta: $ref"}
    ref: RefName | None = None
    login: Login
    email: str | None = None
    """Default: the login."""
    first_name: str | None = None
    last_name: str | None = None
    status: Annotated[Status, Expect("one of " + ", ".join(STATUSES))] = "ACTIVE"
    groups: list[GroupPointer] = Field(default_factory=list)
    """As written: ``$ref`` or name; resolved: a bare group ref or a group's name."""
    person: SkipJsonSchema[str | None] = None
    """Resolved only (a file may not write it: ``unsupported_fields``); not in the schema."""


class GroupFile(_File):
    # A seeded group (an ``OKTA_GROUP``; Okta's built-in ``Everyone`` always exists besides).
    ref: RefName | None = None
    name: GroupName
    description: str | None = None


class OktaFile(_File):
    org: OrgLabel | None = None
    """The org's subdomain at Okta (``https://<org>.okta.com``, with real hostnames). Default:
    the first label of the users' most common login domain (``dana@acme.com``: ``acme``), else ``acme``."""
    users: list[UserFile] = Field(default_factory=list)
    groups: list[GroupFile] = Field(default_factory=list)


def _declare(ctx: SectionContext, item: dict[str, Any], kind: str, path: str) -> None:
    if isinstance(item.get("ref"), str):
        ctx.refs.declare(item["ref"], Declared(kind, ctx.source.line_of(f"{path}.ref"), tool=TOOL),
                         ctx.source.reporter(f"{path}.ref"))


def build_world(clean: dict[str, Any], ctx: SectionContext) -> OktaFile | None:
    """``world.okta``: declare every ref, check logins and names are unique, resolve each
    user's groups in place (bare refs), and validate the resolved section (defaults filled)."""
    base = ctx.path
    ok = True
    groups = [(i, g) for i, g in enumerate(clean.get("groups") or []) if g is not None]
    users = [(i, u) for i, u in enumerate(clean.get("users") or []) if u is not None]
    names: dict[str, int] = {}
    for i, group in groups:
        path = f"{base}.groups[{i}]"
        _declare(ctx, group, "group", path)
        name = str(group.get("name") or "")
        key = name.casefold()
        if key in names:
            ctx.source.add(f"{path}.name", f"duplicate group name {name!r}",
                           f"groups[{names[key]}] has it already; Okta group names are unique")
            ok = False
        elif key == "everyone":
            ctx.source.add(f"{path}.name", "Everyone is Okta's built-in group",
                           "every user is in it already; give this group another name")
            ok = False
        names.setdefault(key, i)
    logins: dict[str, int] = {}
    for i, user in users:
        path = f"{base}.users[{i}]"
        _declare(ctx, user, "user", path)
        login = str(user.get("login") or "")
        if login.casefold() in logins:
            ctx.source.add(f"{path}.login", f"duplicate login {login!r}",
                           f"users[{logins[login.casefold()]}] has it already; Okta logins are unique")
            ok = False
        logins.setdefault(login.casefold(), i)
    for i, user in users:
        path = f"{base}.users[{i}]"
        member_of: list[str] = []
        for j, pointer in enumerate(user.get("groups") or []):
            where = join(f"{path}.groups", j)
            if pointer.startswith("$"):
                group_ref = ctx.refs.resolve(pointer, "group", ctx.source.reporter(where), tool=TOOL)
                if group_ref is None:
                    ok = False
                    continue
                member_of.append(group_ref)
            elif pointer.casefold() in names:
                member_of.append(pointer)
            else:
                known = ", ".join(str(g.get("name")) for _, g in groups) or "none"
                ctx.source.add(where, f"no group named {pointer!r}",
                               f"name a group of world.okta.groups ({known}) or its $ref")
                ok = False
        user["groups"] = member_of
    if not ok:
        return None
    return OktaFile.model_validate({"org": clean.get("org"), "users": [u for _, u in users],
                                    "groups": [g for _, g in groups]})
