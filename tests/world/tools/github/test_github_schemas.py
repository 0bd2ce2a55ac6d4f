"""Every served read of the issue, repo and user families fits the vendor's OpenAPI schema."""

from __future__ import annotations

import pytest

READS = [
    ("/user", "/user"),
    ("/users/{username}", "/users/ben"),
    ("/users/{username}/repos", "/users/laura/repos"),
    ("/user/repos", "/user/repos"),
    ("/user/orgs", "/user/orgs"),
    ("/user/teams", "/user/teams"),
    ("/orgs/{org}", "/orgs/acme"),
    ("/orgs/{org}/repos", "/orgs/acme/repos"),
    ("/orgs/{org}/members", "/orgs/acme/members"),
    ("/orgs/{org}/teams", "/orgs/acme/teams"),
    ("/orgs/{org}/teams/{team_slug}", "/orgs/acme/teams/backend"),
    ("/orgs/{org}/teams/{team_slug}/members", "/orgs/acme/teams/backend/members"),
    ("/orgs/{org}/teams/{team_slug}/repos", "/orgs/acme/teams/backend/repos"),
    ("/orgs/{org}/memberships/{username}", "/orgs/acme/memberships/ben"),
    ("/repos/{owner}/{repo}", "/repos/acme/orders"),
    ("/repos/{owner}/{repo}/topics", "/repos/acme/orders/topics"),
    ("/repos/{owner}/{repo}/collaborators", "/repos/acme/orders/collaborators"),
    ("/repos/{owner}/{repo}/collaborators/{username}/permission", "/repos/acme/orders/collaborators/ben/permission"),
    ("/repos/{owner}/{repo}/issues", "/repos/acme/orders/issues?state=all"),
    ("/repos/{owner}/{repo}/issues/{issue_number}", "/repos/acme/orders/issues/3"),
    ("/repos/{owner}/{repo}/issues/comments", "/repos/acme/orders/issues/comments"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "/repos/acme/orders/issues/1/comments"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/labels", "/repos/acme/orders/issues/1/labels"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/events", "/repos/acme/orders/issues/1/events"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/timeline", "/repos/acme/orders/issues/1/timeline"),
    ("/repos/{owner}/{repo}/issues/events", "/repos/acme/orders/issues/events"),
    ("/repos/{owner}/{repo}/labels", "/repos/acme/orders/labels"),
    ("/repos/{owner}/{repo}/labels/{name}", "/repos/acme/orders/labels/bug"),
    ("/repos/{owner}/{repo}/milestones", "/repos/acme/orders/milestones"),
    ("/repos/{owner}/{repo}/milestones/{milestone_number}/labels", "/repos/acme/orders/milestones/1/labels"),
    ("/repos/{owner}/{repo}/assignees", "/repos/acme/orders/assignees"),
    ("/issues", "/issues?filter=all&state=all"),
    ("/user/issues", "/user/issues?filter=all&state=all"),
    ("/orgs/{org}/issues", "/orgs/acme/issues?filter=all&state=all"),
    ("/search/issues", "/search/issues?q=repo:acme/orders"),
    ("/rate_limit", "/rate_limit"),
    ("/", "/"),
]


@pytest.mark.parametrize(("template", "path"), READS, ids=[t for t, _ in READS])
def test_read__fits_the_vendor_schema(gh, matches_spec, template, path):
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    issue.add_to_labels("p1")
    issue.edit(state="closed")
    issue.edit(state="open")
    issue.lock("resolved")
    issue.unlock()
    answer = gh.raw("GET", path)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body not in ([], {}), "an empty answer proves nothing"
    matches_spec("GET", template, body)


def test_errors__fit_the_vendor_schema(gh, matches_spec):
    matches_spec("GET", "/repos/{owner}/{repo}", gh.raw("GET", "/repos/laura/vault").json(), 404)
    matches_spec("POST", "/repos/{owner}/{repo}/issues", gh.raw("POST", "/repos/acme/orders/issues",
                                                                json={"title": ""}).json(), 422)
    matches_spec("POST", "/repos/{owner}/{repo}/issues", gh.raw("POST", "/repos/laura/notes/issues",
                                                                json={"title": "x"}, token=None).json(), 404)
