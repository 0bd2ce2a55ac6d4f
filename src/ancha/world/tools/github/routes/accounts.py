"""Every account, and the caller's email addresses.

``GET /users`` and ``GET /organizations`` page by ``since`` (an account id), not by
``page``: the ``Link`` header's ``next`` names the last id seen, as GitHub's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from ancha.world.tools.github.call import DEFAULT_PER_PAGE, MAX_PER_PAGE, Call
from ancha.world.tools.github.models import Account, User
from ancha.world.tools.github.router import route


def _since_page(call: Call, path: str, accounts: Sequence[Account]) -> Sequence[Account]:
    since = call.q_int("since", 0, 0)
    per_page = call.q_int("per_page", DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)
    after = sorted((a for a in accounts if a.id > since), key=lambda a: a.id)
    shown = after[:per_page]
    if len(after) > per_page:
        query = urlencode({"per_page": per_page, "since": shown[-1].id})
        call.headers["link"] = f'<{call.base}{path}?{query}>; rel="next"'
    return shown


@route("GET", "/users")
def users_list(call: Call) -> list[dict[str, Any]]:
    accounts: list[Account] = [*call.state.users.values(), *call.state.orgs.values()]
    return [a.simple(call.base) for a in _since_page(call, "/users", accounts)]


@route("GET", "/organizations")
def orgs_list(call: Call) -> list[dict[str, Any]]:
    orgs = list(call.state.orgs.values())
    found = _since_page(call, "/organizations", orgs)
    return [call.state.orgs[a.key].simple_org(call.base) for a in found]


def _emails(user: User) -> list[dict[str, Any]]:
    noreply = f"{user.id}+{user.login}@users.noreply.github.com"
    if not user.email:
        return [{"email": noreply, "primary": True, "verified": True, "visibility": "private"}]
    return [{"email": user.email, "primary": True, "verified": True, "visibility": "public"},
            {"email": noreply, "primary": False, "verified": True, "visibility": None}]


@route("GET", "/user/emails")
def users_list_emails_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return list(call.page(_emails(call.user)))


@route("GET", "/user/public_emails")
def users_list_public_emails_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return list(call.page([e for e in _emails(call.user) if e["visibility"] == "public"]))
