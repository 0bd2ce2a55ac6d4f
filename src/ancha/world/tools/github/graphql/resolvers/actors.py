"""Accounts: ``User``, ``Bot``, ``Organization``; ``Query.viewer``/``user``/``organization``."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLResolveInfo

from ancha.world.tools.github.graphql.connections import paginate, pagination_args
from ancha.world.tools.github.graphql.context import ctx
from ancha.world.tools.github.graphql.errors import NotFound
from ancha.world.tools.github.graphql.registry import plain, resolver
from ancha.world.tools.github.models import Account, Org, iso, wire
from ancha.world.tools.github.models.wire import query_base, web_base

PAGE = ("first", "after", "last", "before")


def _avatar(account: Account) -> str:
    return wire.avatar_url(query_base(), account.id)


plain("User Bot Organization",
      id="node_id", databaseId="id", login="login", url=lambda a: f"{web_base()}/{a.login}",
      resourcePath=lambda a: f"/{a.login}", createdAt=lambda a: iso(a.created_at),
      updatedAt=lambda a: iso(a.updated_at))
plain("User Organization", name="name")
plain("User", email=lambda a: a.email or "", isSiteAdmin=lambda a: False,
      company=lambda a: None, location=lambda a: None, bio=lambda a: None)
plain("Organization", description="description", email=lambda a: None)


@resolver("User.avatarUrl Bot.avatarUrl Organization.avatarUrl", args=("size",))
def avatar_url(account: Account, info: GraphQLResolveInfo, size: int | None = None) -> str:
    return _avatar(account) + (f"&s={size}" if size else "")


@resolver("User.isViewer")
def is_viewer(account: Account, info: GraphQLResolveInfo) -> bool:
    return account.key == ctx(info).viewer.key


@resolver("Query.viewer")
def viewer(_: Any, info: GraphQLResolveInfo) -> Account:
    return ctx(info).viewer


@resolver("Query.user", args=("login",))
def user(_: Any, info: GraphQLResolveInfo, login: str) -> Account:
    found = ctx(info).state.user(login)
    if found is None:
        raise NotFound(f"Could not resolve to a User with the login of '{login}'.")
    return found


@resolver("Query.organization", args=("login",))
def organization(_: Any, info: GraphQLResolveInfo, login: str) -> Org:
    found = ctx(info).state.orgs.get(login.lower())
    if found is None:
        raise NotFound(f"Could not resolve to an Organization with the login of '{login}'.")
    return found


@resolver("Query.repositoryOwner", args=("login",))
def repository_owner(_: Any, info: GraphQLResolveInfo, login: str) -> Account | None:
    return ctx(info).state.account(login)


@resolver("User.repositories Organization.repositories", args=PAGE)
def repositories(account: Account, info: GraphQLResolveInfo, **args: Any) -> Any:
    context = ctx(info)
    repos = [r for r in context.state.repos_of(account) if context.can_see(r)]
    return paginate(repos, "repositories", **pagination_args(args))


@resolver("User.repository Organization.repository", args=("name",))
def owned_repository(account: Account, info: GraphQLResolveInfo, name: str) -> Any:
    context = ctx(info)
    found = context.state.repo(account.login, name)
    return found if found is not None and context.can_see(found) else None
