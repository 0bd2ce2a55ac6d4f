"""GitHub's GraphQL resource limits on the real server: document size, depth, the node limit,
the rate-limit cost, ``nodes(ids:)``, and that no document holds up other environments.

Each limit answers in GitHub's own shape (HTTP 200, ``errors`` and no ``data`` for a query
refused before it runs); docs/tools/github.md lists them.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.world.tools.github.graphql.limits import MAX_QUERY_BYTES, MAX_TOKENS

TOO_LARGE = "This query is too large to execute."


def post(gh: Any, query: str, variables: dict[str, Any] | None = None, *, status: int = 200) -> dict[str, Any]:
    answer = httpx.post(f"{gh.url}/graphql", json={"query": query, "variables": variables},
                        headers={"Authorization": f"bearer {gh.token}"}, timeout=60)
    assert answer.status_code == status, answer.text[:300]
    body: dict[str, Any] = answer.json()
    return body


BODY_TOO_LARGE = {"message": "Request body too large", "documentation_url": "https://docs.github.com/graphql"}


def node_ids(gh: Any, count: int) -> list[str]:
    issue = gh.client.get_repo("acme/orders").get_issue(1).raw_data["node_id"]
    return [issue] * count


# --- the document ------------------------------------------------------------------------------

def test_document__over_the_byte_limit_is_too_large_to_execute(gh):
    body = post(gh, "{ viewer { login } }" + " " * (MAX_QUERY_BYTES + 1))
    assert body == {"errors": [{"message": TOO_LARGE}]}
    issue = post(gh, "{viewer{login}}" * 50_000)  # the issue's reproduction: 750 KB
    assert issue == {"errors": [{"message": TOO_LARGE}]}
    five_mb = post(gh, "{viewer{login}}" * 350_000, status=413)  # past the request's limit, not even read
    assert five_mb == BODY_TOO_LARGE


def test_document__over_the_token_limit_is_too_large_to_execute(gh):
    body = post(gh, "{viewer{login}}" * 2_000)  # 30 KB, 10,000 tokens
    assert "data" not in body
    [error] = body["errors"]
    assert error["message"] == TOO_LARGE and error["locations"][0]["line"] == 1
    under = "query { " + "viewer { login } " * ((MAX_TOKENS - 10) // 4) + "}"
    assert post(gh, under)["data"] == {"viewer": {"login": "ancha-agent"}}


def test_document__deeper_than_25_is_refused_with_graphql_rubys_words(gh):
    deep = "{ viewer { " + "repositories(first: 1) { nodes { owner { " * 10 + "login" + " } } }" * 10 + " } }"
    body = post(gh, deep)
    assert body == {"errors": [{"message": "Query has depth of 32, which exceeds max depth of 25"}]}
    ok = "{ viewer { " + "repositories(first: 1) { nodes { owner { " * 7 + "login" + " } } }" * 7 + " } }"
    assert "errors" not in post(gh, ok)


def test_fields_will_merge__repeated_fields_merge_and_conflicts_use_githubs_words(gh):
    repeated = "{ " + "viewer { login } " * ((MAX_TOKENS - 10) // 4) + "}"
    assert post(gh, repeated) == {"data": {"viewer": {"login": "ancha-agent"}}}
    body = post(gh, "{ viewer { who: login who: name } }")
    assert body == {"errors": [{
        "path": [],
        "extensions": {"code": "fieldConflict", "fieldName": "who", "conflicts": "login or name"},
        "locations": [{"line": 1, "column": 12}, {"line": 1, "column": 23}],
        "message": "Field 'who' has a field conflict: login or name?"}]}


# --- nodes(ids:) -------------------------------------------------------------------------------

def test_nodes__more_than_100_ids_are_refused_as_github_does(gh):
    ids = node_ids(gh, 100)
    found = post(gh, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": ids})
    assert len(found["data"]["nodes"]) == 100
    body = post(gh, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": [*ids, ids[0]]})
    assert body == {"data": None, "errors": [{
        "type": "ARGUMENT_LIMIT", "path": ["nodes"], "locations": [{"line": 1, "column": 23}],
        "message": "You may not provide more than 100 node ids; you provided 101."}]}
    many = post(gh, "query($ids: [ID!]!) { some: nodes(ids: $ids) { id } }", {"ids": node_ids(gh, 20_000)})
    assert many["errors"][0]["message"] == "You may not provide more than 100 node ids; you provided 20000."
    assert many["errors"][0]["path"] == ["some"]
    literal = post(gh, "{ nodes(ids: [" + ", ".join(json.dumps(i) for i in ids[:1] * 101) + "]) { id } }")
    assert literal["errors"][0]["type"] == "ARGUMENT_LIMIT"
    # The issue's 100,000 ids are 2.8 MB of JSON: past the request's limit, refused unread.
    assert post(gh, "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", {"ids": node_ids(gh, 100_000)},
                status=413) == BODY_TOO_LARGE


# --- the node limit and the cost ---------------------------------------------------------------

def test_node_limit__a_connection_past_500000_nodes_is_refused(gh):
    query = """{ organization(login: "acme") { repositories(first: 100) { nodes {
        issues(first: 100) { nodes { comments(first: 100) { nodes { body } } } } } } } }"""
    body = post(gh, query)
    assert body == {"errors": [{"type": "MAX_NODE_LIMIT_EXCEEDED", "message": (
        "By the time this query traverses to the comments connection, it is requesting up to 1,000,000 possible "
        "nodes which exceeds the maximum limit of 500,000.")}]}


def test_node_limit__a_query_past_500000_nodes_in_total_is_refused(gh):
    query = """query($n: Int!) { organization(login: "acme") { repositories(first: 100) {
        nodes { issues(first: 100) { nodes { comments(first: $n) { nodes { body } } } } } } } }"""
    body = post(gh, query, {"n": 49})  # 100 + 100*100 + 100*100*49 = 500,100
    assert body == {"errors": [{"type": "MAX_NODE_LIMIT_EXCEEDED", "message": (
        "This query requests up to 500,100 possible nodes which exceeds the maximum limit of 500,000.")}]}
    fits = post(gh, query, {"n": 48})  # 100 + 10,000 + 480,000 = 490,100
    assert "errors" not in fits and fits["data"]["organization"]["repositories"]["nodes"]


def test_rate_limit__cost_and_node_count_follow_githubs_formula(gh):
    query = """{ rateLimit { cost nodeCount limit used remaining }
        search(query: "repo:acme/many", type: ISSUE, first: 100) { nodes { ... on Issue {
          labels(first: 10) { nodes { name } } comments(first: 20) { nodes { body } } } } } }"""
    first = post(gh, query)["data"]["rateLimit"]
    # 1 search + 100 label pages + 100 comment pages = 201 requests -> 2 points;
    # 100 issues + 100*10 labels + 100*20 comments = 3,100 nodes.
    assert first["cost"] == 2 and first["nodeCount"] == 3100 and first["limit"] == 5000
    second = post(gh, query)["data"]["rateLimit"]
    assert second["used"] == first["used"] + 2 and second["remaining"] == 5000 - second["used"]
    cheap = post(gh, "{ rateLimit { cost nodeCount } viewer { login } }")["data"]["rateLimit"]
    assert cheap == {"cost": 1, "nodeCount": 0}


# --- any document: a GraphQL answer, never a 500 ---------------------------------------------

_LEAVES = ["login", "name", "number", "title", "body", "id", "__typename", "cost", "nope", "who: login", "who: name",
           "n: number", "n: title"]
_PARENTS = ["viewer", 'repository(owner: "acme", name: "orders")', "issues(first: 100)", "issues(first: $n)",
            "issues(last: 101)", "comments(first: 3)", "nodes", "edges", "node", "labels(first: 2)", "owner",
            'search(query: "is:issue", type: ISSUE, first: 100)', 'node(id: "x")', 'nodes(ids: ["x", "y"])',
            "rateLimit", "who: viewer", "x: repository(owner: \"acme\", name: \"many\")", "... on Issue",
            "... on User", "...", "repositories(first: 100)", 'organization(login: "acme")']


def _selection(children: Any) -> Any:
    return st.tuples(st.sampled_from(_PARENTS), st.lists(children, min_size=1, max_size=4)).map(
        lambda pair: pair[0] + " { " + " ".join(pair[1]) + " }")


_SELECTIONS = st.recursive(st.sampled_from([*_LEAVES, "...F0", "...F1"]), _selection, max_leaves=40)
_DOCUMENTS = st.builds(
    lambda body, f0, f1, head: f"{head} {{ {' '.join(body)} }} fragment F0 on Query {{ {f0} }} "
                               f"fragment F1 on Issue {{ {f1} }}",
    st.lists(_SELECTIONS, min_size=1, max_size=5), _SELECTIONS, _SELECTIONS,
    st.sampled_from(["query", "query($n: Int = 5)", "query Q($n: Int!)", "mutation", "{ viewer { id } } query"]))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(document=_DOCUMENTS, n=st.sampled_from([1, 100, 101, -1, 2**40]))
def test_any_document__answers_in_githubs_shape_and_never_500(gh, document, n):
    answer = httpx.post(f"{gh.url}/graphql", json={"query": document, "variables": {"n": n}},
                        headers={"Authorization": f"bearer {gh.token}"}, timeout=60)
    assert answer.status_code == 200, (answer.status_code, answer.text[:300])
    body = answer.json()
    assert "errors" in body or "data" in body
    assert all(isinstance(error.get("message"), str) for error in body.get("errors", []))


# --- other environments are never held up --------------------------------------------------------

WORST = [
    "{viewer{login}}" * 50_000,                                # 750 KB of operations
    "{viewer{login}}" * 350_000,                               # 5 MB
    "{" + "viewer{login} " * (MAX_TOKENS // 4 - 4) + "}",      # one field, repeated to the token limit
    "{ viewer { login } }\n#" + "x" * (MAX_QUERY_BYTES - 30),   # a comment to the byte limit
]


def test_worst_documents__never_hold_up_another_environment(make_github):
    attacked, other = make_github(), make_github()
    ids = node_ids(attacked, 100_000)
    stop = threading.Event()
    attacks: list[float] = []

    def attack() -> None:
        with httpx.Client(timeout=120, headers={"Authorization": f"bearer {attacked.token}"}) as client:
            while not stop.is_set():
                for query in WORST:
                    client.post(f"{attacked.url}/graphql", json={"query": query})
                for many in (ids, ids[:20_000]):
                    client.post(f"{attacked.url}/graphql", json={
                        "query": "query($ids: [ID!]!) { nodes(ids: $ids) { id } }", "variables": {"ids": many}})
                attacks.append(time.monotonic())

    thread = threading.Thread(target=attack, daemon=True)
    thread.start()
    answered = 0
    try:
        # While the attack goes on (two full rounds of it), every call of the other
        # environment is answered within a deadline far above the 100 ms target and far
        # below what one such document used to take (11 s, or no answer in 30 s).
        deadline = time.monotonic() + 120
        with httpx.Client(timeout=2.0, headers={"Authorization": f"token {other.token}"}) as client:
            while len(attacks) < 2:
                assert client.get(f"{other.url}/user").status_code == 200
                answered += 1
                assert time.monotonic() < deadline, "the attack stopped making progress"
    finally:
        stop.set()
        thread.join(timeout=120)
    assert answered > len(WORST)  # answered while the attack ran, not after it
