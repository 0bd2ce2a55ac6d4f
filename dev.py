#!/usr/bin/env python3
"""The project's two entry points, for a machine that has only python3.

    python3 dev.py examples   set up, then run the bundled examples through `ancha run`
    python3 dev.py test       set up, then run lint, types and the whole test suite

Both create (or reuse) the virtual environment in .venv and install the project
into it; the install is skipped when pyproject.toml has not changed since.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".ancha-installed"


def _run(*cmd: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env)
    if done.returncode != 0:
        sys.exit(done.returncode)


def _run_quiet(*cmd: str | Path, env: dict[str, str] | None = None, echo: bool = True) -> None:
    """Run a tool whose output only matters when it fails (import-linter prints a banner, pip
    warnings about this machine's configuration)."""
    if echo:
        print("+", " ".join(str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stdout.write(done.stdout + done.stderr)
        sys.exit(done.returncode)


def setup() -> None:
    """Create .venv and install the project with its dev extras, once per pyproject change."""
    if not (BIN / "python").exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=VENV.exists()).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("installing Ancha and its dependencies into .venv (a few minutes the first time)", flush=True)
    _run_quiet(BIN / "python", "-m", "pip", "install", "-q", "--upgrade", "pip", echo=False)
    _run_quiet(BIN / "python", "-m", "pip", "install", "-q", "-e", ".[dev]", echo=False)
    STAMP.write_text(wanted)


def examples() -> None:
    """The main job: every bundled example scene through `ancha run` on the embedded server."""
    _run(BIN / "ancha", "run", cwd=ROOT / "examples", env=_venv_env())


def test() -> None:
    """Lint, types, import layers, the docs site (mkdocs --strict), the Python suite (SQLite and PostgreSQL) and the JavaScript SDK's tests."""
    env = _venv_env()
    _run(BIN / "ruff", "check", "src", "tests", "bench", "examples", env=env)
    _run(BIN / "mypy", env=env)
    _run_quiet(BIN / "lint-imports", "--no-cache", env=env)
    docs_env = {**env, "NO_MKDOCS_2_WARNING": "1"}
    # not --quiet: it hides the warnings --strict fails on
    _run_quiet(BIN / "mkdocs", "build", "--strict", "--site-dir", ROOT / ".site", env=docs_env)
    js = ROOT / "sdk" / "js"
    if (js / "package.json").exists():
        if shutil.which("node") is None:
            sys.exit("node is needed for the JavaScript SDK's tests: install Node.js 20 or newer")
        lock, installed = js / "package-lock.json", js / "node_modules" / ".package-lock.json"
        if lock.exists() and (not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime):
            _run(shutil.which("npm") or "npm", "ci", "--no-audit", "--no-fund", cwd=js, env=env)
        _run("node", "--test", "test/", cwd=js, env={**env, "AGENTOS_BIN": str(BIN / "agentos")})
    _run(BIN / "python", "-m", "pytest", "-n", "2", "--dist", "loadfile", *sys.argv[2:], env=env)


def _venv_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(VENV)
    return env


def main() -> None:
    jobs = {"examples": examples, "test": test, "setup": lambda: None}
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 dev.py {{{'|'.join(jobs)}}} [pytest args]")
    setup()
    jobs[sys.argv[1]]()


if __name__ == "__main__":
    main()
