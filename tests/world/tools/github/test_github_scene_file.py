"""world.github in a scene file: refs, users by ref or login, times, files_dir, and every
problem reported at once with its line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from ancha.scene import SceneInvalid, load_scene
from ancha.world.registry import catalog
from ancha.world.tools.github.scene_file import GitHubFile

GOOD = """\
name: seeded
clock: { start: 2026-03-02T09:00:00Z }
world:
  github:
    agent: { ref: bot, login: acme-bot }
    users: [{ ref: gh_laura, login: laura }]
    orgs: [{ login: acme, members: [$gh_laura, carol] }]
    repos:
      - ref: orders
        name: acme/orders
        files_dir: repo
        files: { README.md: "override\\n" }
        permissions: { $bot: write, carol: read }
        commits: [{ ref: good, message: Good, author: $gh_laura, at: -2d, files: { a.txt: "a\\n" } }]
        branches: { fix: { from: $good } }
        production: $good
        issues: [{ ref: bug, title: Bug, author: carol, assignees: [$gh_laura], at: -1h }]
people:
  laura: { accounts: { github: $gh_laura } }
"""


def _load(tmp_path: Path, text: str) -> GitHubFile:
    (tmp_path / "scene.yaml").write_text(text)
    scene = load_scene(tmp_path / "scene.yaml", catalog())
    seed = scene.seed("github", GitHubFile)
    assert seed is not None
    return seed


def test_github_seed__refs_resolved_and_files_dir_read(tmp_path: Path) -> None:
    (tmp_path / "repo" / "docs").mkdir(parents=True)
    (tmp_path / "repo" / "docs" / "runbook.md").write_text("Restart.\n")
    (tmp_path / "repo" / "README.md").write_text("from the folder\n")
    seed = _load(tmp_path, GOOD)
    repo = seed.repos[0]
    assert repo.files == {"docs/runbook.md": "Restart.\n", "README.md": "override\n"}
    assert repo.permissions == {"bot": "write", "carol": "read"}
    assert repo.branches["fix"].from_ == "good" and repo.production == "good"
    assert repo.issues[0].author == "carol" and repo.issues[0].assignees == ["gh_laura"]
    assert repo.commits[0].at is not None and repo.commits[0].at.isoformat() == "2026-02-28T09:00:00+00:00"
    assert seed.orgs[0].members == ["gh_laura", "carol"]


def test_github_seed__files_dir_changes_the_scene_hash(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.md").write_text("one\n")
    (tmp_path / "scene.yaml").write_text(GOOD)
    first = load_scene(tmp_path / "scene.yaml", catalog()).source_hash
    (tmp_path / "repo" / "a.md").write_text("two\n")
    assert load_scene(tmp_path / "scene.yaml", catalog()).source_hash != first


def test_github_seed__every_problem_at_once(tmp_path: Path) -> None:
    text = """\
name: bad
world:
  github:
    users: [{ ref: gh_a, login: a, person: x }]
    repos:
      - { ref: r1, name: noslash }
      - { ref: r2, name: acme/x, permissions: { $gh_nobody: write }, production: $nope, files_dir: nowhere }
      - { ref: r1, name: acme/y, issues: [{ title: t, author: $r2 }] }
people:
  p: { accounts: { github: $r2 } }
"""
    (tmp_path / "scene.yaml").write_text(text)
    with pytest.raises(SceneInvalid) as caught:
        load_scene(tmp_path / "scene.yaml", catalog())
    found = [(p.line, p.path, p.message) for p in caught.value.problems]
    assert found == [
        (4, "world.github.users[0].person", "not supported yet"),
        (6, "world.github.repos[0].name", "expected a repository name such as acme/orders, got 'noslash'"),
        (7, "world.github.repos[1].permissions.$gh_nobody", "unknown ref $gh_nobody"),
        (7, "world.github.repos[1].production", "unknown ref $nope"),
        (7, "world.github.repos[1].files_dir", f"no such folder: {tmp_path / 'nowhere'}"),
        (8, "world.github.repos[2].ref", "duplicate ref r1"),
        (8, "world.github.repos[2].issues[0].author", "$r2 is a repo, not a user"),
        (10, "people.p.accounts.github", "$r2 is a repo, not a user"),
    ]


def test_github_seed__branch_from_a_commit_ref_and_production_in_a_live_world(
        tmp_path: Path, make_env: Callable[..., dict[str, Any]]) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.md").write_text("one\n")
    (tmp_path / "scene.yaml").write_text(GOOD)
    context = make_env(load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True))
    github = context["tools"]["github"]
    headers = {"Authorization": f"token {github['token']}"}
    good = httpx.get(f"{github['url']}/repos/acme/orders/commits", params={"path": "a.txt"}, headers=headers).json()
    fix = httpx.get(f"{github['url']}/repos/acme/orders/branches/fix", headers=headers).json()
    assert fix["commit"]["sha"] == good[0]["sha"]
