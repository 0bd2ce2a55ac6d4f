"""The git CLI against a real environment: clone, commit, push, fetch over smart HTTP,
seen through the REST API with PyGithub, and GitHub's refusals."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "GIT_TERMINAL_PROMPT": "0",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ancha Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
           "GIT_COMMITTER_NAME": "Ancha Agent", "GIT_COMMITTER_EMAIL": "agent@example.com", "LC_ALL": "C"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def clone_url(gh: GH, repo: str = "acme/orders", token: str | None = None) -> str:
    scheme, _, rest = gh.url.partition("://")
    return f"{scheme}://x-access-token:{token or gh.token}@{rest}/{repo}.git"


GH = Any  # conftest.GH: the environment with PyGithub/githubkit clients on it


def test_clone_commit_push__branch_and_file_seen_by_rest(gh: GH, tmp_path: Path) -> None:
    git("clone", "-q", clone_url(gh), "orders", cwd=tmp_path)
    work = tmp_path / "orders"
    assert (work / "README.md").read_text() == "# orders\n"
    repo = gh.client.get_repo("acme/orders")
    assert git("rev-parse", "HEAD", cwd=work).stdout.strip() == repo.get_branch("main").commit.sha
    git("checkout", "-q", "-b", "fix/csv", cwd=work)
    (work / "exports.py").write_text("def export():\n    return 'csv'\n")
    git("add", "exports.py", cwd=work)
    git("commit", "-q", "-m", "Bring back CSV exports", cwd=work)
    git("push", "-q", "-u", "origin", "fix/csv", cwd=work)
    sha = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    branch = repo.get_branch("fix/csv")
    assert branch.commit.sha == sha
    assert branch.commit.commit.message == "Bring back CSV exports"
    content = repo.get_contents("exports.py", ref="fix/csv")
    assert not isinstance(content, list)
    assert content.decoded_content == b"def export():\n    return 'csv'\n"
    compare = repo.compare("main", "fix/csv")
    assert (compare.status, compare.ahead_by) == ("ahead", 1)
    assert [f.filename for f in compare.files] == ["exports.py"]


def test_fetch__sees_a_commit_made_through_the_contents_api(gh: GH, tmp_path: Path) -> None:
    git("clone", "-q", clone_url(gh), "orders", cwd=tmp_path)
    work = tmp_path / "orders"
    repo = gh.client.get_repo("acme/orders")
    readme = repo.get_contents("README.md")
    assert not isinstance(readme, list)
    made = repo.update_file("README.md", "Say more", "# orders\n\nMore.\n", readme.sha, branch="main")
    git("pull", "-q", "--ff-only", cwd=work)
    assert git("rev-parse", "HEAD", cwd=work).stdout.strip() == made["commit"].sha
    assert (work / "README.md").read_text() == "# orders\n\nMore.\n"
    git("fsck", "--strict", cwd=work)


def test_push_to_protected_branch__rejected_with_githubs_message(make_github: Callable[..., GH],
                                                                 github_seed: dict[str, Any], tmp_path: Path) -> None:
    github_seed["repos"][0]["protected_branches"] = ["main"]
    gh = make_github(github_seed)
    git("clone", "-q", clone_url(gh), "orders", cwd=tmp_path)
    work = tmp_path / "orders"
    before = gh.client.get_repo("acme/orders").get_branch("main").commit.sha
    (work / "README.md").write_text("direct\n")
    git("commit", "-q", "-am", "Straight to main", cwd=work)
    done = git("push", "origin", "main", cwd=work, check=False)
    assert done.returncode != 0
    assert "remote: error: GH006: Protected branch update failed for refs/heads/main." in done.stderr
    assert "[remote rejected] main -> main (protected branch hook declined)" in done.stderr
    assert gh.client.get_repo("acme/orders").get_branch("main").commit.sha == before
    git("push", "-q", "origin", "main:refs/heads/via-pr", cwd=work)  # other branches still take pushes


def test_clone_without_token__401(gh: GH, tmp_path: Path) -> None:
    scheme, _, rest = gh.url.partition("://")
    done = git("clone", f"{scheme}://{rest}/acme/orders.git", "orders", cwd=tmp_path, check=False)
    assert done.returncode != 0
    answer = gh.raw("GET", "/acme/orders.git/info/refs?service=git-upload-pack", token=None)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == 'Basic realm="GitHub"'


def test_clone_private_repo_as_outsider__repository_not_found(gh: GH, tmp_path: Path) -> None:
    done = git("clone", clone_url(gh, "acme/vault"), "vault", cwd=tmp_path, check=False)
    assert done.returncode != 0
    assert "Repository not found." in done.stderr


def test_push__traced_as_the_agent_and_reported_as_a_ref_update(gh: GH, tmp_path: Path) -> None:
    git("clone", "-q", clone_url(gh), "orders", cwd=tmp_path)
    work = tmp_path / "orders"
    git("commit", "-q", "--allow-empty", "-m", "Empty", cwd=work)
    git("push", "-q", "origin", "HEAD:refs/heads/empty", cwd=work)
    pushes = [e for e in gh.trace() if e["path"] == "/acme/orders.git/git-receive-pack"]
    assert pushes and pushes[-1]["status"] == 200 and pushes[-1]["actor"] == "agent"
    assert gh.state()["repos"][0]["git"]["branches"]["empty"] == git("rev-parse", "HEAD", cwd=work).stdout.strip()
