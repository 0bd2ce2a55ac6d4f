"""GitHub's GraphQL API on the real server, through githubkit's ``graphql`` client.

Reads check fields against the seed (``conftest.SEED``); every mutation's effect is
checked through the REST API with PyGithub, since both APIs share one state.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from githubkit import GitHub
from githubkit.exception import GraphQLFailed, RequestFailed

from ancha.world.tools.github.routes import ROUTER

REPO_IDS = """query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) {
  id labels(first: 20) { nodes { id name } } pullRequest(number: 3) { id } } }"""


def graphql(gh: Any, query: str, variables: dict[str, Any] | None = None, token: str | None = None) -> dict[str, Any]:
    kit: GitHub[Any] = gh.kit if token is None else GitHub(token, base_url=gh.url)
    data: dict[str, Any] = kit.graphql(query, variables)
    return data


def failure(gh: Any, query: str, variables: dict[str, Any] | None = None,
            token: str | None = None) -> list[Any]:
    with pytest.raises(GraphQLFailed) as failed:
        graphql(gh, query, variables, token)
    return list(failed.value.response.errors)


def orders(gh: Any) -> dict[str, Any]:
    repo: dict[str, Any] = graphql(gh, REPO_IDS, {"owner": "acme", "name": "orders"})["repository"]
    repo["label_ids"] = {n["name"]: n["id"] for n in repo["labels"]["nodes"]}
    return repo


def issue_id(gh: Any, number: int, repo: str = "acme/orders") -> str:
    return str(gh.client.get_repo(repo).get_issue(number).raw_data["node_id"])


def needs_rest(method: str, path: str) -> None:
    found = ROUTER.match(path, method)
    if found is None or method not in found[0]:
        pytest.skip(f"the REST core does not serve {method} {path} yet")


# --- reads -----------------------------------------------------------------------------------------

def test_repository__fields_owner_and_default_branch(gh):
    data = graphql(gh, """{ viewer { login } repository(owner: "acme", name: "orders") {
        name nameWithOwner description isPrivate url owner { login __typename }
        defaultBranchRef { name target { oid } } viewerPermission } }""")
    assert data["viewer"] == {"login": "ancha-agent"}
    repo = data["repository"]
    assert repo["nameWithOwner"] == "acme/orders" and repo["description"] == "Order service"
    assert repo["isPrivate"] is True and repo["url"] == f"{gh.url}/acme/orders"
    assert repo["owner"] == {"login": "acme", "__typename": "Organization"}
    assert repo["viewerPermission"] == "WRITE"
    branch = gh.client.get_repo("acme/orders").get_branch("main")
    assert repo["defaultBranchRef"] == {"name": "main", "target": {"oid": branch.commit.sha}}


def test_node_ids__match_the_rest_node_ids(gh):
    data = graphql(gh, """{ repository(owner: "acme", name: "orders") { id
        issue(number: 1) { id comments(first: 5) { nodes { id body author { login } } } }
        pullRequest(number: 3) { id } } }""")["repository"]
    rest = gh.client.get_repo("acme/orders")
    assert data["id"] == rest.raw_data["node_id"]
    assert data["issue"]["id"] == rest.get_issue(1).raw_data["node_id"]
    assert data["pullRequest"]["id"] == gh.raw("GET", "/repos/acme/orders/pulls/3").json().get(
        "node_id", data["pullRequest"]["id"])
    comment = rest.get_issue(1).get_comments()[0]
    assert data["issue"]["comments"]["nodes"] == [{"id": comment.raw_data["node_id"], "body": "Looking into it",
                                                    "author": {"login": "ben"}}]
    found = graphql(gh, 'query($id: ID!) { node(id: $id) { __typename ... on Issue { number title } } }',
                    {"id": data["issue"]["id"]})
    assert found["node"] == {"__typename": "Issue", "number": 1, "title": "CSV exports are gone"}


def test_issues__pagination_with_cursors(gh):
    query = """query($after: String) { repository(owner: "acme", name: "many") {
        issues(first: 20, after: $after, states: OPEN) { totalCount
          pageInfo { hasNextPage endCursor } edges { cursor node { number } } } } }"""
    numbers: list[int] = []
    after = None
    pages = 0
    while True:
        issues = graphql(gh, query, {"after": after})["repository"]["issues"]
        assert issues["totalCount"] == 45
        numbers += [edge["node"]["number"] for edge in issues["edges"]]
        pages += 1
        if not issues["pageInfo"]["hasNextPage"]:
            break
        after = issues["pageInfo"]["endCursor"]
        assert after == issues["edges"][-1]["cursor"]
    assert pages == 3 and numbers == list(range(1, 46))
    back = graphql(gh, """query($before: String) { repository(owner: "acme", name: "many") {
        issues(last: 3, before: $before) { nodes { number } pageInfo { hasPreviousPage } } } }""",
                   {"before": after})["repository"]["issues"]
    assert [n["number"] for n in back["nodes"]] == [37, 38, 39] and back["pageInfo"]["hasPreviousPage"]


def test_issues__filters_and_lookups(gh):
    repo = graphql(gh, """{ repository(owner: "acme", name: "orders") {
        open: issues(first: 10, states: OPEN) { nodes { number } }
        bugs: issues(first: 10, labels: ["bug"]) { nodes { number labels(first: 5) { nodes { name } } } }
        ben: issues(first: 10, filterBy: {assignee: "ben"}) { nodes { number milestone { title } } }
        pullRequests(first: 5, states: OPEN) { nodes { number headRefName baseRefName isDraft merged } }
        label(name: "BUG") { name color } } }""")["repository"]
    assert repo["open"]["nodes"] == [{"number": 1}]  # #3 is a pull request, #2 is closed
    assert repo["bugs"]["nodes"] == [{"number": 1, "labels": {"nodes": [{"name": "bug"}]}}]
    assert repo["ben"]["nodes"] == [{"number": 1, "milestone": {"title": "v1.0"}}]
    assert repo["pullRequests"]["nodes"] == [{"number": 3, "headRefName": "fix-exports", "baseRefName": "main",
                                              "isDraft": False, "merged": False}]
    assert repo["label"] == {"name": "bug", "color": "d73a4a"}


def test_object__expression_reads_a_seeded_file_and_tree(gh):
    repo = graphql(gh, """{ repository(owner: "acme", name: "orders") {
        file: object(expression: "main:README.md") { __typename ... on Blob { text byteSize isBinary oid } }
        root: object(expression: "main:") { ... on Tree { entries { name type path } } }
        missing: object(expression: "main:nope.txt") { id }
        head: object(expression: "fix-exports") { ... on Commit { oid message author { name } } } } }""")["repository"]
    assert repo["file"]["__typename"] == "Blob"
    assert repo["file"]["text"] == "# orders\n" and repo["file"]["byteSize"] == 9 and not repo["file"]["isBinary"]
    content = gh.client.get_repo("acme/orders").get_contents("README.md")
    assert repo["file"]["oid"] == content.sha
    assert {"name": "README.md", "type": "blob", "path": "README.md"} in repo["root"]["entries"]
    assert repo["missing"] is None
    assert repo["head"]["oid"] == gh.client.get_repo("acme/orders").get_branch("fix-exports").commit.sha


def test_search__issue_qualifiers(gh):
    data = graphql(gh, """{ search(query: "repo:acme/orders is:issue is:closed", type: ISSUE, first: 5) {
        issueCount nodes { __typename ... on Issue { number } } }
        prs: search(query: "repo:acme/orders is:pr exports", type: ISSUE, first: 5) {
        issueCount nodes { __typename ... on PullRequest { number } } } }""")
    assert data["search"] == {"issueCount": 1, "nodes": [{"__typename": "Issue", "number": 2}]}
    assert data["prs"] == {"issueCount": 1, "nodes": [{"__typename": "PullRequest", "number": 3}]}


def test_search__a_query_past_the_rest_searchs_256_characters_is_refused(gh):
    long = "(" * 5_000
    errors = failure(gh, "query($q: String!) { search(query: $q, type: ISSUE, first: 5) { issueCount } }", {"q": long})
    assert errors[0].message == "The search is longer than 256 characters."
    assert errors[0].type == "INVALID_ARGUMENT" and errors[0].path == ["search"]
    still = graphql(gh, '{ search(query: "repo:acme/orders is:issue is:closed", type: ISSUE, first: 5) { issueCount } }')
    assert still["search"]["issueCount"] == 1


# --- mutations, seen through REST -----------------------------------------------------------------

def test_create_issue__visible_through_rest(gh):
    repo = orders(gh)
    ben = gh.client.get_user("ben").raw_data["node_id"]
    data = graphql(gh, """mutation($input: CreateIssueInput!) { createIssue(input: $input) {
        clientMutationId issue { number title body labels(first: 5) { nodes { name } }
        assignees(first: 5) { nodes { login } } author { login } } } }""",
                   {"input": {"repositoryId": repo["id"], "title": "From GraphQL", "body": "Made by a mutation",
                              "labelIds": [repo["label_ids"]["p1"]], "assigneeIds": [ben],
                              "clientMutationId": "m-1"}})["createIssue"]
    assert data["clientMutationId"] == "m-1"
    created = data["issue"]
    assert created["labels"]["nodes"] == [{"name": "p1"}] and created["assignees"]["nodes"] == [{"login": "ben"}]
    issue = gh.client.get_repo("acme/orders").get_issue(created["number"])
    assert (issue.title, issue.body, issue.user.login) == ("From GraphQL", "Made by a mutation", "ancha-agent")
    assert [label.name for label in issue.labels] == ["p1"] and [a.login for a in issue.assignees] == ["ben"]


def test_mutations__publish_the_same_domain_events_as_rest(gh):
    seen: list[Any] = []
    gh.replica.world.bus.subscribe("*", seen.append)
    repo = orders(gh)
    created = graphql(gh, """mutation($input: CreateIssueInput!) { createIssue(input: $input) { issue { id number } } }""",
                      {"input": {"repositoryId": repo["id"], "title": "Evented", "labelIds": [repo["label_ids"]["bug"]]}})
    issue = created["createIssue"]["issue"]
    graphql(gh, 'mutation($id: ID!) { closeIssue(input: {issueId: $id}) { issue { state } } }', {"id": issue["id"]})
    graphql(gh, 'mutation($id: ID!) { addComment(input: {subjectId: $id, body: "done"}) { clientMutationId } }',
            {"id": issue["id"]})
    seen = [e for e in seen if e.tool == "github" and "number" in e.data]
    events = [(e.type, e.data["number"], e.data["actor"], e.data["user"]) for e in seen]
    number = issue["number"]
    assert events == [("issue_opened", number, "agent", "ancha-agent"), ("issue_labeled", number, "agent", "ancha-agent"),
                      ("issue_closed", number, "agent", "ancha-agent"),
                      ("issue_comment_created", number, "agent", "ancha-agent")]
    assert seen[2].data["state_reason"] == "completed"


def test_update_close_reopen_issue__visible_through_rest(gh):
    target = issue_id(gh, 1)
    graphql(gh, 'mutation($id: ID!) { updateIssue(input: {id: $id, title: "Exports vanished"}) { issue { title } } }',
            {"id": target})
    closed = graphql(gh, """mutation($id: ID!) { closeIssue(input: {issueId: $id, stateReason: NOT_PLANNED}) {
        issue { state stateReason } } }""", {"id": target})["closeIssue"]["issue"]
    assert closed == {"state": "CLOSED", "stateReason": "NOT_PLANNED"}
    issue = gh.client.get_repo("acme/orders").get_issue(1)
    assert (issue.title, issue.state, issue.state_reason) == ("Exports vanished", "closed", "not_planned")
    graphql(gh, 'mutation($id: ID!) { reopenIssue(input: {issueId: $id}) { issue { state } } }', {"id": target})
    assert gh.client.get_repo("acme/orders").get_issue(1).state == "open"


def test_add_comment__visible_through_rest(gh):
    data = graphql(gh, """mutation($id: ID!) { addComment(input: {subjectId: $id, body: "On it"}) {
        commentEdge { node { id body author { login } } } subject { id } } }""", {"id": issue_id(gh, 1)})
    node = data["addComment"]["commentEdge"]["node"]
    comments = list(gh.client.get_repo("acme/orders").get_issue(1).get_comments())
    assert [c.body for c in comments] == ["Looking into it", "On it"]
    assert node == {"id": comments[-1].raw_data["node_id"], "body": "On it", "author": {"login": "ancha-agent"}}


def test_labels__add_and_remove_visible_through_rest(gh):
    repo = orders(gh)
    target = issue_id(gh, 1)
    added = graphql(gh, """mutation($id: ID!, $labels: [ID!]!) { addLabelsToLabelable(input:
        {labelableId: $id, labelIds: $labels}) { labelable { ... on Issue { labels(first: 5) { nodes { name } } } } } }""",
                    {"id": target, "labels": [repo["label_ids"]["p1"], repo["label_ids"]["area/ui"]]})
    assert [n["name"] for n in added["addLabelsToLabelable"]["labelable"]["labels"]["nodes"]] == ["bug", "p1", "area/ui"]
    graphql(gh, """mutation($id: ID!, $labels: [ID!]!) { removeLabelsFromLabelable(input:
        {labelableId: $id, labelIds: $labels}) { clientMutationId } }""",
            {"id": target, "labels": [repo["label_ids"]["bug"], repo["label_ids"]["area/ui"]]})
    assert [label.name for label in gh.client.get_repo("acme/orders").get_issue(1).labels] == ["p1"]


def test_add_pull_request_review__visible_through_rest(gh):
    needs_rest("POST", "/repos/acme/orders/pulls/3/reviews")
    pull = orders(gh)["pullRequest"]["id"]
    review = graphql(gh, """mutation($id: ID!) { addPullRequestReview(input: {pullRequestId: $id, event: APPROVE,
        body: "Looks good"}) { pullRequestReview { state body author { login } } } }""",
                     {"id": pull})["addPullRequestReview"]["pullRequestReview"]
    assert review == {"state": "APPROVED", "body": "Looks good", "author": {"login": "ancha-agent"}}
    reviews = list(gh.client.get_repo("acme/orders").get_pull(3).get_reviews())
    assert [(r.state, r.body, r.user.login) for r in reviews] == [("APPROVED", "Looks good", "ancha-agent")]


def test_request_reviews__visible_through_rest(make_github, github_seed):
    github_seed["users"].append({"login": "dave"})
    github_seed["repos"][0]["permissions"]["dave"] = "write"
    gh = make_github(github_seed)
    needs_rest("POST", "/repos/acme/orders/pulls/3/requested_reviewers")
    pull = orders(gh)["pullRequest"]["id"]
    laura = gh.client.get_user("laura").raw_data["node_id"]
    data = graphql(gh, """mutation($id: ID!, $users: [ID!]) { requestReviews(input: {pullRequestId: $id,
        userIds: $users}) { pullRequest { reviewRequests(first: 5) { nodes { requestedReviewer {
        ... on User { login } } } } } } }""", {"id": pull, "users": [laura]})
    nodes = data["requestReviews"]["pullRequest"]["reviewRequests"]["nodes"]
    assert nodes == [{"requestedReviewer": {"login": "laura"}}]
    users, _teams = gh.client.get_repo("acme/orders").get_pull(3).get_review_requests()
    assert [u.login for u in users] == ["laura"]
    dave = gh.client.get_user("dave").raw_data["node_id"]
    request = """mutation($id: ID!, $users: [ID!], $union: Boolean) { requestReviews(input: {pullRequestId: $id,
        userIds: $users, union: $union}) { clientMutationId } }"""
    graphql(gh, request, {"id": pull, "users": [dave], "union": True})
    users, _teams = gh.client.get_repo("acme/orders").get_pull(3).get_review_requests()
    assert sorted(u.login for u in users) == ["dave", "laura"]
    graphql(gh, request, {"id": pull, "users": [dave]})  # without union the set is replaced
    users, _teams = gh.client.get_repo("acme/orders").get_pull(3).get_review_requests()
    assert [u.login for u in users] == ["dave"]
    ben = gh.client.get_user("ben").raw_data["node_id"]
    errors = failure(gh, request, {"id": pull, "users": [ben]})
    assert errors[0].type == "UNPROCESSABLE"
    assert errors[0].message == "Review cannot be requested from pull request author."
    users, _teams = gh.client.get_repo("acme/orders").get_pull(3).get_review_requests()
    assert [u.login for u in users] == ["dave"]  # a refused request changes nothing


def test_merge_pull_request__visible_through_rest(gh):
    needs_rest("PUT", "/repos/acme/orders/pulls/3/merge")
    pull = orders(gh)["pullRequest"]["id"]
    merged = graphql(gh, """mutation($id: ID!) { mergePullRequest(input: {pullRequestId: $id, mergeMethod: SQUASH}) {
        pullRequest { state merged } } }""", {"id": pull})["mergePullRequest"]["pullRequest"]
    assert merged == {"state": "MERGED", "merged": True}
    assert gh.client.get_repo("acme/orders").get_pull(3).merged


def test_merge_pull_request__stale_head_is_refused_and_nothing_merges(gh):
    needs_rest("PUT", "/repos/acme/orders/pulls/3/merge")
    pull = orders(gh)["pullRequest"]["id"]
    errors = failure(gh, """mutation($id: ID!) { mergePullRequest(input: {pullRequestId: $id,
        expectedHeadOid: "0000000000000000000000000000000000000000"}) { pullRequest { merged } } }""", {"id": pull})
    assert errors[0].type == "UNPROCESSABLE" and errors[0].path == ["mergePullRequest"]
    assert not gh.client.get_repo("acme/orders").get_pull(3).merged


def test_mutation__without_permission_is_forbidden_and_changes_nothing(gh):
    carol = gh.token_for("carol")
    target = issue_id(gh, 1, "laura/notes")
    errors = failure(gh, 'mutation($id: ID!) { updateIssue(input: {id: $id, title: "mine now"}) { issue { title } } }',
                     {"id": target}, token=carol)
    assert errors[0].type == "FORBIDDEN"
    assert errors[0].message == "carol does not have the correct permissions to execute `UpdateIssue`"
    assert gh.client.get_repo("laura/notes").get_issue(1).title == "Read me"


# --- errors ---------------------------------------------------------------------------------------

def test_invalid_query__githubs_validation_error(gh):
    errors = failure(gh, '{ repository(owner: "acme", name: "orders") { forkCountx } }')
    assert errors[0].message == "Field 'forkCountx' doesn't exist on type 'Repository'"
    assert errors[0].extensions == {"code": "undefinedField", "typeName": "Repository", "fieldName": "forkCountx"}
    assert errors[0].path == ["query", "repository", "forkCountx"]


def test_unimplemented_field__not_implemented_and_a_coverage_gap(gh):
    errors = failure(gh, '{ repository(owner: "acme", name: "orders") { name forkCount } }')
    assert errors[0].message == "Field 'Repository.forkCount' is not implemented by this replica"
    assert errors[0].extensions == {"code": "NOT_IMPLEMENTED"}
    entry = [e for e in gh.trace() if e["path"] == "/graphql"][-1]
    assert entry["coverage_gap"] is True and entry["worked"] is False and entry["status"] == 200


def test_private_repository__not_found_for_an_outsider(gh):
    errors = failure(gh, '{ repository(owner: "acme", name: "orders") { name } }', token=gh.token_for("carol"))
    assert errors[0].type == "NOT_FOUND"
    assert errors[0].message == "Could not resolve to a Repository with the name 'acme/orders'."


def test_bad_token__401_bad_credentials(gh):
    with pytest.raises(RequestFailed) as failed:
        graphql(gh, "{ viewer { login } }", token="ghp_" + "x" * 36)
    assert failed.value.response.status_code == 401
    answer = httpx.post(f"{gh.url}/graphql", json={"query": "{ viewer { login } }"},
                        headers={"Authorization": "bearer nope"}, timeout=10)
    assert answer.status_code == 401 and answer.json()["message"] == "Bad credentials"
    anonymous = httpx.post(f"{gh.url}/graphql", json={"query": "{ viewer { login } }"}, timeout=10)
    assert anonymous.status_code == 401
    assert anonymous.json()["message"] == "This endpoint requires you to be authenticated."
