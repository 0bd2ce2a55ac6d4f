"""The GraphQL executor over small hand-built state: validation shapes, coverage, paging.

These run without a server (the replica's state is plain model objects); the end-to-end
tests over HTTP with githubkit are in test_graphql_api.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.github.graphql import execute
from ancha.world.tools.github.graphql.registry import FIELDS
from ancha.world.tools.github.graphql.schema import schema
from ancha.world.tools.github.models import GitHubState, Ids, Issue, Label, Repo, User


@dataclass
class Caller:
    user: User
    actor: str = "agent"


class FakeReplica:
    def __init__(self) -> None:
        self.base_url = "http://127.0.0.1/envs/e1/github"
        self.state = GitHubState(Ids("abcdef"))
        self.agent = self.state.add_user(User("ancha-agent", 1001, name="Agent"))
        owner = self.state.add_user(User("acme", 1002))
        self.repo = self.state.add_repo(Repo(owner, "orders", 5001, description="Orders service"))
        self.repo.collaborators[self.agent.key] = "write"
        bug = Label(self.repo, 7001, "bug", "d73a4a")
        self.repo.labels["bug"] = bug
        for n in range(1, 6):
            issue = Issue(self.repo, 9000 + n, n, f"Issue {n}", owner, 1_700_000_000.0 + n, body=f"body {n}")
            if n % 2 == 0:
                issue.labels.append(bug)
            if n == 5:
                issue.state = "closed"
            self.repo.issues[n] = issue
        self.repo.next_number = 6
        secret_owner = self.state.add_user(User("someone", 1003))
        self.state.add_repo(Repo(secret_owner, "secret", 5002, private=True))


def run(query: str, variables: dict[str, Any] | None = None, *, replica: FakeReplica | None = None,
        caller: Any = ..., body: bytes | None = None) -> tuple[ToolResponse, dict[str, Any]]:
    replica = replica or FakeReplica()
    who = Caller(replica.agent) if caller is ... else caller
    raw = body if body is not None else json.dumps({"query": query, "variables": variables}).encode()
    response = execute(replica, ToolRequest("POST", "/graphql", body=raw), who)
    return response, json.loads(response.body)


def test_schema__every_registered_field_and_argument_exists_in_githubs_schema() -> None:
    built = schema()
    for key, spec in FIELDS.items():
        type_name, field_name = key.split(".")
        owner = built.get_type(type_name)
        assert owner is not None and field_name in owner.fields, key  # type: ignore[union-attr]
        assert spec.args <= set(owner.fields[field_name].args), key  # type: ignore[union-attr]


def test_schema__every_served_field_returns_a_served_type() -> None:
    from graphql import get_named_type, is_abstract_type, is_object_type

    from ancha.world.tools.github.graphql.registry import served_types

    built, served = schema(), served_types()
    for key in FIELDS:
        type_name, field_name = key.split(".")
        returned = get_named_type(built.get_type(type_name).fields[field_name].type)  # type: ignore[union-attr]
        if is_object_type(returned):
            assert returned.name in served, key
        elif is_abstract_type(returned):
            assert any(t.name in served for t in built.get_possible_types(returned)), key  # type: ignore[arg-type]


def test_query__repository_fields_and_issue_states() -> None:
    response, body = run('{ repository(owner: "acme", name: "orders") { name nameWithOwner description '
                         'isPrivate url owner { login } issues(first: 10, states: OPEN) { totalCount '
                         'nodes { number title state labels(first: 5) { nodes { name } } } } } }')
    assert response.status == 200 and response.worked
    repo = body["data"]["repository"]
    assert repo["nameWithOwner"] == "acme/orders" and repo["url"].endswith("/github/acme/orders")
    assert repo["owner"] == {"login": "acme"}
    assert repo["issues"]["totalCount"] == 4
    assert [n["number"] for n in repo["issues"]["nodes"]] == [1, 2, 3, 4]
    assert repo["issues"]["nodes"][1]["labels"]["nodes"] == [{"name": "bug"}]


def test_query__unknown_field_is_githubs_undefined_field_error() -> None:
    response, body = run('{ repository(owner: "acme", name: "orders") { forkCountx } }')
    assert response.status == 200 and not response.vendor_ok and not response.coverage_gap
    assert body == {"errors": [{
        "path": ["query", "repository", "forkCountx"],
        "extensions": {"code": "undefinedField", "typeName": "Repository", "fieldName": "forkCountx"},
        "locations": [{"line": 1, "column": 47}],
        "message": "Field 'forkCountx' doesn't exist on type 'Repository'"}]}


def test_query__missing_argument_and_bad_literal() -> None:
    _, body = run('query Q { repository(owner: "acme") { issues(first: "ten") { totalCount } } }')
    messages = [e["message"] for e in body["errors"]]
    assert "Field 'repository' is missing required arguments: name" in messages
    assert "Argument 'first' on Field 'issues' has an invalid value (\"ten\"). Expected type 'Int'." in messages
    assert body["errors"][0]["path"][0] == "query Q"


def test_query__parse_error_in_graphql_ruby_words() -> None:
    response, body = run("{ viewer { login }")
    assert response.status == 200 and not response.vendor_ok
    assert body["errors"][0]["message"] == "Unexpected end of document"
    _, body = run("{ viewer { login } } }")
    assert body["errors"][0]["message"] == 'Parse error on "}" (RCURLY) at [1, 22]'


def test_query__unimplemented_field_is_a_coverage_gap_and_nothing_runs() -> None:
    response, body = run('{ repository(owner: "acme", name: "orders") { name forkCount } }')
    assert response.status == 200 and response.coverage_gap and not response.worked
    assert "data" not in body
    assert body["errors"] == [{
        "path": ["query", "repository", "forkCount"], "extensions": {"code": "NOT_IMPLEMENTED"},
        "locations": [{"line": 1, "column": 52}],
        "message": "Field 'Repository.forkCount' is not implemented by this replica"}]


def test_query__unimplemented_argument_only_when_given() -> None:
    query = 'query($b: String) { viewer { login avatarUrl } search(query: "x", type: ISSUE, first: 1, before: $b) { issueCount } }'
    response, _ = run(query)
    assert response.worked
    response, body = run('{ repository(owner: "acme", name: "orders") { issues(first: 1, filterBy: {viewerSubscribed: true}) { totalCount } } }')
    assert response.coverage_gap
    assert body["errors"][0]["extensions"] == {"code": "NOT_IMPLEMENTED"}


def test_query__fragments_on_types_never_returned_are_harmless() -> None:
    response, body = run('{ search(query: "repo:acme/orders is:open", type: ISSUE, first: 2) { issueCount '
                         'nodes { ... on Issue { number } ... on Discussion { title } } } }')
    assert response.worked, body
    assert body["data"]["search"]["issueCount"] == 4
    assert body["data"]["search"]["nodes"] == [{"number": 4}, {"number": 3}]


def test_query__private_repository_of_others_is_not_found() -> None:
    response, body = run('{ repository(owner: "someone", name: "secret") { name } }')
    assert response.status == 200 and not response.vendor_ok
    assert body["data"] == {"repository": None}
    assert body["errors"][0]["type"] == "NOT_FOUND"
    assert body["errors"][0]["message"] == "Could not resolve to a Repository with the name 'someone/secret'."


def test_pagination__cursors_walk_forward_and_back() -> None:
    replica = FakeReplica()
    query = ('query($after: String, $before: String, $first: Int, $last: Int) { repository(owner: "acme", '
             'name: "orders") { issues(first: $first, after: $after, last: $last, before: $before) { '
             'pageInfo { hasNextPage hasPreviousPage endCursor startCursor } nodes { number } } } }')
    seen: list[int] = []
    after = None
    while True:
        _, body = run(query, {"first": 2, "after": after}, replica=replica)
        page = body["data"]["repository"]["issues"]
        seen += [n["number"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [1, 2, 3, 4, 5]
    _, body = run(query, {"last": 2, "before": page["pageInfo"]["startCursor"]}, replica=replica)
    assert [n["number"] for n in body["data"]["repository"]["issues"]["nodes"]] == [3, 4]


def test_pagination__missing_and_excessive_bounds() -> None:
    _, body = run('{ repository(owner: "acme", name: "orders") { issues { totalCount } } }')
    assert body["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"
    assert body["errors"][0]["message"] == ("You must provide a `first` or `last` value to properly paginate "
                                            "the `issues` connection.")
    _, body = run('{ repository(owner: "acme", name: "orders") { issues(first: 101) { totalCount } } }')
    assert body["errors"][0]["message"] == ("Requesting 101 records on the `issues` connection exceeds the "
                                            "`first` limit of 100 records.")


def test_node__ids_are_the_rest_node_ids() -> None:
    replica = FakeReplica()
    issue = replica.repo.issues[2]
    _, body = run('query($id: ID!) { node(id: $id) { __typename id ... on Issue { number } } }',
                  {"id": issue.node_id}, replica=replica)
    assert body["data"]["node"] == {"__typename": "Issue", "id": issue.node_id, "number": 2}
    _, body = run('{ node(id: "bm9wZQ==") { id } }', replica=replica)
    assert body["errors"][0]["type"] == "NOT_FOUND"


@pytest.mark.parametrize("raw", [b"{", b"[]", b'{"query": 3}', b'{"query": "{ viewer { login } }", "variables": 3}'])
def test_request__bad_bodies_never_500(raw: bytes) -> None:
    response, body = run("", body=raw)
    assert response.status in (200, 400)
    assert "errors" in body or body.get("message") == "Problems parsing JSON"


def test_request__no_caller_is_401() -> None:
    response, body = run("{ viewer { login } }", caller=None)
    assert response.status == 401 and body["message"] == "This endpoint requires you to be authenticated."
    request = ToolRequest("POST", "/graphql", headers={"authorization": "bearer nope"}, body=b"{}")
    response = execute(FakeReplica(), request, None)
    assert response.status == 401 and json.loads(response.body)["message"] == "Bad credentials"


def test_request__variables_of_the_wrong_type() -> None:
    _, body = run('query($n: Int!) { repository(owner: "acme", name: "orders") { issue(number: $n) { title } } }',
                  {"n": "two"})
    assert body["errors"][0]["message"] == "Variable $n of type Int! was provided invalid value"


def test_ledger__every_vendor_root_field_has_a_status() -> None:
    from ancha.world.tools.github.graphql.ledger import IMPLEMENTED, NOT_IMPLEMENTED, ledger, root_fields

    entries = ledger()
    assert len(entries) == len(root_fields()) > 200
    served = {key for key, (status, _) in entries.items() if status != NOT_IMPLEMENTED}
    assert {"query repository", "query viewer", "query search", "query node", "mutation createIssue",
            "mutation mergePullRequest", "mutation addPullRequestReview"} <= served
    assert entries["mutation createIssue"] == (IMPLEMENTED, "")
    assert entries["query enterprise"] == (NOT_IMPLEMENTED, "")
