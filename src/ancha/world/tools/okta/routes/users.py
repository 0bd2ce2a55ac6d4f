"""Users: list (filter, search, q, limit, after; sortBy, sortOrder, fields and expand as
``shaping.py`` says), get by id or login (expand), create, partial and
full update, delete (a first delete deactivates), and a user's groups."""

from __future__ import annotations

import re
from typing import Any

from ancha.world.tools.okta import errors, lifecycle
from ancha.world.tools.okta.call import Answer, Call
from ancha.world.tools.okta.filters import USER_FILTER, compile_expression, record_getter
from ancha.world.tools.okta.models import PROFILE_FIELDS, User, okta_time
from ancha.world.tools.okta.router import route
from ancha.world.tools.okta.routes import pages, shaping

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
REQUIRED = ("login", "email", "firstName", "lastName")
EXISTS = "An object with this field already exists in the current organization"
MAX_LIMIT = 200
MAX_PROFILE_TEXT = 1024


def _user_json(call: Call, user: User, expand: set[str]) -> dict[str, Any]:
    """A user as Okta answers it, with what ``expand`` asks in ``_embedded``."""
    body = call.replica.user_json(user)
    embedded: dict[str, Any] = {}
    if "blocks" in expand:
        embedded["blocks"] = []  # no device-based access blocks in this replica
    if "classification" in expand:
        embedded["classification"] = {"type": "STANDARD", "lastUpdated": okta_time(user.created)}
    if embedded:
        body["_embedded"] = embedded
    return body


@route("GET", "/api/v1/users")
def list_users(call: Call) -> Answer:
    replica = call.replica
    expression = call.arg("search") or call.arg("filter")
    query = call.arg("q")
    limit = call.integer("limit", 10 if query and not expression else MAX_LIMIT, 1, MAX_LIMIT)
    if call.arg("search"):
        matcher = compile_expression(call.arg("search") or "", None)
    elif call.arg("filter"):
        matcher = compile_expression(call.arg("filter") or "", USER_FILTER)
    else:
        matcher = None
    prefix = (query or "").casefold()

    def keep(user: User) -> bool:
        if matcher is not None:
            return matcher(record_getter(replica.user_json(user)))
        if user.status == "DEPROVISIONED":  # Okta lists deprovisioned users only when asked for
            return False
        if prefix:
            return any(str(user.profile.get(f) or "").casefold().startswith(prefix)
                       for f in ("firstName", "lastName", "email", "login"))
        return True

    descending = shaping.sort_order(call)
    fields = shaping.parse_fields(call.arg("fields") or "") if call.arg("fields") else None
    expand = shaping.expansions(call)
    if descending is not None:
        matching = [u for u in replica.state.users.values() if keep(u)]
        ordered = shaping.sorted_records(matching, replica.user_json, lambda u: u.id, call.arg("sortBy") or "",
                                         descending)
        found, more = shaping.page_after(ordered, lambda u: u.id, call.arg("after"), limit)
    else:
        found, more = pages.page(call, replica.state.user_order.after(call.arg("after")),
                                 replica.state.users.get, keep, limit)
    bodies = [_user_json(call, u, expand) for u in found]
    if fields is not None:
        bodies = [shaping.project(b, fields) for b in bodies]
    return pages.answer(call, bodies, found[-1].id if found else None, more)


@route("GET", "/api/v1/users/{id}")
def get_user(call: Call) -> Answer:
    user = call.replica.user_or_404(call.params["id"])
    return Answer(200, _user_json(call, user, shaping.expansions(call)))


def _text(profile: dict[str, Any], name: str) -> Any:
    value = profile.get(name)
    if value is not None and not isinstance(value, str):
        raise errors.ApiValidation(name, f"{name}: The value must be a string.")
    if isinstance(value, str) and len(value) > MAX_PROFILE_TEXT:
        raise errors.ApiValidation(name, f"{name}: The value is too long.")
    return value


def _profile(call: Call, given: Any, base: dict[str, Any] | None, user: User | None) -> dict[str, Any]:
    """A checked profile: ``given`` over ``base`` (a partial update), or alone (create, replace)."""
    if not isinstance(given, dict):
        raise errors.ApiValidation("profile", "profile: The field cannot be left blank")
    profile: dict[str, Any] = {"firstName": None, "lastName": None, "mobilePhone": None, "secondEmail": None}
    profile.update(base or {})
    for name, value in given.items():
        if name in PROFILE_FIELDS:
            profile[name] = _text(given, name)
        elif isinstance(name, str) and (value is None or isinstance(value, str | int | float | bool)):
            profile[name] = value  # a custom attribute: Okta keeps what its schema allows
        else:
            raise errors.ApiValidation(str(name), f"{name}: Property name is not defined in the user schema")
    for name in REQUIRED:
        if not profile.get(name):
            raise errors.ApiValidation(name, f"{name}: The field cannot be left blank")
    if "@" not in profile["login"]:
        raise errors.ApiValidation("login", "login: Username must be in the form of an email address")
    for name in ("email", "secondEmail"):
        if profile.get(name) and not _EMAIL.match(profile[name]):
            raise errors.ApiValidation(name, f"{name}: Does not match required pattern")
    other = call.replica.state.user(profile["login"])
    if other is not None and other is not user:
        raise errors.ApiValidation("login", f"login: {EXISTS}")
    return profile


def _password(body: dict[str, Any]) -> bool:
    """Whether the body sets a password (``credentials.password.value``), checked."""
    credentials = body.get("credentials")
    if credentials is None:
        return False
    if not isinstance(credentials, dict):
        raise errors.ApiValidation("credentials", "credentials: The value must be an object.")
    password = credentials.get("password")
    if password is None:
        return False
    if not isinstance(password, dict):
        raise errors.ApiValidation("password", "password: The value must be an object.")
    value = password.get("value")
    if value is None:
        return False
    if not isinstance(value, str) or len(value) < 8:
        raise errors.ApiValidation("password", "password: Password requirements were not met. "
                                   "Password requirements: at least 8 characters.")
    return True


@route("POST", "/api/v1/users", partial="provider and type are ignored; no activation email is sent")
def create_user(call: Call) -> Answer:
    replica = call.replica
    body = call.json()
    activate = call.flag("activate", True)
    profile = _profile(call, body.get("profile"), None, None)
    has_password = _password(body)
    groups = body.get("groupIds") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise errors.ApiValidation("groupIds", "groupIds: The value must be a list of group ids.")
    targets = [replica.group_or_404(g) for g in groups]
    if any(group.type != "OKTA_GROUP" for group in targets):
        raise errors.UnsupportedOperation()
    status = "STAGED"
    if activate:
        status = "ACTIVE" if has_password else "PROVISIONED"
        if has_password and call.arg("nextLogin") == "changePassword":
            status = "PASSWORD_EXPIRED"
    user = replica.create_user(profile, status, has_password, call.actor)
    for group in targets:
        replica.add_member(group, user, call.actor)
    return Answer(200, replica.user_json(user))


def _update(call: Call, partial: bool) -> Answer:
    replica = call.replica
    user = replica.user_or_404(call.params["id"])
    body = call.json()
    if user.status == "DEPROVISIONED":
        raise errors.WrongStatus()
    profile = None
    if "profile" in body or not partial:
        profile = _profile(call, body.get("profile"), user.profile if partial else None, user)
    password = _password(body)
    replica.update_user(user, profile, password, call.actor)
    if password and user.status in lifecycle.PASSWORD_COMPLETES:
        replica.set_status(user, "ACTIVE", "set_password", call.actor)
    return Answer(200, replica.user_json(user))


@route("POST", "/api/v1/users/{id}", partial="strict and If-Match are ignored")
def update_user(call: Call) -> Answer:
    return _update(call, partial=True)


@route("PUT", "/api/v1/users/{id}", partial="strict and If-Match are ignored")
def replace_user(call: Call) -> Answer:
    return _update(call, partial=False)


@route("DELETE", "/api/v1/users/{id}", partial="Prefer: respond-async is answered synchronously")
def delete_user(call: Call) -> Answer:
    replica = call.replica
    user = replica.user_or_404(call.params["id"])
    call.flag("sendEmail", False)
    if user.status != "DEPROVISIONED":  # Okta's first delete deactivates; the second deletes
        lifecycle.apply(replica, user, "deactivate", call.actor)
    else:
        replica.delete_user(user, call.actor)
    return Answer(204)


@route("GET", "/api/v1/users/{id}/groups")
def list_user_groups(call: Call) -> Answer:
    replica = call.replica
    user = replica.user_or_404(call.params["id"])
    groups = [replica.group_json(replica.state.groups[g]) for g in sorted(user.groups)
              if g in replica.state.groups]
    return Answer(200, groups)
