"""GitHub through its real hostnames (``agent.hostnames: real``): every URL the replica hands
out names GitHub's own host for it (api.github.com, github.com, avatars, raw, uploads,
codeload, githubassets), and each one, led back through ``real_hosts``, answers there.

Requests go to the environment as the server's interceptor hands them over: the path mapped
by the host's ``HostRoute`` and the ``x-ancha-real-base`` / ``x-ancha-real-host`` headers."""

from __future__ import annotations

import base64
import io
import re
import tarfile
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
import pytest

from ancha.server.embedded import EmbeddedServer
from ancha.world.environment import Environment
from ancha.world.kernel.hostnames import REAL_BASE, REAL_HOST
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.tools.github.replica import VENDOR
from ancha.world.tools.github.spec import TOOL

GH = Any  # conftest.GH

_TEMPLATE = re.compile(r"\{[^}]*\}")
_REQUIRED = re.compile(r"\{[a-z_]+\}")
"""A bare ``{name}`` must be filled before the URL names anything; ``{/name}``, ``{?a,b}`` drop out."""
RETIRED = ("/authorizations", "/hub", "/downloads", "/subscription")
"""Named in GitHub's answers and 404 on GitHub itself (retired APIs; a subscription not set)."""
UNSERVED = {"/feeds"}
"""GitHub's Atom feeds are not replicated (a coverage gap, 501)."""

HOSTS = ("api.github.com", "github.com", "uploads.github.com", "raw.githubusercontent.com",
         "codeload.github.com", "avatars.githubusercontent.com", "github.githubassets.com")


@dataclass
class RealGitHub:
    """An agent on GitHub's real hostnames: requests reach the environment as the interceptor passes them."""

    env: Environment
    token: str

    def call(self, method: str, url: str, body: Any = None, *, token: str | None = "",
             content: bytes | None = None, content_type: str = "application/json") -> ToolResponse:
        parts = urlsplit(url)
        assert parts.scheme == "https", url
        routes = TOOL.real_hosts(self.env.tools["github"]) if TOOL.real_hosts is not None else {}
        route = routes.get(parts.netloc)
        assert route is not None, f"{parts.netloc} is not one of GitHub's hosts the replica answers on"
        headers = {"host": parts.netloc, REAL_BASE: route.base, REAL_HOST: parts.netloc,
                   "x-forwarded-proto": "https", "accept": "application/vnd.github+json"}
        if token is not None:
            headers["authorization"] = f"token {token or self.token}"
        data = content if content is not None else orjson.dumps(body) if body is not None else b""
        if data:
            headers["content-type"] = content_type
        # The interceptor rewrites the URL onto the tool's own; the server then unquotes its path.
        request = ToolRequest(method, unquote(route.tool_path(parts.path or "/")), parts.query, headers, data)
        return self.env.dispatch("github", request)

    def json(self, method: str, url: str, body: Any = None, status: int = 200) -> Any:
        answer = self.call(method, url, body)
        assert answer.status == status, (url, answer.status, answer.body[:300])
        return orjson.loads(answer.body)


@pytest.fixture
def real(gh: GH, embedded_server: EmbeddedServer) -> RealGitHub:
    env = embedded_server.app.registry.get(gh.context["env_id"])
    assert env is not None
    return RealGitHub(env, gh.token)


API = "https://api.github.com"


def _urls(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key != "documentation_url":  # GitHub's docs, not a resource
                _urls(item, found)
    elif isinstance(value, list):
        for item in value:
            _urls(item, found)
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        found.add(value)


def _release_with_asset(real: RealGitHub) -> tuple[Any, Any]:
    release = real.json("POST", f"{API}/repos/acme/orders/releases", {"tag_name": "v1.0.0"}, 201)
    upload = release["upload_url"].split("{")[0]
    asset = real.call("POST", f"{upload}?name=notes.txt&label=Notes", content=b"hello\n", content_type="text/plain")
    assert asset.status == 201, asset.body
    return release, orjson.loads(asset.body)


def test_repository__html_url_clone_url_and_avatar_name_githubs_hosts(real: RealGitHub) -> None:
    repo = real.json("GET", f"{API}/repos/acme/orders")
    assert repo["url"] == f"{API}/repos/acme/orders"
    assert repo["html_url"] == "https://github.com/acme/orders"
    assert repo["clone_url"] == "https://github.com/acme/orders.git"
    assert repo["owner"]["avatar_url"] == f"https://avatars.githubusercontent.com/u/{repo['owner']['id']}?v=4"
    page = real.call("GET", repo["html_url"])
    assert page.status == 200 and page.content_type.startswith("text/html")
    avatar = real.call("GET", repo["owner"]["avatar_url"], token=None)
    assert avatar.status == 200 and avatar.body.startswith(b"\x89PNG")


def test_clone_url__serves_git_smart_http_on_github_com(real: RealGitHub) -> None:
    clone_url = real.json("GET", f"{API}/repos/acme/orders")["clone_url"]
    basic = base64.b64encode(f"x-access-token:{real.token}".encode()).decode()
    parts = urlsplit(f"{clone_url}/info/refs?service=git-upload-pack")
    refs = real.env.dispatch("github", ToolRequest(
        "GET", parts.path, parts.query,
        {"host": "github.com", REAL_BASE: API, REAL_HOST: "github.com", "x-forwarded-proto": "https",
         "authorization": f"Basic {basic}"}))
    assert refs.status == 200 and b"refs/heads/main" in refs.body


def test_issue__html_url_is_on_github_com_and_answers(real: RealGitHub) -> None:
    issue = real.json("GET", f"{API}/repos/acme/orders/issues/1")
    assert issue["html_url"] == "https://github.com/acme/orders/issues/1"
    assert real.call("GET", issue["html_url"]).status == 200


def test_content_file__download_url_is_on_raw_githubusercontent_com(real: RealGitHub) -> None:
    readme = real.json("GET", f"{API}/repos/acme/orders/contents/README.md")
    assert readme["download_url"] == "https://raw.githubusercontent.com/acme/orders/main/README.md"
    assert readme["html_url"] == "https://github.com/acme/orders/blob/main/README.md"
    raw = real.call("GET", readme["download_url"])
    assert raw.status == 200 and raw.body == b"# orders\n"


def test_release__upload_url_is_on_uploads_github_com_and_takes_the_asset(real: RealGitHub) -> None:
    release, asset = _release_with_asset(real)
    assert release["upload_url"] == (
        f"https://uploads.github.com/repos/acme/orders/releases/{release['id']}/assets{{?name,label}}")
    assert release["html_url"].startswith("https://github.com/acme/orders/releases/")
    assert asset["browser_download_url"] == "https://github.com/acme/orders/releases/download/v1.0.0/notes.txt"
    downloaded = real.call("GET", asset["browser_download_url"])
    assert downloaded.status == 200 and downloaded.body == b"hello\n"


def test_tarball__redirects_to_codeload_as_github_does(real: RealGitHub) -> None:
    answer = real.call("GET", f"{API}/repos/acme/orders/tarball/main")
    assert answer.status == 302
    location = answer.headers["location"]
    # A private repository's link carries a token: clients drop Authorization on leaving api.github.com.
    assert re.fullmatch(r"https://codeload\.github\.com/acme/orders/legacy\.tar\.gz/refs/heads/main\?token=\w+",
                        location), location
    archive = real.call("GET", location, token=None)
    assert archive.status == 200 and archive.body[:2] == b"\x1f\x8b"
    with tarfile.open(fileobj=io.BytesIO(archive.body), mode="r:gz") as tar:
        assert any(name.endswith("/README.md") for name in tar.getnames())
    # The link's token opens the archive and nothing in the API.
    token = location.rpartition("token=")[2]
    assert real.call("GET", f"{API}/repos/acme/orders", token=token).status == 401
    assert real.call("GET", location.partition("?")[0], token=None).status == 404


def test_zipball_of_a_commit__names_the_commit_on_codeload(real: RealGitHub) -> None:
    sha = real.json("GET", f"{API}/repos/acme/orders/branches/main")["commit"]["sha"]
    answer = real.call("GET", f"{API}/repos/acme/orders/zipball/{sha}")
    assert answer.status == 302
    location = answer.headers["location"]
    assert location.startswith(f"https://codeload.github.com/acme/orders/legacy.zip/{sha}?token=")
    archive = real.call("GET", location, token=None)
    assert archive.status == 200 and archive.body[:2] == b"PK"


def test_emojis__are_pictures_on_github_githubassets_com(real: RealGitHub) -> None:
    emojis = real.json("GET", f"{API}/emojis")
    url = emojis["+1"]
    assert url.startswith("https://github.githubassets.com/images/icons/emoji/unicode/")
    picture = real.call("GET", url, token=None)
    assert picture.status == 200 and picture.body.startswith(b"\x89PNG")


def test_graphql_urls__name_githubs_hosts(real: RealGitHub) -> None:
    query = """{ repository(owner: "acme", name: "orders") { url owner { url avatarUrl }
                 issue(number: 1) { url author { avatarUrl } } } }"""
    data = real.json("POST", f"{API}/graphql", {"query": query})["data"]["repository"]
    assert data["url"] == "https://github.com/acme/orders"
    assert data["issue"]["url"] == "https://github.com/acme/orders/issues/1"
    assert data["owner"]["avatarUrl"].startswith("https://avatars.githubusercontent.com/u/")
    for url in (data["url"], data["owner"]["url"], data["owner"]["avatarUrl"], data["issue"]["url"]):
        assert real.call("GET", url).status == 200, url


PATHS = ("/", "/user", "/users/laura", "/orgs/acme", "/user/orgs", "/repos/acme/orders", "/repos/laura/notes",
         "/repos/acme/orders/pulls/3", "/repos/acme/orders/pulls/3/files", "/repos/acme/orders/pulls",
         "/repos/acme/orders/issues/1", "/repos/acme/orders/issues/1/comments", "/repos/acme/orders/issues",
         "/repos/acme/orders/releases", "/repos/acme/orders/contents/README.md", "/repos/acme/orders/contents/",
         "/repos/acme/orders/commits", "/repos/acme/orders/branches", "/repos/acme/orders/branches/main",
         "/repos/acme/orders/compare/main...fix-exports", "/repos/acme/orders/labels",
         "/repos/acme/orders/milestones/1", "/orgs/acme/teams/backend", "/repos/acme/orders/collaborators",
         "/repos/acme/orders/tags", "/licenses/mit")


def _answers(real: RealGitHub) -> list[ToolResponse]:
    release, asset = _release_with_asset(real)
    main = real.json("GET", f"{API}/repos/acme/orders/branches/main")["commit"]["sha"]
    paths = [*PATHS, f"/repos/acme/orders/releases/{release['id']}", f"/repos/acme/orders/commits/{main}",
             f"/repos/acme/orders/git/commits/{main}", f"/repos/acme/orders/releases/assets/{asset['id']}"]
    answers = [real.call("GET", f"{API}{path}") for path in paths]
    failed = [(path, a.status) for path, a in zip(paths, answers, strict=True) if a.status != 200]
    assert not failed, failed
    answers.append(real.call("GET", f"{API}/repos/acme/orders/tarball/main"))
    return answers


def test_every_url_in_answers__names_a_github_host_and_leads_back(real: RealGitHub) -> None:
    raw: set[str] = set()
    for answer in _answers(real):
        _urls(orjson.loads(answer.body) if answer.body else None, raw)
        if "location" in answer.headers:
            raw.add(answer.headers["location"])
    elsewhere = sorted(u for u in raw if urlsplit(u).scheme != "https" or urlsplit(u).netloc not in HOSTS)
    assert not elsewhere, f"URLs on no GitHub host the replica answers on: {elsewhere[:10]}"
    assert {urlsplit(u).netloc for u in raw} >= {"api.github.com", "github.com", "uploads.github.com",
                                                "raw.githubusercontent.com", "codeload.github.com",
                                                "avatars.githubusercontent.com"}
    failing: list[tuple[str, int]] = []
    followable = sorted({_TEMPLATE.sub("", u) for u in raw if not _REQUIRED.search(u)})
    for url in followable:
        answer = real.call("GET", url)
        path = urlsplit(url).path
        if answer.status == 501 and path not in UNSERVED:
            failing.append((url, 501))
        elif (answer.status == 404 and not path.endswith(RETIRED)
              and (_vendor_has_get(path) or VENDOR.match(path) is None)):
            failing.append((url, 404))
    assert not failing, f"{len(failing)} of {len(followable)} URLs do not answer: {failing}"


def _vendor_has_get(path: str) -> bool:
    found = VENDOR.match(path, "GET")
    return found is not None and "GET" in found[0]


def test_answers_in_real_mode__never_name_the_ancha_server(real: RealGitHub) -> None:
    answers = _answers(real)
    query = '{ viewer { url avatarUrl } repository(owner: "acme", name: "orders") { url } }'
    answers.append(real.call("POST", f"{API}/graphql", content=orjson.dumps({"query": query})))
    answers.append(real.call("GET", "https://github.com/acme/orders.git"))  # a clone_url in a browser: 301
    leaks = [(a.status, a.body[:200]) for a in answers
             if b"/envs/" in a.body or any("/envs/" in value for value in a.headers.values())]
    assert not leaks, leaks
    assert answers[-1].status == 301 and answers[-1].headers["location"] == "https://github.com/acme/orders"


def test_codeload_and_raw_paths__lead_to_the_replicas_own_paths() -> None:
    routes = TOOL.real_hosts(None) if TOOL.real_hosts is not None else {}  # type: ignore[arg-type]
    assert set(routes) == set(HOSTS) and {route.base for route in routes.values()} == {API}
    codeload = routes["codeload.github.com"]
    assert codeload.tool_path("/o/r/legacy.tar.gz/refs/heads/feature/x") == "/o/r/archive/refs/heads/feature/x.tar.gz"
    assert codeload.tool_path("/o/r/zip/v1.0") == "/o/r/archive/v1.0.zip"
    assert routes["raw.githubusercontent.com"].tool_path("/o/r/main/docs/a.md") == "/raw/o/r/main/docs/a.md"
    assert routes["avatars.githubusercontent.com"].tool_path("/u/42") == "/avatars/u/42"
    assert routes["github.com"].tool_path("/o/r.git/info/refs") == "/o/r.git/info/refs"
