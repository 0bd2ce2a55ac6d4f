"""Which project files an isolated agent gets (``agent.execution.files``): exclusions and limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ancha.runner.agents import workspace_files
from ancha.runner.agents.workspace_files import WorkspaceFilesInvalid, ancha_paths, select_files


def write(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(path)


def names(root: Path, files: list[Path]) -> list[str]:
    return [f.relative_to(root).as_posix() for f in files]


def test_select_files__leaves_out_dotfiles_vcs_dependencies_credentials_and_anchas_own(tmp_path: Path) -> None:
    write(tmp_path, "agent.py", "src/tool.py", "README.md", ".env", ".env.local", ".git/config", ".venv/bin/python",
          "node_modules/x/index.js", "src/__pycache__/tool.cpython-311.pyc", "venv/lib/site.py", "id_rsa",
          "id_ed25519.pub", "certs/server.pem", "deploy.key", "credentials.json", "src/.npmrc", "ancha.yaml",
          "ancha/notes.md", "scenes/hello/scene.yaml", "scenes/hello/messages.json", "evals/one.yaml")
    excluded = ancha_paths(tmp_path, tmp_path / "ancha.yaml", [tmp_path / "evals" / "one.yaml"],
                           ["scenes/**/scene.yaml"])
    assert names(tmp_path, select_files(tmp_path, ["."], excluded)) == ["README.md", "agent.py", "src/tool.py"]


def test_select_files__takes_named_paths_and_globs_once_each(tmp_path: Path) -> None:
    write(tmp_path, "agent.mjs", "src/a.js", "src/b.js", "docs/guide.md")
    files = select_files(tmp_path, ["agent.mjs", "src", "src/*.js"])
    assert names(tmp_path, files) == ["agent.mjs", "src/a.js", "src/b.js"]


def test_select_files__a_named_dotfile_is_still_left_out(tmp_path: Path) -> None:
    write(tmp_path, ".env", "agent.py")
    assert names(tmp_path, select_files(tmp_path, [".env", "agent.py"])) == ["agent.py"]


def test_select_files__links_out_of_the_project_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.txt")
    root = tmp_path / "project"
    write(root, "agent.py")
    os.symlink(outside / "secret.txt", root / "secret.txt")
    os.symlink(outside, root / "linked")
    assert names(root, select_files(root, ["."])) == ["agent.py"]


def test_select_files__a_missing_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceFilesInvalid) as caught:
        select_files(tmp_path, ["agent.mjs"])
    assert caught.value.exit_code == 2
    assert caught.value.render() == (
        f"error[CONFIG_INVALID]: agent.execution.files: agent.mjs is not in the project folder {tmp_path.resolve()}\n"
        "hint: fix the path (relative to the project folder) or remove it")


def test_select_files__a_path_outside_the_project_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root, "agent.py")
    write(tmp_path, "other/x.py")
    with pytest.raises(WorkspaceFilesInvalid, match=r"\.\./other is outside the project folder"):
        select_files(root, ["../other"])


def test_select_files__past_the_file_limit_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace_files, "MAX_FILES", 3)
    write(tmp_path, "a.py", "b.py", "c.py", "d.py")
    with pytest.raises(WorkspaceFilesInvalid, match=r"more than 3 files\nhint: list only what the agent needs"):
        select_files(tmp_path, ["."])


def test_select_files__past_the_size_limit_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workspace_files, "MAX_BYTES", 1024 * 1024)
    (tmp_path / "big.bin").write_bytes(b"\0" * (1024 * 1024 + 1))
    with pytest.raises(WorkspaceFilesInvalid, match=r"more than 1 MiB"):
        select_files(tmp_path, ["."])


def test_ancha_paths__scene_files_named_outright_and_their_folders_are_left_out(tmp_path: Path) -> None:
    write(tmp_path, "agent.py", "scenes/a/scene.yaml", "scenes/b/scene.yaml", "evals/c.yaml", "top.yaml")
    excluded = ancha_paths(tmp_path, None, [], ["scenes/a/scene.yaml", "evals/c.yaml", "top.yaml"])
    assert names(tmp_path, select_files(tmp_path, ["."], excluded)) == ["agent.py"]
