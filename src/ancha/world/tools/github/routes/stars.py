"""Stars and watching: starring repositories, stargazers, subscriptions.

State is ``models.social``: ``Repo.extra`` keeps who starred (and when) and who set a
subscription, so ``stargazers_count``/``watchers_count``/``subscribers_count`` follow.
``Accept: application/vnd.github.star+json`` adds ``starred_at``, as on GitHub.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.models import Repo, User, iso
from ancha.world.tools.github.models.social import Star, Subscription, stargazers, subscribers, watching
from ancha.world.tools.github.router import route


def _with_dates(call: Call) -> bool:
    """``application/vnd.github.star+json`` (PyGithub sends the older ``vnd.github.v3.star+json``)."""
    accept = call.request_headers.get("accept", "").lower()
    return "application/vnd.github.star+json" in accept or "application/vnd.github.v3.star+json" in accept


def _target(call: Call) -> Repo:
    """The repository ``/user/starred/{owner}/{repo}`` names, if the caller may see it."""
    call.user  # noqa: B018 - anonymous callers get 401 first, as on GitHub
    return call.repo()


def _starred_by(call: Call, user: User) -> list[tuple[Repo, Star]]:
    found = [(repo, stars[user.key]) for repo in call.state.repos.values()
             if user.key in (stars := stargazers(repo)) and call.role(repo) is not None]
    sort = call.q_enum("sort", ("created", "updated"), "created")
    direction = call.q_enum("direction", ("asc", "desc"), "desc")

    def key(item: tuple[Repo, Star]) -> float:
        return item[1].starred_at if sort == "created" else item[0].updated_at

    return sorted(found, key=key, reverse=direction == "desc")


def _starred_list(call: Call, user: User) -> list[dict[str, Any]]:
    items = call.page(_starred_by(call, user))
    if _with_dates(call):
        return [{"starred_at": iso(star.starred_at), "repo": repo.to_dict(call.base, role=call.role(repo))}
                for repo, star in items]
    return [repo.to_dict(call.base, role=call.role(repo)) for repo, _ in items]


@route("GET", "/user/starred")
def activity_list_repos_starred_by_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return _starred_list(call, call.user)


@route("GET", "/users/{username}/starred")
def activity_list_repos_starred_by_user(call: Call) -> list[dict[str, Any]]:
    user = call.state.user(call.params["username"])
    if user is None:
        if call.state.account(call.params["username"]) is not None:
            return []  # an organization stars and watches nothing
        raise errors.NotFound()
    return _starred_list(call, user)


@route("GET", "/user/starred/{owner}/{repo}")
def activity_check_repo_is_starred_by_authenticated_user(call: Call) -> Reply:
    repo = _target(call)
    if call.user.key not in stargazers(repo):
        raise errors.NotFound()
    return no_content()


@route("PUT", "/user/starred/{owner}/{repo}")
def activity_star_repo_for_authenticated_user(call: Call) -> Reply:
    repo = _target(call)
    stars = stargazers(repo)
    if call.user.key not in stars:
        stars[call.user.key] = Star(call.user, call.now())
    return no_content()


@route("DELETE", "/user/starred/{owner}/{repo}")
def activity_unstar_repo_for_authenticated_user(call: Call) -> Reply:
    repo = _target(call)
    stargazers(repo).pop(call.user.key, None)
    return no_content()


@route("GET", "/repos/{owner}/{repo}/stargazers")
def activity_list_stargazers_for_repo(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    stars = call.page(sorted(stargazers(repo).values(), key=lambda s: s.starred_at))
    if _with_dates(call):
        return [{"starred_at": iso(s.starred_at), "user": s.user.simple(call.base)} for s in stars]
    return [s.user.simple(call.base) for s in stars]


# --- watching ------------------------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/subscribers")
def activity_list_watchers_for_repo(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    return [s.user.simple(call.base) for s in call.page(sorted(watching(repo), key=lambda s: s.created_at))]


def _subscription(call: Call, repo: Repo, sub: Subscription) -> dict[str, Any]:
    url = f"{call.base}/repos/{repo.full_name}"
    return {"subscribed": sub.subscribed, "ignored": sub.ignored, "reason": None,
            "created_at": iso(sub.created_at), "url": f"{url}/subscription", "repository_url": url}


@route("GET", "/repos/{owner}/{repo}/subscription")
def activity_get_repo_subscription(call: Call) -> dict[str, Any]:
    user = call.user
    repo = call.repo()
    sub = subscribers(repo).get(user.key)
    if sub is None:
        raise errors.NotFound()
    return _subscription(call, repo, sub)


@route("PUT", "/repos/{owner}/{repo}/subscription")
def activity_set_repo_subscription(call: Call) -> dict[str, Any]:
    user = call.user
    repo = call.repo()
    subscribed = call.field_bool("subscribed")
    ignored = call.field_bool("ignored")
    subs = subscribers(repo)
    sub = subs.get(user.key)
    if sub is None:
        sub = subs[user.key] = Subscription(user, call.now(), subscribed=False)
    # GitHub: ignoring wins; a body with neither field subscribes.
    sub.ignored = bool(ignored)
    sub.subscribed = bool(subscribed) if subscribed is not None else not sub.ignored
    return _subscription(call, repo, sub)


@route("DELETE", "/repos/{owner}/{repo}/subscription")
def activity_delete_repo_subscription(call: Call) -> Reply:
    user = call.user
    subscribers(call.repo()).pop(user.key, None)
    return no_content()


def _watched_by(call: Call, user: User) -> list[dict[str, Any]]:
    repos = [r for r in call.state.repos.values()
             if call.role(r) is not None and (sub := subscribers(r).get(user.key)) is not None
             and sub.subscribed and not sub.ignored]
    repos.sort(key=lambda r: subscribers(r)[user.key].created_at)
    return [r.to_dict(call.base, role=call.role(r)) for r in call.page(repos)]


@route("GET", "/user/subscriptions")
def activity_list_watched_repos_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return _watched_by(call, call.user)


@route("GET", "/users/{username}/subscriptions")
def activity_list_repos_watched_by_user(call: Call) -> list[dict[str, Any]]:
    user = call.state.user(call.params["username"])
    if user is None:
        if call.state.account(call.params["username"]) is not None:
            return []  # an organization stars and watches nothing
        raise errors.NotFound()
    return _watched_by(call, user)
