"""The git CLI against smart_http.handle_git alone, behind a plain HTTP server.

The replica's own tests (test_git_cli.py) go through the Ancha server; these pin the
protocol and GitHub's access answers without the rest of the replica.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ancha.world.kernel.tool import ToolRequest
from ancha.world.tools.github.git_protection import BranchRule
from ancha.world.tools.github.git_store import RefUpdate, RepoGit, build_repo_git
from ancha.world.tools.github.smart_http import GitAccess, git_route, git_token, handle_git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")

SEED = {"name": "acme/orders", "default_branch": "main",
        "files": {"README.md": "# Orders\n", "src/app.py": "print('hello')\n"},
        "commits": [{"ref": "feature_fix", "branch": "feature", "message": "Fix the feature",
                     "author": "laura", "files": {"src/app.py": "print('fixed')\n"}}]}
START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
TOKENS = {"tok-writer": ("writer", 3), "tok-reader": ("reader", 1), "tok-admin": ("boss", 5)}


class _Server:
    def __init__(self) -> None:
        self.repo: RepoGit = build_repo_git(SEED, START)
        self.private = False
        self.protected: dict[str, BranchRule] = {}
        self.updates: list[RefUpdate] = []
        self.repo.on_ref_update = self.updates.extend
        self.statuses: list[int] = []


@pytest.fixture
def server() -> Iterator[tuple[str, _Server]]:
    state = _Server()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            request = ToolRequest(self.command, path, query,
                                  {k.lower(): v for k, v in self.headers.items()}, body)
            route = git_route(request)
            assert route is not None, path
            token = git_token(request)
            login, rank = TOKENS.get(token or "", ("", 0))
            readable = rank >= 1 or (not state.private)
            access = GitAccess(state.repo if route.full_name == "acme/orders" else None,
                               credentials_given="authorization" in request.headers, authenticated=rank > 0,
                               can_read=readable, can_write=rank >= 3, login=login, actor=f"user:{login}",
                               rule=state.protected.get)
            answer = handle_git(request, route, access)
            state.statuses.append(answer.status)
            self.send_response(answer.status)
            self.send_header("content-type", answer.content_type)
            self.send_header("content-length", str(len(answer.body)))
            for key, value in answer.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(answer.body)

        do_GET = do_POST = _answer

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", state
    httpd.shutdown()
    httpd.server_close()


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "GIT_TERMINAL_PROMPT": "0",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
           "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com", "LC_ALL": "C"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def url(base: str, token: str | None = "tok-writer", repo: str = "acme/orders.git") -> str:
    host = base.removeprefix("http://")
    return f"http://x-access-token:{token}@{host}/{repo}" if token else f"http://{host}/{repo}"


def test_clone__gets_the_seeded_history_with_real_shas(server: tuple[str, _Server], tmp_path: Path) -> None:
    base, state = server
    git("clone", "-q", url(base), "work", cwd=tmp_path)
    work = tmp_path / "work"
    assert (work / "README.md").read_text() == "# Orders\n"
    assert git("rev-parse", "HEAD", cwd=work).stdout.strip() == state.repo.branch_sha("main")
    assert git("rev-parse", "origin/feature", cwd=work).stdout.strip() == state.repo.commits["feature_fix"]
    git("fsck", "--strict", cwd=work)
    assert git("log", "-1", "--format=%an <%ae>|%s", "origin/feature", cwd=work).stdout.strip() == \
        "laura <laura@users.noreply.github.com>|Fix the feature"


def test_push__moves_the_branch_and_reports_the_update(server: tuple[str, _Server], tmp_path: Path) -> None:
    base, state = server
    git("clone", "-q", url(base), "work", cwd=tmp_path)
    work = tmp_path / "work"
    git("checkout", "-q", "-b", "topic", cwd=work)
    (work / "NOTES.md").write_text("notes\n")
    git("add", "NOTES.md", cwd=work)
    git("commit", "-q", "-m", "Add notes", cwd=work)
    git("push", "-q", "origin", "topic", cwd=work)
    sha = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    assert state.repo.branch_sha("topic") == sha
    assert state.repo.read_file(sha, "NOTES.md") == b"notes\n"
    assert state.updates[-1] == RefUpdate("refs/heads/topic", None, sha, "user:writer")
    git("push", "-q", "origin", "--delete", "topic", cwd=work)
    assert state.repo.branch_sha("topic") is None
    assert state.updates[-1] == RefUpdate("refs/heads/topic", sha, None, "user:writer")


def test_fetch__sees_commits_made_on_the_server(server: tuple[str, _Server], tmp_path: Path) -> None:
    from ancha.world.tools.github.git_seed import Identity

    base, state = server
    git("clone", "-q", url(base), "work", cwd=tmp_path)
    work = tmp_path / "work"
    sha = state.repo.write_files("main", {"CHANGELOG.md": b"v2\n"}, "Changelog", Identity("Bot", "bot@x"),
                                 START.timestamp() + 60)
    git("pull", "-q", "--ff-only", cwd=work)
    assert git("rev-parse", "HEAD", cwd=work).stdout.strip() == sha
    assert (work / "CHANGELOG.md").read_text() == "v2\n"


def test_push_to_protected_branch__refused_with_githubs_message(server: tuple[str, _Server],
                                                               tmp_path: Path) -> None:
    base, state = server
    state.protected["main"] = BranchRule()
    before = state.repo.branch_sha("main")
    git("clone", "-q", url(base), "work", cwd=tmp_path)
    work = tmp_path / "work"
    (work / "README.md").write_text("changed\n")
    git("commit", "-q", "-am", "Direct change", cwd=work)
    done = git("push", "origin", "main", cwd=work, check=False)
    assert done.returncode != 0
    assert "remote: error: GH006: Protected branch update failed for refs/heads/main." in done.stderr
    assert "protected branch hook declined" in done.stderr
    assert state.repo.branch_sha("main") == before


def test_force_push_to_protected_branch__refused_when_pushes_are_allowed(server: tuple[str, _Server],
                                                                         tmp_path: Path) -> None:
    base, state = server
    state.protected["feature"] = BranchRule(pull_request_required=False)
    git("clone", "-q", url(base), "work", cwd=tmp_path)
    work = tmp_path / "work"
    git("checkout", "-q", "feature", cwd=work)
    (work / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=work)
    git("commit", "-q", "-m", "Fast-forward", cwd=work)
    git("push", "-q", "origin", "feature", cwd=work)
    git("reset", "-q", "--hard", "HEAD~2", cwd=work)
    done = git("push", "--force", "origin", "feature", cwd=work, check=False)
    assert done.returncode != 0
    assert "Cannot force-push to this branch" in done.stderr


def test_clone_without_token__401_for_private_repo(server: tuple[str, _Server], tmp_path: Path) -> None:
    base, state = server
    state.private = True
    done = git("clone", url(base, token=None), "work", cwd=tmp_path, check=False)
    assert done.returncode != 0
    assert 401 in state.statuses


def test_clone_public_repo_anonymously__works_and_push_is_401(server: tuple[str, _Server],
                                                              tmp_path: Path) -> None:
    base, state = server
    git("clone", "-q", url(base, token=None), "work", cwd=tmp_path)
    work = tmp_path / "work"
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=work)
    done = git("push", "origin", "HEAD:refs/heads/anon", cwd=work, check=False)
    assert done.returncode != 0
    assert state.statuses[-1] == 401
    assert state.repo.branch_sha("anon") is None


def test_clone_private_repo_with_bad_token__authentication_failed(server: tuple[str, _Server],
                                                                  tmp_path: Path) -> None:
    # git sends credentials only after a 401, so a bad token still clones a public repo (as on GitHub)
    base, state = server
    state.private = True
    done = git("clone", url(base, token="nope"), "work", cwd=tmp_path, check=False)
    assert done.returncode != 0
    assert "Authentication failed" in done.stderr or "Invalid username or token" in done.stderr


def test_clone_private_repo_as_outsider__repository_not_found(server: tuple[str, _Server],
                                                              tmp_path: Path) -> None:
    base, state = server
    done = git("clone", url(base, repo="acme/secret.git"), "work", cwd=tmp_path, check=False)
    assert done.returncode != 0
    assert "Repository not found." in done.stderr


def test_push_as_reader__403_permission_denied(server: tuple[str, _Server], tmp_path: Path) -> None:
    base, state = server
    git("clone", "-q", url(base, token="tok-reader"), "work", cwd=tmp_path)
    work = tmp_path / "work"
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=work)
    done = git("push", "origin", "HEAD:refs/heads/mine", cwd=work, check=False)
    assert done.returncode != 0
    assert "Permission to acme/orders.git denied to reader." in done.stderr
    assert state.repo.branch_sha("mine") is None


@pytest.mark.parametrize("body", [b"", b"garbage", b"0000", b"0032want 0000000000000000000000000000000000000000\n"])
def test_upload_pack__bad_bodies_are_4xx_never_5xx(server: tuple[str, _Server], body: bytes) -> None:
    _, state = server
    request = ToolRequest("POST", "/acme/orders.git/git-upload-pack", "",
                          {"content-type": "application/x-git-upload-pack-request"}, body)
    route = git_route(request)
    assert route is not None
    answer = handle_git(request, route, GitAccess(state.repo, False, False, True, False))
    assert answer.status < 500


def test_receive_pack__bad_bodies_are_4xx_never_5xx(server: tuple[str, _Server]) -> None:
    _, state = server
    zero = "0" * 40
    head = state.repo.branch_sha("main")
    for body in [b"garbage", f"0067{zero} {head} refs/heads/x\0report-status side-band-64k\n0000PACK".encode()]:
        request = ToolRequest("POST", "/acme/orders/git-receive-pack", "",
                              {"content-type": "application/x-git-receive-pack-request"}, body)
        route = git_route(request)
        assert route is not None
        answer = handle_git(request, route, GitAccess(state.repo, True, True, True, True))
        assert answer.status < 500


def test_empty_repository__clones_empty_and_takes_a_first_push(server: tuple[str, _Server], tmp_path: Path) -> None:
    base, state = server
    state.repo = build_repo_git({"name": "acme/orders"}, START, empty=True)
    assert state.repo.branches() == [] and state.repo.resolve("HEAD") is None
    done = git("clone", url(base), "work", cwd=tmp_path)
    assert "empty repository" in done.stderr
    work = tmp_path / "work"
    (work / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=work)
    git("commit", "-q", "-m", "First", cwd=work)
    git("push", "-q", "origin", "HEAD:refs/heads/main", cwd=work)
    assert state.repo.resolve("HEAD") == git("rev-parse", "HEAD", cwd=work).stdout.strip()
