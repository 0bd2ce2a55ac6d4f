"""The runs folder: ``latest`` written and read in one place, whatever form the pointer takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ancha.results.runs_folder import LATEST, RunsFolder


def _graded(runs: RunsFolder, run_id: str) -> None:
    trial = runs.new_run(run_id).trial("s", 1).create()
    trial.write_checks("s", 1, "passed", "ok", None, [])


def test_new_run__points_latest_at_it(tmp_path: Path) -> None:
    runs = RunsFolder.of_project(tmp_path)
    _graded(runs, "20260101T000000Z-aaaaaa")
    _graded(runs, "20260102T000000Z-bbbbbb")
    assert (tmp_path / ".ancha" / "runs" / LATEST).is_symlink()
    assert runs.latest_id() == "20260102T000000Z-bbbbbb"
    latest = runs.run(LATEST)
    assert latest is not None and latest.run_id == "20260102T000000Z-bbbbbb"
    assert runs.run_ids() == ["20260102T000000Z-bbbbbb", "20260101T000000Z-aaaaaa"]


def test_latest__a_file_holding_the_id_where_there_are_no_symlinks(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def no_symlinks(self: Path, target: str, target_is_directory: bool = False) -> None:
        raise OSError("symlinks are not supported here")

    monkeypatch.setattr(Path, "symlink_to", no_symlinks)
    runs = RunsFolder(tmp_path / "runs")
    _graded(runs, "r1")
    _graded(runs, "r2")
    assert (runs.path / LATEST).read_text() == "r2\n"
    latest = runs.run(LATEST)
    assert latest is not None and latest.path == runs.path / "r2"


def test_latest__the_pointer_wins_over_the_newest_id_and_without_one_the_newest_is_latest(tmp_path: Path) -> None:
    runs = RunsFolder(tmp_path / "runs")
    _graded(runs, "r2")
    _graded(runs, "r1")
    assert runs.run(LATEST).path.name == "r1"  # type: ignore[union-attr]
    (runs.path / LATEST).unlink()
    assert runs.run(LATEST).path.name == "r2"  # type: ignore[union-attr]


def test_run__names_outside_the_folder_find_nothing(tmp_path: Path) -> None:
    runs = RunsFolder(tmp_path / "runs")
    assert runs.run(LATEST) is None
    _graded(runs, "r1")
    for name in ("..", ".", "r1/s", "", "x\0"):
        assert runs.run(name) is None
    assert json.loads((runs.path / "r1" / "s" / "1" / "checks.json").read_text())["verdict"] == "passed"


def test_nearest__finds_the_runs_of_a_parent_project(tmp_path: Path) -> None:
    RunsFolder.of_project(tmp_path).new_run("r1")
    (tmp_path / "a" / "b").mkdir(parents=True)
    found = RunsFolder.nearest(tmp_path / "a" / "b")
    assert found is not None and found.path == tmp_path / ".ancha" / "runs"
