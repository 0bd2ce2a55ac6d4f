"""Groups: list (q, filter, search, limit, after; sortBy, sortOrder and expand as
``shaping.py`` says), get, create, replace, delete; members:
list, add, remove. Okta's built-in ``Everyone`` can be read but not changed."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.okta import errors
from ancha.world.tools.okta.call import Answer, Call
from ancha.world.tools.okta.filters import GROUP_FILTER, compile_expression, record_getter
from ancha.world.tools.okta.models import Group, User
from ancha.world.tools.okta.router import route
from ancha.world.tools.okta.routes import pages, shaping
from ancha.world.tools.okta.routes.users import EXISTS

MAX_NAME = 255


def _group_json(call: Call, group: Group, expand: set[str]) -> dict[str, Any]:
    """A group as Okta answers it, with ``_embedded.stats`` when ``expand`` asks (``app`` is
    only there for a group an app imports, which this replica has none of)."""
    body = call.replica.group_json(group)
    if "stats" in expand or "app" in expand:
        embedded: dict[str, Any] = {}
        if "stats" in expand:
            members = sum(1 for m in group.members if m in call.replica.state.users)
            embedded["stats"] = {"usersCount": members, "appsCount": 0, "groupPushMappingsCount": 0,
                                 "hasAdminPrivlege": False}
        body["_embedded"] = embedded
    return body


@route("GET", "/api/v1/groups")
def list_groups(call: Call) -> Answer:
    replica = call.replica
    limit = call.integer("limit", 10000, 1, 10000)
    if call.arg("search"):
        matcher = compile_expression(call.arg("search") or "", None)
    elif call.arg("filter"):
        matcher = compile_expression(call.arg("filter") or "", GROUP_FILTER)
    else:
        matcher = None
    prefix = (call.arg("q") or "").casefold()

    def keep(group: Group) -> bool:
        if matcher is not None and not matcher(record_getter(replica.group_json(group))):
            return False
        return group.name.casefold().startswith(prefix)

    descending = shaping.sort_order(call)
    if descending is not None:
        matching = [g for g in replica.state.groups.values() if keep(g)]
        ordered = shaping.sorted_records(matching, replica.group_json, lambda g: g.id, call.arg("sortBy") or "",
                                         descending)
        found, more = shaping.page_after(ordered, lambda g: g.id, call.arg("after"), limit)
    else:
        found, more = pages.page(call, replica.state.group_order.after(call.arg("after")),
                                 replica.state.groups.get, keep, limit)
    expand = shaping.expansions(call)
    return pages.answer(call, [_group_json(call, g, expand) for g in found], found[-1].id if found else None, more)


def _profile(call: Call, group: Group | None) -> tuple[str, str | None]:
    body = call.json()
    profile = body.get("profile")
    if not isinstance(profile, dict):
        raise errors.ApiValidation("profile", "profile: The field cannot be left blank")
    name, description = profile.get("name"), profile.get("description")
    if not isinstance(name, str) or not name.strip():
        raise errors.ApiValidation("name", "name: The field cannot be left blank")
    if len(name) > MAX_NAME:
        raise errors.ApiValidation("name", f"name: The value must be at most {MAX_NAME} characters.")
    if description is not None and not isinstance(description, str):
        raise errors.ApiValidation("description", "description: The value must be a string.")
    other = call.replica.state.by_group_name.get(name.casefold())
    if other is not None and (group is None or other != group.id):
        raise errors.ApiValidation("name", f"name: {EXISTS}")
    return name, description


@route("POST", "/api/v1/groups")
def add_group(call: Call) -> Answer:
    name, description = _profile(call, None)
    return Answer(200, call.replica.group_json(call.replica.create_group(name, description, call.actor)))


@route("GET", "/api/v1/groups/{groupId}")
def get_group(call: Call) -> Answer:
    return Answer(200, call.replica.group_json(call.replica.group_or_404(call.params["groupId"])))


def _okta_group(call: Call) -> Group:
    group = call.replica.group_or_404(call.params["groupId"])
    if group.type != "OKTA_GROUP":
        raise errors.AccessDenied()
    return group


@route("PUT", "/api/v1/groups/{groupId}")
def replace_group(call: Call) -> Answer:
    group = _okta_group(call)
    name, description = _profile(call, group)
    call.replica.update_group(group, name, description, call.actor)
    return Answer(200, call.replica.group_json(group))


@route("DELETE", "/api/v1/groups/{groupId}")
def delete_group(call: Call) -> Answer:
    call.replica.delete_group(_okta_group(call), call.actor)
    return Answer(204)


@route("GET", "/api/v1/groups/{groupId}/users")
def list_group_users(call: Call) -> Answer:
    replica = call.replica
    group = replica.group_or_404(call.params["groupId"])
    limit = call.integer("limit", 1000, 1, 10000)

    def keep(user: User) -> bool:
        return user.id in group.members

    ids: Any = iter(sorted(m for m in group.members if m > (call.arg("after") or "")))
    found, more = pages.page(call, ids, replica.state.users.get, keep, limit)
    return pages.answer(call, [replica.user_json(u) for u in found], found[-1].id if found else None, more)


def _member(call: Call) -> tuple[Group, User]:
    group = call.replica.group_or_404(call.params["groupId"])
    user = call.replica.state.users.get(call.params["userId"])
    if user is None:
        raise errors.ResourceNotFound(call.params["userId"], "User")
    return group, user


@route("PUT", "/api/v1/groups/{groupId}/users/{userId}")
def assign_user_to_group(call: Call) -> Answer:
    group, user = _member(call)
    if group.type != "OKTA_GROUP":
        raise errors.UnsupportedOperation()
    call.replica.add_member(group, user, call.actor)
    return Answer(204)


@route("DELETE", "/api/v1/groups/{groupId}/users/{userId}")
def unassign_user_from_group(call: Call) -> Answer:
    group, user = _member(call)
    if group.type != "OKTA_GROUP":
        raise errors.AccessDenied()
    call.replica.remove_member(group, user, call.actor)
    return Answer(204)


@route("GET", "/api/v1/groups/{groupId}/apps", partial="the replica has no applications: the list is empty")
def list_assigned_applications_for_group(call: Call) -> Answer:
    call.replica.group_or_404(call.params["groupId"])
    call.integer("limit", 20, 1, 200)
    return pages.answer(call, [], None, False)
