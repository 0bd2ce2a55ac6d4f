"""Tags, contributors, languages, the repository license and raw downloads, from real git."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

GH = Any  # conftest.GH

MIT = ("MIT License\n\nCopyright (c) 2026 Acme\n\nPermission is hereby granted, free of charge, to any person "
       "obtaining a copy\n")


@pytest.fixture
def code(make_github: Callable[..., GH], github_seed: dict[str, Any]) -> GH:
    orders = github_seed["repos"][0]
    orders["files"] = {"README.md": "# orders\n", "app/main.py": "print('hi')\n" * 10, "web/app.ts": "let x = 1;\n",
                       "Dockerfile": "FROM python:3.12\n", "config.yml": "a: 1\n" * 50, "LICENSE": MIT,
                       "node_modules/dep/index.js": "x" * 500}
    orders["commits"] = [{"message": "Add exports", "author": "gh_laura", "files": {"app/exports.py": "e = 1\n"}},
                         {"message": "Fix exports", "author": "gh_ben", "files": {"app/exports.py": "e = 2\n"}},
                         {"message": "Docs", "author": "gh_laura", "files": {"docs/x.md": "x\n"}}]
    return make_github(github_seed)


def test_languages__bytes_per_language_from_the_default_branch(code: GH, matches_spec: Callable[..., None]) -> None:
    answer = code.raw("GET", "/repos/acme/orders/languages").json()
    matches_spec("GET", "/repos/{owner}/{repo}/languages", answer)
    # Markdown (prose), YAML (data) and vendored node_modules are not counted, as on GitHub.
    assert answer == {"Python": 120 + 6, "Dockerfile": 17, "TypeScript": 11}
    assert list(answer) == ["Python", "Dockerfile", "TypeScript"]
    sdk = code.client.get_repo("acme/orders").get_languages()
    assert {k: v for k, v in sdk.items() if k != "url"} == answer  # PyGithub adds the url it read


def test_contributors__from_commit_authors(code: GH, matches_spec: Callable[..., None]) -> None:
    answer = code.raw("GET", "/repos/acme/orders/contributors").json()
    matches_spec("GET", "/repos/{owner}/{repo}/contributors", answer)
    assert [(c["login"], c["contributions"]) for c in answer] == [("laura", 2), ("ben", 1)]
    anon = code.raw("GET", "/repos/acme/orders/contributors", params={"anon": "1"}).json()
    matches_spec("GET", "/repos/{owner}/{repo}/contributors", anon)
    assert any(c["type"] == "Anonymous" for c in anon)  # the seed's initial commit by the org
    assert [c.login for c in code.client.get_repo("acme/orders").get_contributors()] == ["laura", "ben"]


def test_tags__newest_version_first(code: GH, matches_spec: Callable[..., None]) -> None:
    sha = code.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    for name in ("v1.9.0", "v1.10.0", "v1.2.0"):
        assert code.raw("POST", "/repos/acme/orders/git/refs", json={"ref": f"refs/tags/{name}", "sha": sha}
                        ).status_code == 201
    answer = code.raw("GET", "/repos/acme/orders/tags").json()
    matches_spec("GET", "/repos/{owner}/{repo}/tags", answer)
    assert [t["name"] for t in answer] == ["v1.10.0", "v1.9.0", "v1.2.0"]
    assert answer[0]["commit"]["sha"] == sha
    tags = code.client.get_repo("acme/orders").get_tags()
    assert [t.name for t in tags] == ["v1.10.0", "v1.9.0", "v1.2.0"] and tags[0].commit.sha == sha


def test_license__detected_from_the_license_file(code: GH, gh: GH, matches_spec: Callable[..., None]) -> None:
    answer = code.raw("GET", "/repos/acme/orders/license").json()
    matches_spec("GET", "/repos/{owner}/{repo}/license", answer)
    assert answer["license"]["spdx_id"] == "MIT" and answer["path"] == "LICENSE"
    assert code.client.get_repo("acme/orders").get_license().license.key == "mit"
    assert gh.raw("GET", "/repos/acme/orders/license").status_code == 404  # the default seed has none


def test_download_url__stays_on_the_replica(code: GH) -> None:
    file = code.raw("GET", "/repos/acme/orders/contents/app/main.py").json()
    url = file["download_url"]
    assert url.startswith(code.url + "/raw/acme/orders/main/")
    assert httpx.get(url, headers={"Authorization": f"token {code.token}"}).text == "print('hi')\n" * 10
    assert httpx.get(url).status_code == 404  # a private repository needs the token
    assert httpx.get(url, params={"token": code.token}).status_code == 200
    content = code.client.get_repo("acme/orders").get_contents("app/main.py")
    assert content.download_url == url and content.decoded_content == b"print('hi')\n" * 10


def test_raw__refs_with_slashes_and_public_repos(gh: GH) -> None:
    repo = gh.client.get_repo("acme/orders")
    repo.create_git_ref("refs/heads/feature/x", repo.get_branch("main").commit.sha)
    answer = gh.raw("GET", "/raw/acme/orders/feature/x/README.md")
    assert answer.status_code == 200 and answer.text == "# orders\n"
    assert answer.headers["content-type"].startswith("text/plain")
    assert gh.raw("GET", "/raw/acme/orders/main/nope.md").status_code == 404
    gh.as_user("laura").get_repo("laura/notes").create_file("todo.txt", "add", "milk\n")
    url = gh.raw("GET", "/repos/laura/notes/contents/todo.txt").json()["download_url"]
    assert httpx.get(url).text == "milk\n"  # a public repository: no token needed
