"""Search and pagination."""

from __future__ import annotations

import re

MANY = 45  # issues of acme/many in the shared seed


def test_pages__pygithub_paginated_list_walks_every_page(gh):
    issues = gh.client.get_repo("acme/many").get_issues()
    assert issues.totalCount == MANY
    assert sorted(i.number for i in issues) == list(range(1, MANY + 1))


def test_pages__link_header_next_last_prev_first(gh):
    first = gh.raw("GET", "/repos/acme/many/issues?per_page=10")
    links = dict((rel, url) for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', first.headers["link"]))
    assert set(links) == {"next", "last"}
    assert links["next"].endswith("/repos/acme/many/issues?per_page=10&page=2")
    assert links["last"].endswith("page=5")
    middle = gh.raw("GET", "/repos/acme/many/issues?per_page=10&page=3")
    rels = re.findall(r'rel="(\w+)"', middle.headers["link"])
    assert rels == ["prev", "next", "last", "first"]
    assert len(middle.json()) == 10
    last = gh.raw("GET", "/repos/acme/many/issues?per_page=10&page=5")
    assert len(last.json()) == 5 and 'rel="next"' not in last.headers["link"]


def test_pages__per_page_caps_at_100_and_bad_values_default(gh):
    assert len(gh.raw("GET", "/repos/acme/many/issues?per_page=1000").json()) == MANY
    assert len(gh.raw("GET", "/repos/acme/many/issues?per_page=abc").json()) == 30
    assert gh.raw("GET", "/repos/acme/many/issues?page=99").json() == []


def test_pages__githubkit_paginate(gh):
    numbers = [i.number for i in gh.kit.paginate(gh.kit.rest.issues.list_for_repo, owner="acme", repo="many",
                                                  per_page=20)]
    assert len(numbers) == MANY


def test_search_issues__qualifiers(gh, matches_spec):
    result = gh.client.search_issues("exports repo:acme/orders is:issue is:open label:bug")
    assert [i.number for i in result] == [1]
    body = gh.raw("GET", "/search/issues", params={"q": "repo:acme/orders is:pr"}).json()
    matches_spec("GET", "/search/issues", body)
    assert body["total_count"] == 1 and body["items"][0]["pull_request"]["url"].endswith("/pulls/3")
    assert gh.raw("GET", "/search/issues", params={"q": "repo:acme/orders is:closed"}).json()["items"][0][
        "number"] == 2
    assert gh.raw("GET", "/search/issues", params={"q": "author:laura repo:acme/orders"}).json()["total_count"] == 1
    assert gh.raw("GET", "/search/issues", params={"q": "assignee:ben"}).json()["total_count"] == 1
    assert gh.raw("GET", "/search/issues", params={"q": "-label:bug repo:acme/orders"}).json()["total_count"] == 2
    assert gh.raw("GET", "/search/issues", params={"q": '"Issue 4" in:title repo:acme/many'}).json()[
        "total_count"] >= 1


def test_search_issues__githubkit(gh):
    found = gh.kit.rest.search.issues_and_pull_requests(q="crash repo:acme/orders").parsed_data
    assert found.total_count == 1 and found.items[0].title == "Old crash on login"


def test_search_issues__private_repo_hidden_and_errors(gh):
    assert gh.raw("GET", "/search/issues", params={"q": "Read me"}).json()["total_count"] == 1
    hidden = gh.raw("GET", "/search/issues", params={"q": "repo:laura/vault"})
    assert hidden.status_code == 422
    assert hidden.json()["errors"][0]["code"] == "invalid"
    missing = gh.raw("GET", "/search/issues")
    assert missing.json()["errors"] == [{"resource": "Search", "field": "q", "code": "missing"}]


def test_search_issues__search_rate_limit_bucket(gh):
    answer = gh.raw("GET", "/search/issues", params={"q": "x"})
    assert answer.headers["x-ratelimit-resource"] == "search"
    assert answer.headers["x-ratelimit-limit"] == "30"
