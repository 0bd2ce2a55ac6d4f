"""What wraps every route: authentication, errors, rate limits, ETags, unknown paths, coverage gaps."""

from __future__ import annotations

import base64

import pytest
from github import Auth, BadCredentialsException, Github
from tests.pygithub_client import UNTHROTTLED


def test_request__bad_token_is_bad_credentials(gh):
    answer = gh.raw("GET", "/repos/acme/orders", token="ghp_nope")
    assert answer.status_code == 401
    assert answer.json() == {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest",
                             "status": "401"}
    client = Github(auth=Auth.Token("ghp_nope"), base_url=gh.url, retry=None, **UNTHROTTLED)
    with pytest.raises(BadCredentialsException):
        client.get_user().login  # noqa: B018


def test_request__anonymous_user_requires_authentication(gh):
    answer = gh.raw("GET", "/user", token=None)
    assert answer.status_code == 401
    assert answer.json()["message"] == "Requires authentication"
    assert answer.json()["documentation_url"] == "https://docs.github.com/rest/users/users#get-the-authenticated-user"


def test_request__anonymous_reads_public_repo_but_not_private(gh):
    assert gh.raw("GET", "/repos/laura/notes", token=None).status_code == 200
    assert gh.raw("GET", "/repos/acme/orders", token=None).status_code == 404


def test_request__bearer_and_basic_auth_work(gh):
    assert gh.raw("GET", "/user", token=None, headers={"Authorization": f"Bearer {gh.token}"}).json()["login"] == \
        "ancha-agent"
    basic = base64.b64encode(f"x-access-token:{gh.token}".encode()).decode()
    assert gh.raw("GET", "/user", token=None, headers={"Authorization": f"Basic {basic}"}).status_code == 200


def test_request__unknown_path_is_github_404(gh):
    answer = gh.raw("GET", "/no/such/thing")
    assert answer.status_code == 404
    assert answer.json() == {"message": "Not Found", "documentation_url": "https://docs.github.com/rest",
                             "status": "404"}


def test_request__vendor_path_not_served_is_501_gap(gh):
    answer = gh.raw("GET", "/gists/abc123")
    assert answer.status_code == 501
    assert answer.json()["message"] == "Not Implemented: GET /gists/{gist_id} is not served by this replica"
    assert answer.json()["documentation_url"].startswith("https://docs.github.com/rest/gists")
    trace = gh.trace()
    assert trace[-1]["coverage_gap"] is True


def test_request__rate_limit_headers_count_down(gh):
    first = gh.raw("GET", "/repos/acme/orders")
    second = gh.raw("GET", "/repos/acme/orders")
    assert first.headers["x-ratelimit-limit"] == "5000"
    assert first.headers["x-ratelimit-resource"] == "core"
    assert int(second.headers["x-ratelimit-remaining"]) == int(first.headers["x-ratelimit-remaining"]) - 1
    assert int(second.headers["x-ratelimit-used"]) == int(first.headers["x-ratelimit-used"]) + 1
    assert first.headers["content-type"] == "application/json; charset=utf-8"
    assert first.headers["x-github-api-version-selected"] == "2022-11-28"


def test_rate_limit__overview_matches_headers(gh):
    gh.raw("GET", "/repos/acme/orders")
    body = gh.kit.rest.rate_limit.get().parsed_data
    assert body.resources.core.limit == 5000
    assert body.resources.core.used >= 1
    assert body.resources.search.limit == 30
    raw = gh.raw("GET", "/rate_limit").json()
    assert raw["rate"]["limit"] == raw["resources"]["core"]["limit"]


def test_request__etag_gives_304_with_empty_body(gh):
    first = gh.raw("GET", "/repos/acme/orders/issues/1")
    etag = first.headers["etag"]
    assert etag.startswith('W/"')
    again = gh.raw("GET", "/repos/acme/orders/issues/1", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert again.headers["x-ratelimit-used"] == first.headers["x-ratelimit-used"]  # a 304 is free
    gh.client.get_repo("acme/orders").get_issue(1).create_comment("news")
    assert gh.raw("GET", "/repos/acme/orders/issues/1", headers={"If-None-Match": etag}).status_code == 200


def test_request__invalid_json_body_is_400(gh):
    answer = gh.raw("POST", "/repos/acme/orders/issues", content=b"{nope", headers={"content-type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["message"] == "Problems parsing JSON"


def test_root__lists_api_urls(gh):
    body = gh.raw("GET", "/").json()
    assert body["repository_url"] == f"{gh.url}/repos/{{owner}}/{{repo}}"
    assert body["rate_limit_url"] == f"{gh.url}/rate_limit"


def test_request__people_tokens_are_traced_with_their_actor(gh):
    token = gh.replica.issue_token("laura", "person:laura")
    assert gh.raw("GET", "/user", token=token).json()["login"] == "laura"
    assert gh.trace()[-1]["actor"] == "person:laura"


def test_rate_limit__search_bucket_runs_out_with_403(gh):
    for _ in range(30):
        assert gh.raw("GET", "/search/issues", params={"q": "x"}).status_code == 200
    spent = gh.raw("GET", "/search/issues", params={"q": "x"})
    assert spent.status_code == 403
    assert spent.json()["message"].startswith("API rate limit exceeded for user ID ")
    assert spent.headers["x-ratelimit-remaining"] == "0"
    assert gh.raw("GET", "/repos/acme/orders").status_code == 200  # the core bucket is separate


def test_rate_limit__anonymous_gets_60(gh):
    answer = gh.raw("GET", "/repos/laura/notes", token=None)
    assert answer.headers["x-ratelimit-limit"] == "60"
