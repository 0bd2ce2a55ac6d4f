"""Every URL the replica hands out leads back to it: API ``url``/``*_url`` fields and
hypermedia links, ``html_url`` pages, ``avatar_url``, ``upload_url``, ``download_url``,
``browser_download_url`` and archive links are on the replica's origin and answer there."""

from __future__ import annotations

import io
import re
import tarfile
from typing import Any
from urllib.parse import urlsplit

import httpx

from ancha.world.tools.github.replica import VENDOR

GH = Any  # conftest.GH

_TEMPLATE = re.compile(r"\{[^}]*\}")
_REQUIRED = re.compile(r"\{[a-z_]+\}")
"""A bare ``{name}`` must be filled before the URL names anything (``compare/{base}...{head}``);
``{/name}``, ``{?a,b}`` and ``{&a}`` are optional and drop out."""
RETIRED = ("/authorizations", "/hub", "/downloads")
"""Still named in GitHub's answers, and 404 on GitHub itself: the OAuth Authorizations API,
PubSubHubbub and the Downloads API, all retired."""
UNSERVED = {"/feeds"}
"""GitHub's Atom feeds are not replicated: 501, a coverage gap the ledger lists."""


def _urls(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "documentation_url":  # GitHub's docs, not a resource
                continue
            _urls(item, found)
    elif isinstance(value, list):
        for item in value:
            _urls(item, found)
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        found.add(value)


def _answers(gh: GH) -> list[Any]:
    """A broad set of answers: repository, pull, issue, release with an asset, users, org,
    contents, commits, branches, compare, labels, milestones, teams, the root."""
    release = gh.raw("POST", "/repos/acme/orders/releases", json={"tag_name": "v1.0.0"}).json()
    upload = release["upload_url"].split("{")[0]
    asset = httpx.post(
        upload,
        params={"name": "notes.txt", "label": "Notes"},
        content=b"hello\n",
        headers={"Authorization": f"token {gh.token}", "Content-Type": "text/plain"},
        timeout=10,
    )
    assert asset.status_code == 201, asset.text
    main = gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    paths = [
        "/",
        "/user",
        "/users/laura",
        "/orgs/acme",
        "/user/orgs",
        "/repos/acme/orders",
        "/repos/laura/notes",
        "/repos/acme/orders/pulls/3",
        "/repos/acme/orders/pulls/3/files",
        "/repos/acme/orders/pulls",
        "/repos/acme/orders/issues/1",
        "/repos/acme/orders/issues/1/comments",
        "/repos/acme/orders/issues",
        "/repos/acme/orders/releases",
        f"/repos/acme/orders/releases/{release['id']}",
        "/repos/acme/orders/contents/README.md",
        "/repos/acme/orders/contents/",
        "/repos/acme/orders/commits",
        f"/repos/acme/orders/commits/{main}",
        "/repos/acme/orders/branches",
        "/repos/acme/orders/branches/main",
        "/repos/acme/orders/compare/main...fix-exports",
        "/repos/acme/orders/labels",
        "/repos/acme/orders/milestones/1",
        "/orgs/acme/teams/backend",
        "/repos/acme/orders/collaborators",
        "/repos/acme/orders/tags",
        f"/repos/acme/orders/git/commits/{main}",
    ]
    answers = []
    for path in paths:
        answer = gh.raw("GET", path)
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:200])
        answers.append(answer.json())
    answers.append(asset.json())
    return answers


def _vendor_has_any(path: str) -> bool:
    return VENDOR.match(path) is not None


def _vendor_has_get(path: str) -> bool:
    found = VENDOR.match(path, "GET")
    return found is not None and "GET" in found[0]


def test_every_url_in_answers__is_on_the_replica_and_answers_there(gh: GH) -> None:
    raw: set[str] = set()
    for answer in _answers(gh):
        _urls(answer, raw)
    origin = urlsplit(gh.url)
    prefix = gh.url.rstrip("/")
    found = {_TEMPLATE.sub("", u) for u in raw}
    elsewhere = sorted(
        u
        for u in found
        if (urlsplit(u).scheme, urlsplit(u).netloc) != (origin.scheme, origin.netloc)
        or not u.startswith(prefix)
    )
    assert not elsewhere, f"URLs outside the replica: {elsewhere[:10]}"
    followable = {u for u in raw if not _REQUIRED.search(u)}
    found = {_TEMPLATE.sub("", u) for u in followable}
    failing: list[tuple[str, int]] = []
    with httpx.Client(
        headers={"Authorization": f"token {gh.token}"}, timeout=10, follow_redirects=True
    ) as client:
        for url in sorted(found):
            path = urlsplit(url).path.removeprefix(urlsplit(gh.url).path) or "/"
            answer = client.get(url)
            if answer.status_code == 501 and path not in UNSERVED:
                failing.append((url, 501))
            elif (
                answer.status_code == 404
                and not path.endswith((*RETIRED, "/subscription"))
                and (_vendor_has_get(path) or not _vendor_has_any(path))
            ):
                # GitHub's own 404s: a repository subscription not set; no GET at all (merges_url).
                failing.append((url, 404))
    assert not failing, f"{len(failing)} of {len(found)} URLs do not answer: {failing}"


def test_upload_url__follows_back_to_the_replica_through_pygithub(gh: GH, tmp_path: Any) -> None:
    repo = gh.client.get_repo("acme/orders")
    release = repo.create_git_release("v2.0.0", "Two", "Second")
    assert release.upload_url.startswith(gh.url)
    file = tmp_path / "build.zip"
    file.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    asset = release.upload_asset(str(file), label="Build", content_type="application/zip")
    assert asset.browser_download_url.startswith(gh.url)
    downloaded = httpx.get(
        asset.browser_download_url, headers={"Authorization": f"token {gh.token}"}, timeout=10
    )
    assert downloaded.status_code == 200 and downloaded.content == file.read_bytes()


def test_html_pages_and_avatars__answer_on_the_replica(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    repo.create_file("exports.py", "Bring exports back", "EXPORTS = True\n", branch="fix-exports")
    pull = repo.get_pull(3)
    page = gh.raw("GET", pull.html_url.removeprefix(gh.url))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f"{gh.url}/repos/acme/orders/pulls/3" in page.text
    diff = gh.raw("GET", pull.diff_url.removeprefix(gh.url))
    assert diff.status_code == 200 and diff.text.startswith("diff --git a/exports.py")
    avatar = httpx.get(pull.user.avatar_url, timeout=10)
    assert avatar.status_code == 200 and avatar.content.startswith(b"\x89PNG")
    # A private repository's pages are not there for a stranger, as on github.com.
    assert gh.raw("GET", "/acme/orders/pull/3", token=None).status_code == 404
    assert gh.raw("GET", "/acme/orders/pull/99").status_code == 404


def test_archive_links__redirect_to_the_archive_on_the_replica(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    link = repo.get_archive_link("tarball", "main")
    assert link.startswith(gh.url)
    archive = httpx.get(link, headers={"Authorization": f"token {gh.token}"}, timeout=10)
    assert archive.status_code == 200 and archive.content[:2] == b"\x1f\x8b"
    with tarfile.open(fileobj=io.BytesIO(archive.content), mode="r:gz") as tar:
        names = tar.getnames()
    assert any(name.endswith("/README.md") for name in names)
    zipped = gh.raw("GET", "/repos/acme/orders/zipball/main", follow_redirects=True)
    assert zipped.status_code == 200 and zipped.content[:2] == b"PK"
    assert gh.raw("GET", "/repos/acme/orders/tarball/no-such-ref").status_code == 404
    assert (
        repo.get_archive_link("zipball") == f"{gh.url}/acme/orders/archive/main.zip"
    )  # no ref: default branch
    unknown = gh.raw("GET", "/repos/acme/orders/no-such-thing")  # an API path stays GitHub's JSON 404
    assert unknown.status_code == 404 and unknown.json()["message"] == "Not Found"


def test_public_repository_pages__need_no_token(gh: GH) -> None:
    notes = gh.raw("GET", "/repos/laura/notes", token=None).json()
    assert httpx.get(notes["html_url"], timeout=10).status_code == 200
    assert httpx.get(notes["owner"]["html_url"], timeout=10).status_code == 200


def test_graphql_urls__lead_back_to_the_replica(gh: GH) -> None:
    query = """{ repository(owner: "acme", name: "orders") { url owner { url avatarUrl }
                 issue(number: 1) { url author { avatarUrl } } } }"""
    answer = gh.raw("POST", "/graphql", json={"query": query})
    assert answer.status_code == 200, answer.text
    found: set[str] = set()
    _urls(answer.json()["data"], found)
    assert len(found) == 5 and all(url.startswith(gh.url) for url in found), found
    for url in found:
        assert (
            httpx.get(url, headers={"Authorization": f"token {gh.token}"}, timeout=10).status_code == 200
        ), url
