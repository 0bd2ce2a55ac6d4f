"""GitHub's world-rule actions (``github.comment``, ``review``, ``merge``, ``commit``,
``issue``) performed by scene events through the REST API (traced as ``world``, visible
to the agent's PyGithub), their bodies resolved from a scene file, and the judge's view."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from github import GithubException

from ancha.scene.errors import SceneInvalid
from ancha.scene.loading import load_scene
from ancha.scene.sections import BodyKind, Catalog
from ancha.world.kernel.spec import ActionKind
from ancha.world.registry import registry
from ancha.world.tools.github import action_bodies, actions
from ancha.world.tools.github.judge import judge_view

ACTIONS = (
    ("github.comment", action_bodies.CommentActionFile, action_bodies.resolve_comment, actions.comment),
    ("github.review", action_bodies.ReviewActionFile, action_bodies.resolve_review, actions.review),
    ("github.merge", action_bodies.MergeActionFile, action_bodies.resolve_merge, actions.merge),
    ("github.commit", action_bodies.CommitActionFile, action_bodies.resolve_commit, actions.commit),
    ("github.issue", action_bodies.IssueActionFile, action_bodies.resolve_issue, actions.issue),
)
KINDS = {key: ActionKind(BodyKind(key, "github", model, resolve), perform) for key, model, resolve, perform in ACTIONS}

SEED: dict[str, Any] = {
    "agent": {"ref": "github_agent", "login": "ancha-agent"},
    "users": [{"ref": "gh_laura", "login": "laura"}, {"ref": "gh_ben", "login": "ben"}],
    "repos": [{
        "ref": "orders", "name": "acme/orders", "files": {"README.md": "# orders\n", "app.py": "print(1)\n"},
        "commits": [{"branch": "fix-exports", "message": "Fix exports", "author": "gh_ben",
                     "files": {"app.py": "print(2)\n"}}],
        "permissions": {"github_agent": "write", "gh_laura": "admin", "gh_ben": "write"},
        "labels": [{"name": "bug"}],
        "issues": [{"ref": "export_bug", "title": "CSV exports are gone", "author": "gh_ben"}],
        "pulls": [{"ref": "fix_pull", "title": "Fix exports", "head": "fix-exports", "author": "gh_ben",
                   "body": "Fixes #1"}],
    }],
}


@pytest.fixture
def github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry's GitHub with its world-rule actions (until the tool's spec wires them in)."""
    built = registry()
    for key, kind in KINDS.items():
        if key not in built.actions:
            monkeypatch.setitem(built.actions, key, kind)
    spec = built.tools.get("github")
    if spec is not None and spec.judge_view is None:
        monkeypatch.setitem(built.tools, "github", replace(spec, judge_view=judge_view))


def _run(make_github: Callable[..., Any], events: list[dict[str, Any]]) -> Any:
    """A world whose events run while the agent waits; the trial ends idle after them."""
    gh = make_github(copy.deepcopy(SEED), scene={"world_rules": {"events": events},
                                                 "clock": {"start": "2026-03-02T09:00:00Z", "limit": 7200}})
    base = gh.url.rsplit("/github", 1)[0]
    assert httpx.post(f"{base}/waiting", json={"waiting": True}, timeout=10).status_code == 200
    deadline = time.monotonic() + 10
    while httpx.get(base, timeout=10).json()["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    return gh


def _fired(gh: Any) -> list[dict[str, Any]]:
    base = gh.url.rsplit("/github", 1)[0]
    lines = httpx.get(f"{base}/records", timeout=10).text.splitlines()
    return [r for r in (json.loads(line) for line in lines if line) if r["kind"] == "event_fired"]


def test_comment_review_merge__performed_as_the_user_and_traced_as_world(
        make_github: Callable[..., Any], github_actions: None) -> None:
    gh = _run(make_github, [
        {"at": 60, "do": [{"github.comment": {"issue": "export_bug", "from": "gh_laura", "body": "Any news?"}}]},
        {"at": 120, "do": [{"github.review": {"pull": "fix_pull", "from": "gh_laura", "event": "APPROVE",
                                              "body": "Looks good"}},
                           {"github.merge": {"pull": "fix_pull", "from": "gh_laura", "method": "squash"}}]},
    ])
    fired = _fired(gh)
    assert [(r["index"], r.get("errors")) for r in fired] == [(0, None), (1, None)]
    repo = gh.client.get_repo("acme/orders")
    assert [(c.user.login, c.body) for c in repo.get_issue(1).get_comments()] == [("laura", "Any news?")]
    pull = repo.get_pull(2)
    assert [(r.user.login, r.state, r.body) for r in pull.get_reviews()] == [("laura", "APPROVED", "Looks good")]
    assert pull.merged and pull.merged_by.login == "laura"
    assert repo.get_contents("app.py").decoded_content == b"print(2)\n"
    world = [(e["method"], e["path"], e["status"]) for e in gh.trace() if e["actor"] == "world"]
    assert world == [("POST", "/repos/acme/orders/issues/1/comments", 201),
                     ("POST", "/repos/acme/orders/pulls/2/reviews", 200),
                     ("PUT", "/repos/acme/orders/pulls/2/merge", 200)]


def test_commit__one_commit_of_every_file_on_a_new_branch(make_github: Callable[..., Any],
                                                          github_actions: None) -> None:
    gh = _run(make_github, [{"at": 30, "do": [{"github.commit": {
        "repo": "orders", "branch": "hotfix", "from": "gh_laura", "message": "Hotfix",
        "files": {"hotfix.txt": "A\n", "README.md": None}}}]}])
    assert [r.get("errors") for r in _fired(gh)] == [None]
    repo = gh.client.get_repo("acme/orders")
    head = repo.get_branch("hotfix").commit
    assert head.commit.message == "Hotfix" and head.commit.author.name == "laura"
    assert head.parents[0].sha == repo.get_branch("main").commit.sha
    assert sorted(f.filename for f in head.files) == ["README.md", "hotfix.txt"]
    assert repo.get_contents("hotfix.txt", ref="hotfix").decoded_content == b"A\n"
    with pytest.raises(GithubException):
        repo.get_contents("README.md", ref="hotfix")


def test_commit__on_the_default_branch_when_none_is_given(make_github: Callable[..., Any],
                                                          github_actions: None) -> None:
    gh = _run(make_github, [{"at": 30, "do": [{"github.commit": {
        "repo": "orders", "from": "gh_laura", "message": "Docs", "files": {"README.md": "# Orders\n"}}}]}])
    assert [r.get("errors") for r in _fired(gh)] == [None]
    repo = gh.client.get_repo("acme/orders")
    assert repo.get_branch("main").commit.commit.message == "Docs"
    assert repo.get_contents("README.md").decoded_content == b"# Orders\n"


def test_issue__opened_with_labels_and_assignees(make_github: Callable[..., Any], github_actions: None) -> None:
    gh = _run(make_github, [{"at": 30, "do": [{"github.issue": {
        "repo": "orders", "from": "gh_ben", "title": "Exports slow", "body": "Since Monday",
        "labels": ["bug"], "assignees": ["github_agent"]}}]}])
    assert [r.get("errors") for r in _fired(gh)] == [None]
    issue = gh.client.get_repo("acme/orders").get_issue(3)
    assert (issue.title, issue.body, issue.user.login) == ("Exports slow", "Since Monday", "ben")
    assert [label.name for label in issue.labels] == ["bug"]
    assert [a.login for a in issue.assignees] == ["ancha-agent"]


def test_refused_action__its_error_is_recorded_on_the_event(make_github: Callable[..., Any],
                                                            github_actions: None) -> None:
    gh = _run(make_github, [{"at": 30, "do": [
        {"github.merge": {"pull": "fix_pull", "from": "gh_laura"}},
        {"github.merge": {"pull": "fix_pull", "from": "gh_laura"}},
    ]}])
    errors = _fired(gh)[0]["errors"]
    assert len(errors) == 1 and errors[0].startswith("github.merge: 405")


# --- bodies as a scene file writes them ------------------------------------------------------


def _catalog() -> Catalog:
    built = registry().catalog
    return Catalog(worlds=built.worlds, states=built.states, predicates=built.predicates,
                   actions={**built.actions, **{key: kind.body for key, kind in KINDS.items()}})


SCENE = """\
name: actions
world:
  github:
    users: [{ref: gh_laura, login: laura}]
    repos:
      - ref: orders
        name: acme/orders
        issues: [{ref: export_bug, title: Exports}]
        pulls: [{ref: fix_pull, title: Fix, head: main}]
world_rules:
  events:
    - at: 10m
      do:
{actions}
"""


def _load(tmp_path: Path, actions_yaml: str) -> Any:
    path = tmp_path / "scene.yaml"
    path.write_text(SCENE.replace("{actions}", actions_yaml))
    return load_scene(path, _catalog())


def test_scene_file__refs_resolved_to_bare_names(tmp_path: Path) -> None:
    scene = _load(tmp_path, """\
        - github.comment: {issue: $export_bug, from: $gh_laura, body: Any news?}
        - github.review: {pull: $pull.fix_pull, from: $gh_laura, event: REQUEST_CHANGES, body: Add a test}
        - github.merge: {pull: $fix_pull, from: $gh_laura, method: rebase}
        - github.commit: {repo: $orders, from: $gh_laura, message: Fix, files: {a.txt: x, b.txt: null}}
        - github.issue: {repo: $orders, from: $gh_laura, title: Slow, labels: [bug], assignees: [$gh_laura]}
""")
    assert scene.world_rules.events[0].do == [
        {"github.comment": {"issue": "export_bug", "from": "gh_laura", "body": "Any news?"}},
        {"github.review": {"pull": "fix_pull", "from": "gh_laura", "event": "REQUEST_CHANGES", "body": "Add a test"}},
        {"github.merge": {"pull": "fix_pull", "from": "gh_laura", "method": "rebase"}},
        {"github.commit": {"repo": "orders", "from": "gh_laura", "message": "Fix",
                           "files": {"a.txt": "x", "b.txt": None}}},
        {"github.issue": {"repo": "orders", "from": "gh_laura", "title": "Slow", "body": "", "labels": ["bug"],
                          "assignees": ["gh_laura"]}},
    ]


def test_scene_file__wrong_refs_and_bodies_are_reported(tmp_path: Path) -> None:
    with pytest.raises(SceneInvalid) as raised:
        _load(tmp_path, """\
        - github.comment: {issue: $orders, from: $gh_laura, body: Hi}
        - github.review: {pull: $export_bug, from: $gh_laura, event: APPROVE}
        - github.review: {pull: $fix_pull, from: $gh_laura, event: COMMENT}
        - github.merge: {pull: $fix_pull, from: $nobody}
        - github.commit: {repo: $orders, from: $gh_laura, message: Nothing, files: {}}
""")
    text = str(raised.value)
    assert "$orders is a repo, not a issue or pull" in text
    assert "$export_bug is a issue, not a pull" in text
    assert "a COMMENT review needs a body" in text
    assert "unknown ref $nobody" in text
    assert "a commit needs at least one file" in text


def test_judge_view__what_was_written_during_the_attempt(make_github: Callable[..., Any],
                                                         github_actions: None) -> None:
    gh = _run(make_github, [
        {"at": 60, "do": [{"github.comment": {"issue": "export_bug", "from": "gh_laura", "body": "Any news?"}},
                          {"github.issue": {"repo": "orders", "from": "gh_ben", "title": "Exports slow",
                                            "body": "Since Monday", "labels": ["bug"]}}]},
    ])
    view = judge_view(gh.state())
    assert view.splitlines() == [
        "GitHub issues and pull requests opened during the attempt (final state):",
        "- issue acme/orders#3 (open) by @ben: Exports slow [labels: bug]",
        "  Since Monday",
        "GitHub comments written during the attempt:",
        view.splitlines()[4],
    ]
    assert view.splitlines()[4].startswith('- on issue acme/orders#1 "CSV exports are gone" (open), at ')
    assert view.splitlines()[4].endswith(", @laura: Any news?")
    assert "Fix exports" not in view, "seeded pull requests are not what the agent did"


def test_judge_view__nothing_written() -> None:
    assert judge_view({"repos": []}) == ("GitHub issues and pull requests opened during the attempt (final state):\n"
                                         "(none)\nGitHub comments written during the attempt:\n(none)")
