"""The API root and rate limits."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github.call import Call
from ancha.world.tools.github.models.wire import web_url
from ancha.world.tools.github.router import route


@route("GET", "/")
def meta_root(call: Call) -> dict[str, Any]:
    b = call.base
    return {
        "current_user_url": f"{b}/user",
        "current_user_authorizations_html_url": f"{web_url(b)}/settings/connections/applications{{/client_id}}",
        "authorizations_url": f"{b}/authorizations",
        "code_search_url": f"{b}/search/code?q={{query}}{{&page,per_page,sort,order}}",
        "commit_search_url": f"{b}/search/commits?q={{query}}{{&page,per_page,sort,order}}",
        "emails_url": f"{b}/user/emails", "emojis_url": f"{b}/emojis", "events_url": f"{b}/events",
        "feeds_url": f"{b}/feeds", "followers_url": f"{b}/user/followers",
        "following_url": f"{b}/user/following{{/target}}", "gists_url": f"{b}/gists{{/gist_id}}",
        "hub_url": f"{b}/hub",
        "issue_search_url": f"{b}/search/issues?q={{query}}{{&page,per_page,sort,order}}",
        "issues_url": f"{b}/issues", "keys_url": f"{b}/user/keys",
        "label_search_url": f"{b}/search/labels?q={{query}}&repository_id={{repository_id}}{{&page,per_page}}",
        "notifications_url": f"{b}/notifications", "organization_url": f"{b}/orgs/{{org}}",
        "organization_repositories_url": f"{b}/orgs/{{org}}/repos{{?type,page,per_page,sort}}",
        "organization_teams_url": f"{b}/orgs/{{org}}/teams", "public_gists_url": f"{b}/gists/public",
        "rate_limit_url": f"{b}/rate_limit", "repository_url": f"{b}/repos/{{owner}}/{{repo}}",
        "repository_search_url": f"{b}/search/repositories?q={{query}}{{&page,per_page,sort,order}}",
        "current_user_repositories_url": f"{b}/user/repos{{?type,page,per_page,sort}}",
        "starred_url": f"{b}/user/starred{{/owner}}{{/repo}}", "starred_gists_url": f"{b}/gists/starred",
        "topic_search_url": f"{b}/search/topics?q={{query}}{{&page,per_page}}",
        "user_url": f"{b}/users/{{user}}", "user_organizations_url": f"{b}/user/orgs",
        "user_repositories_url": f"{b}/users/{{user}}/repos{{?type,page,per_page,sort}}",
        "user_search_url": f"{b}/search/users?q={{query}}{{&page,per_page,sort,order}}",
    }


@route("GET", "/rate_limit")
def rate_limit_get(call: Call) -> dict[str, Any]:
    key = call.caller.user.login if call.caller is not None else "anonymous"
    resources = call.replica.rates.overview(key, call.caller is not None, call.replica.world.clock.peek())
    return {"resources": resources, "rate": resources["core"]}
