"""Lists the world never fills, answered as GitHub answers them when they are empty.

A scene has no gists, forks, deploy keys, repository or organization hooks, commit
comments, follows or publicized memberships, and the replica keeps no public event
timeline: these lists are ``[]`` (after the same access rules as GitHub's), rather than
a 501, so an agent that follows a ``*_url`` of a user or a repository gets an answer.
``GET /repos/{o}/{r}/teams`` is real: the org's teams with access to the repository.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call
from ancha.world.tools.github.models import Org
from ancha.world.tools.github.router import route

_NO_TIMELINE = "the replica keeps no public event timeline: always empty"


def _account(call: Call) -> None:
    if call.state.account(call.params["username"]) is None:
        raise errors.NotFound()


@route("GET", "/users/{username}/followers", partial="no follows in a scene: always empty")
def users_list_followers_for_user(call: Call) -> list[Any]:
    _account(call)
    return []


@route("GET", "/users/{username}/following", partial="no follows in a scene: always empty")
def users_list_following_for_user(call: Call) -> list[Any]:
    _account(call)
    return []


@route("GET", "/user/followers", partial="no follows in a scene: always empty")
def users_list_followers_for_authenticated_user(call: Call) -> list[Any]:
    call.user  # noqa: B018 - 401 when anonymous
    return []


@route("GET", "/user/following", partial="no follows in a scene: always empty")
def users_list_followed_by_authenticated_user(call: Call) -> list[Any]:
    call.user  # noqa: B018
    return []


@route("GET", "/user/keys", partial="no SSH keys in a scene: always empty")
def users_list_public_ssh_keys_for_authenticated_user(call: Call) -> list[Any]:
    call.user  # noqa: B018
    return []


@route("GET", "/users/{username}/gists", partial="no gists in a scene: always empty")
def gists_list_for_user(call: Call) -> list[Any]:
    _account(call)
    return []


@route("GET", "/gists", partial="no gists in a scene: always empty")
def gists_list(call: Call) -> list[Any]:
    return []


@route("GET", "/gists/public", partial="no gists in a scene: always empty")
def gists_list_public(call: Call) -> list[Any]:
    return []


@route("GET", "/gists/starred", partial="no gists in a scene: always empty")
def gists_list_starred(call: Call) -> list[Any]:
    call.user  # noqa: B018
    return []


@route("GET", "/events", partial=_NO_TIMELINE)
def activity_list_public_events(call: Call) -> list[Any]:
    return []


@route("GET", "/users/{username}/events", partial=_NO_TIMELINE)
def activity_list_events_for_authenticated_user(call: Call) -> list[Any]:
    _account(call)
    return []


@route("GET", "/users/{username}/received_events", partial=_NO_TIMELINE)
def activity_list_received_events_for_user(call: Call) -> list[Any]:
    _account(call)
    return []


@route("GET", "/orgs/{org}/events", partial=_NO_TIMELINE)
def activity_list_public_org_events(call: Call) -> list[Any]:
    if call.params["org"].lower() not in call.state.orgs:
        raise errors.NotFound()
    return []


@route("GET", "/repos/{owner}/{repo}/events", partial=_NO_TIMELINE)
def activity_list_repo_events(call: Call) -> list[Any]:
    call.repo()
    return []


@route("GET", "/repos/{owner}/{repo}/forks", partial="no forks in a scene: always empty")
def repos_list_forks(call: Call) -> list[Any]:
    call.repo()
    return []


@route("GET", "/repos/{owner}/{repo}/comments", partial="no commit comments in a scene: always empty")
def repos_list_commit_comments_for_repo(call: Call) -> list[Any]:
    call.repo()
    return []


@route("GET", "/repos/{owner}/{repo}/hooks", partial="no repository hooks in a scene: always empty")
def repos_list_webhooks(call: Call) -> list[Any]:
    call.repo(need="admin")
    return []


@route("GET", "/repos/{owner}/{repo}/keys", partial="no deploy keys in a scene: always empty")
def repos_list_deploy_keys(call: Call) -> list[Any]:
    call.repo(need="admin")
    return []


@route("GET", "/orgs/{org}/hooks", partial="no organization hooks in a scene: always empty")
def orgs_list_webhooks(call: Call) -> list[Any]:
    org = call.state.orgs.get(call.params["org"].lower())
    if org is None or call.user.key not in org.members:
        raise errors.NotFound()
    if org.members[call.user.key] != "admin":
        raise errors.Forbidden("You must be an admin of the organization to perform this action.")
    return []


@route("GET", "/orgs/{org}/public_members", partial="no membership is publicized in a scene: always empty")
def orgs_list_public_members(call: Call) -> list[Any]:
    if call.params["org"].lower() not in call.state.orgs:
        raise errors.NotFound()
    return []


@route("GET", "/repos/{owner}/{repo}/teams")
def repos_list_teams(call: Call) -> list[Any]:
    repo = call.repo()
    owner = repo.owner
    if not isinstance(owner, Org):
        return []
    teams = [team for team in owner.teams.values() if repo.key in team.repos]
    return [
        {
            **team.to_dict(call.base),
            "permission": {"read": "pull", "write": "push"}.get(team.repos[repo.key], team.repos[repo.key]),
        }
        for team in call.page(sorted(teams, key=lambda t: t.id))
    ]
