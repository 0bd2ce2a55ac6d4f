"""dev.py, the newcomer's two commands: setup is one line of progress, and pip's output
shows only when an install fails."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dev(tmp_path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").touch()
    dev.BIN, dev.STAMP = tmp_path / "bin", tmp_path / "stamp"
    return dev


def _pip(returncode: int) -> Any:
    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert kwargs.get("capture_output"), "pip's output must be captured"
        return subprocess.CompletedProcess(cmd, returncode, "WARNING: Location 'x' is ignored\n" * 50, "")
    return run


def test_setup__prints_one_line_and_no_pip_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    dev = _dev(tmp_path)
    monkeypatch.setattr(dev.subprocess, "run", _pip(0))
    dev.setup()
    assert capsys.readouterr().out.splitlines() == [
        "installing Ancha and its dependencies into .venv (a few minutes the first time)"]


def test_setup__a_failed_install_shows_pips_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    dev = _dev(tmp_path)
    monkeypatch.setattr(dev.subprocess, "run", _pip(1))
    with pytest.raises(SystemExit):
        dev.setup()
    assert "WARNING: Location 'x' is ignored" in capsys.readouterr().out
