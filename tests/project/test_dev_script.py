"""dev.py, the newcomer's two commands: setup says each step and its time (and what pip is
at on a long step), and pip's own output shows only when an install fails."""

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


class _Pip:
    """pip as dev.py's install steps start it: lines of output, then an exit code."""

    def __init__(self, returncode: int) -> None:
        self.returncode = returncode
        self.commands: list[list[str]] = []

    def __call__(self, cmd: list[str], **kwargs: Any) -> Any:
        assert kwargs.get("stdout") == subprocess.PIPE, "pip's output must be captured"
        self.commands.append(cmd)
        lines = ["Collecting ray>=2.9\n", "  Downloading ray-2.9.0.whl (60 MB)\n",
                 *["WARNING: Location 'x' is ignored\n"] * 50, "Installing collected packages: a, b, c\n"]
        code = self.returncode

        class Process:
            stdout = iter(lines)

            def wait(self) -> int:
                return code

        return Process()


def test_setup__prints_each_step_with_its_time_and_no_pip_warnings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    dev = _dev(tmp_path)
    pip = _Pip(0)
    monkeypatch.setattr(dev.subprocess, "Popen", pip)
    dev.setup()
    out = capsys.readouterr().out
    assert "WARNING" not in out
    lines = out.splitlines()
    assert lines[0].startswith("setting up ") and lines[-1].startswith("set up in ")
    assert "[1/4] virtual environment: already there" in lines
    for step in ("[2/4] pip ...", "[3/4] Ancha and what it needs to run ...",
                 "[4/4] the test tools (.[dev]: SDKs, Ray, Playwright, linters) ..."):
        assert step in lines
    assert sum("done in" in line for line in lines) == 3
    assert [cmd[-1] for cmd in pip.commands] == ["pip", ".", ".[dev]"]
    assert (tmp_path / "stamp").exists(), "a finished setup is remembered"


def test_setup__a_long_step_says_what_pip_is_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    dev = _dev(tmp_path)
    monkeypatch.setattr(dev.subprocess, "Popen", _Pip(0))
    monkeypatch.setattr(dev, "HEARTBEAT_S", 0.0)
    dev.setup()
    out = capsys.readouterr().out
    assert "collecting ray>=2.9" in out and "installing 3 packages" in out


def test_setup__an_installed_venv_is_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    dev = _dev(tmp_path)
    monkeypatch.setattr(dev.subprocess, "Popen", _Pip(0))
    dev.setup()
    capsys.readouterr()
    monkeypatch.setattr(dev.subprocess, "Popen", _Pip(1))
    dev.setup()
    assert capsys.readouterr().out == ""


def test_setup__a_failed_install_shows_pips_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    dev = _dev(tmp_path)
    monkeypatch.setattr(dev.subprocess, "Popen", _Pip(1))
    with pytest.raises(SystemExit):
        dev.setup()
    out = capsys.readouterr().out
    assert "WARNING: Location 'x' is ignored" in out and "FAILED" in out
    assert not (tmp_path / "stamp").exists()
