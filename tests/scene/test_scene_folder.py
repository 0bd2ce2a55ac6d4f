"""Nothing a scene names leaves its folder: the scene's name is a name, and every file it
references (Slack messages_file, GitHub files_dir, Datadog logs_file) is a regular file
inside the scene's folder, of a bounded size, with bounded JSON nesting."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.runner.test_run_cli import ancha
from tests.scene.scene_files import problems_of, scene_of, write_scene

from ancha.results.run_folder import RunFolder
from ancha.scene import SceneInvalid, load_scene
from ancha.scene.folder import SceneFileRefused, SceneFolder
from ancha.world.registry import catalog
from ancha.world.tools.github.git_seed import clear_cache, seeded_repo

MESSAGES = "world:\n  slack:\n    channels: [{{ ref: slack_general, name: general }}]\n    messages_file: {name}\n"
LOGS = "world:\n  datadog:\n    logs_file: {name}\n"
FILES = "world:\n  github:\n    repos: [{{ ref: r, name: acme/api, files_dir: {name} }}]\n"
FIELDS = {"messages_file": (MESSAGES, "world.slack.messages_file"),
          "logs_file": (LOGS, "world.datadog.logs_file")}


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/b", "..", ".hidden", "x" * 101, "a b"])
def test_scene_name__a_path_is_refused(tmp_path: Path, name: str) -> None:
    problems = problems_of(tmp_path, f"name: {name!r}\ntask: hi\n")
    assert [p.path for p in problems] == ["name"]
    assert "not a path" in problems[0].message


def test_scene_name__letters_digits_dots_dashes_are_a_name(tmp_path: Path) -> None:
    assert scene_of(tmp_path, "name: refund-request_2.b\ntask: hi\n").name == "refund-request_2.b"


def test_run__path_scene_name_exits_2_and_writes_nothing_outside(tmp_path: Path) -> None:
    (tmp_path / "p" / "scenes" / "a").mkdir(parents=True)
    (tmp_path / "p" / "scenes" / "a" / "scene.yaml").write_text(
        "name: ../../../escaped\ntask: hi\nchecks: [{ id: c, trace: { called: GET /x } }]\n")
    (tmp_path / "p" / "ancha.yaml").write_text("agent:\n  command: \"true\"\ntrials: 1\n")
    result = ancha("run", cwd=tmp_path / "p")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "not a path" in result.stderr
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "p" / "escaped").exists()


def test_run_folder__never_joins_a_path_as_a_scene(tmp_path: Path) -> None:
    for scene in ("../x", "/abs", "..", ""):
        with pytest.raises(ValueError):
            RunFolder(tmp_path).trial(scene, 1)


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink_out"])
def test_referenced_file__outside_the_folder_is_refused(tmp_path: Path, field: str, how: str) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"text": "the secret"}\n')
    folder = tmp_path / "scenes" / "demo"
    folder.mkdir(parents=True)
    name = {"absolute": str(secret), "dotdot": "../../secret.jsonl", "symlink_out": "link.jsonl"}[how]
    if how == "symlink_out":
        (folder / "link.jsonl").symlink_to(secret)
    template, path = FIELDS[field]
    problems = problems_of(tmp_path / "scenes", template.format(name=name))
    assert [p.path for p in problems] == [path]
    assert "outside the scene's folder" in problems[0].message or "absolute" in problems[0].message


@pytest.mark.parametrize("field", list(FIELDS))
def test_referenced_file__dev_zero_and_fifo_are_refused(tmp_path: Path, field: str) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "zero.jsonl").symlink_to("/dev/zero")  # inside by name, a device by target: outside
    os.mkfifo(folder / "fifo.jsonl")  # opening it to read would block forever
    template, path = FIELDS[field]
    for name in ("zero.jsonl", "fifo.jsonl"):
        problems = problems_of(tmp_path, template.format(name=name))
        assert [p.path for p in problems] == [path], name
        assert "outside" in problems[0].message or "not a regular file" in problems[0].message


@pytest.mark.parametrize("field", list(FIELDS))
def test_referenced_file__a_deep_json_line_is_a_problem_on_its_line(tmp_path: Path, field: str) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "deep.jsonl").write_text("\n" + "[" * 10_000 + "]" * 10_000 + "\n" + '{"a":' * 40 + "1" + "}" * 40 + "\n")
    template, _ = FIELDS[field]
    problems = problems_of(tmp_path, template.format(name="deep.jsonl"))
    assert [(p.line, p.message) for p in problems] == [(2, "nested more than 32 deep"), (3, "nested more than 32 deep")]


def test_referenced_file__size_is_capped(tmp_path: Path) -> None:
    (tmp_path / "big.jsonl").write_bytes(b"x" * 2048)
    with pytest.raises(SceneFileRefused, match="larger than 1,024 bytes"):
        SceneFolder(tmp_path).read("big.jsonl", limit=1024)


def test_files_dir__outside_paths_and_links_out_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow").write_text("secret")
    folder = tmp_path / "scenes" / "demo"
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / "README.md").write_text("hi")
    for name in (str(outside), "../../outside"):
        problems = problems_of(tmp_path / "scenes", FILES.format(name=name))
        assert [p.path for p in problems] == ["world.github.repos[0].files_dir"], name
    (folder / "repo" / "shadow").symlink_to(outside / "shadow")
    problems = problems_of(tmp_path / "scenes", FILES.format(name="repo"))
    assert [p.path for p in problems] == ["world.github.repos[0].files_dir"]
    assert "outside the scene's folder" in problems[0].message


def test_files_dir__read_once_by_the_loader_the_world_never_opens_it(tmp_path: Path) -> None:
    folder = write_scene(tmp_path, FILES.format(name="repo")).parent
    (folder / "repo").mkdir()
    (folder / "repo" / "README.md").write_text("hi")
    (folder / "repo" / "inner").symlink_to(folder / "repo" / "README.md")  # a link that stays inside is fine
    repo = scene_of(tmp_path, FILES.format(name="repo")).world["github"]["repos"][0]
    assert repo["files"] == {"README.md": "hi", "inner": "hi"}
    assert repo.get("files_dir") is None


def test_github_seed__the_world_never_opens_a_files_dir_a_seed_names(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "shadow").write_text("the secret")
    clear_cache()
    repo = seeded_repo({"name": "acme/x", "files_dir": str(tmp_path / "outside")}, datetime(2026, 1, 5, tzinfo=UTC))
    assert not any(b"the secret" in obj.as_raw_string() for obj in repo.objects.values())


def test_scene_file__a_fifo_or_device_is_refused_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "scene.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    for name in ("scene.yaml", "zero.yaml"):
        with pytest.raises(SceneInvalid) as info:
            load_scene(tmp_path / name, catalog())
        assert [p.message for p in info.value.problems] == [f"{(tmp_path / name).resolve()} is not a regular file"]
