"""``push``, ``create``, ``delete`` and ``pull_request`` ``synchronize`` when people move refs:
through the contents API, the git data API and ``git push`` over smart HTTP."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_git_cli import clone_url, git
from test_webhooks import Hooks, hooks_for

ZERO = "0" * 40


@pytest.fixture
def hooks(gh: Any, embedded_server: Any) -> Hooks:
    return hooks_for(gh, embedded_server)


def _put_file(hooks: Hooks, path: str, text: str, branch: str = "main", token: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"message": f"Write {path}", "content": base64.b64encode(text.encode()).decode(),
                            "branch": branch}
    current = hooks.gh.raw("GET", f"/repos/acme/orders/contents/{path}?ref={branch}")
    if current.status_code == 200:
        body["sha"] = current.json()["sha"]
    answer: dict[str, Any] = hooks.as_person("PUT", f"/repos/acme/orders/contents/{path}", token=token, json=body)
    return answer


def test_push__contents_api_commit_on_main(hooks: Hooks) -> None:
    before = hooks.gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    made = _put_file(hooks, "exports.py", "def export():\n    return 'csv'\n")
    [(kind, body)] = hooks.take()
    after = made["commit"]["sha"]
    assert kind == "push"
    assert (body["ref"], body["before"], body["after"]) == ("refs/heads/main", before, after)
    assert (body["created"], body["deleted"], body["forced"], body["base_ref"]) == (False, False, False, None)
    assert body["compare"] == f"{hooks.gh.url}/acme/orders/compare/{before[:12]}...{after[:12]}"
    [commit] = body["commits"]
    assert commit["id"] == after and commit["message"] == "Write exports.py"
    assert (commit["added"], commit["modified"], commit["removed"]) == (["exports.py"], [], [])
    assert commit["author"]["username"] == "laura"
    assert body["head_commit"]["id"] == after
    assert body["pusher"] == {"name": "laura", "email": "laura@acme.test"}
    assert body["sender"]["login"] == "laura"
    repo = body["repository"]
    assert isinstance(repo["created_at"], int) and isinstance(repo["pushed_at"], int)
    assert (repo["master_branch"], repo["organization"]) == ("main", "acme")
    assert body["organization"]["login"] == "acme"


def test_create_and_delete__branch_through_git_refs(hooks: Hooks) -> None:
    main = hooks.gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    hooks.as_person("POST", "/repos/acme/orders/git/refs", json={"ref": "refs/heads/hotfix", "sha": main})
    created = hooks.take()
    assert [kind for kind, _ in created] == ["push", "create"]
    push, create = (body for _, body in created)
    assert (push["created"], push["before"], push["after"], push["commits"]) == (True, ZERO, main, [])
    assert push["compare"] == f"{hooks.gh.url}/acme/orders/compare/hotfix"
    assert (create["ref"], create["ref_type"], create["master_branch"], create["pusher_type"]) == \
        ("hotfix", "branch", "main", "user")
    assert create["description"] == "Order service"
    hooks.as_person("DELETE", "/repos/acme/orders/git/refs/heads/hotfix")
    deleted = hooks.take()
    assert [kind for kind, _ in deleted] == ["push", "delete"]
    push, delete = (body for _, body in deleted)
    assert (push["deleted"], push["after"], push["head_commit"], push["commits"]) == (True, ZERO, None, [])
    assert (delete["ref"], delete["ref_type"]) == ("hotfix", "branch")


def test_create__tag(hooks: Hooks) -> None:
    main = hooks.gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    hooks.as_person("POST", "/repos/acme/orders/git/refs", json={"ref": "refs/tags/v1.0.0", "sha": main})
    delivered = hooks.take()
    assert [kind for kind, _ in delivered] == ["push", "create"]
    assert delivered[0][1]["ref"] == "refs/tags/v1.0.0" and delivered[0][1]["head_commit"]["id"] == main
    assert (delivered[1][1]["ref"], delivered[1][1]["ref_type"]) == ("v1.0.0", "tag")


def test_push__forced_update_through_git_refs(hooks: Hooks) -> None:
    main = hooks.gh.raw("GET", "/repos/acme/orders/branches/main").json()["commit"]["sha"]
    made = _put_file(hooks, "notes.txt", "one\n")
    hooks.take()
    hooks.as_person("PATCH", "/repos/acme/orders/git/refs/heads/main", json={"sha": main, "force": True})
    [(kind, body)] = hooks.take()
    assert (kind, body["forced"], body["before"], body["after"]) == ("push", True, made["commit"]["sha"], main)


def test_synchronize__push_to_an_open_pulls_head(hooks: Hooks) -> None:
    before = hooks.gh.raw("GET", "/repos/acme/orders/branches/fix-exports").json()["commit"]["sha"]
    made = _put_file(hooks, "exports.py", "csv = True\n", branch="fix-exports", token=hooks.ben)
    delivered = hooks.take()
    assert [(kind, body.get("action")) for kind, body in delivered] == [("push", None),
                                                                        ("pull_request", "synchronize")]
    sync = delivered[1][1]
    after = made["commit"]["sha"]
    assert (sync["number"], sync["before"], sync["after"]) == (3, before, after)
    assert sync["pull_request"]["head"]["sha"] == after
    assert sync["sender"]["login"] == "ben"


def test_agent_push__not_delivered(hooks: Hooks) -> None:
    body = {"message": "Agent's fix", "content": base64.b64encode(b"x\n").decode(), "branch": "fix-exports"}
    assert hooks.gh.raw("PUT", "/repos/acme/orders/contents/agent.txt", json=body).status_code == 201
    assert hooks.take() == []


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")
def test_git_push__new_branch_sends_push_and_create(hooks: Hooks, tmp_path: Path) -> None:
    git("clone", "-q", clone_url(hooks.gh, token=hooks.laura), "orders", cwd=tmp_path)
    work = tmp_path / "orders"
    git("checkout", "-q", "-b", "fix/csv", cwd=work)
    (work / "exports.py").write_text("csv\n")
    (work / "README.md").write_text("# orders, with exports\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "Bring back CSV exports", cwd=work)
    git("push", "-q", "origin", "fix/csv", cwd=work)
    sha = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    delivered = hooks.take()
    assert [kind for kind, _ in delivered] == ["push", "create"]
    push = delivered[0][1]
    assert (push["ref"], push["created"], push["after"]) == ("refs/heads/fix/csv", True, sha)
    [commit] = push["commits"]
    assert (commit["added"], commit["modified"]) == (["exports.py"], ["README.md"])
    assert commit["author"] == {"name": "Ancha Agent", "email": "agent@example.com"}
    assert push["pusher"]["name"] == "laura"


def test_push__by_the_world_names_the_committer_as_pusher(hooks: Hooks) -> None:
    world = hooks.gh.replica.issue_token("laura", "world")
    _put_file(hooks, "world.txt", "from a world event\n", token=world)
    [(kind, body)] = hooks.take()
    assert (kind, body["pusher"]["name"], body["sender"]["login"]) == ("push", "laura", "laura")
