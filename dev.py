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
import time
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


HEARTBEAT_S = 10.0
"""How often a long install step says what it is doing when the output is not a terminal."""


def _step(number: int, total: int, title: str, *cmd: str | Path) -> None:
    """One install step: its title, then (on a terminal, as it goes; elsewhere every
    HEARTBEAT_S) the package pip is at, then its time. Its whole output only if it fails."""
    started = time.monotonic()
    label = f"[{number}/{total}] {title}"
    tty = sys.stdout.isatty()
    print(label + (" ..." if not tty else ""), end="" if tty else "\n", flush=True)
    process = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env={**os.environ, "PIP_PROGRESS_BAR": "off"})
    assert process.stdout is not None
    said_at, output = started, []
    for line in process.stdout:
        output.append(line)
        doing = _pip_activity(line)
        now = time.monotonic()
        if doing and tty:
            print(f"\r\033[K{label}: {doing} ({now - started:.0f} s)", end="", flush=True)
        elif doing and now - said_at >= HEARTBEAT_S:
            print(f"      {doing} ({now - started:.0f} s)", flush=True)
            said_at = now
    code = process.wait()
    took = time.monotonic() - started
    if tty:
        print(f"\r\033[K{label}", end="")
    print(f"{'' if tty else '     '} done in {took:.1f} s" if code == 0 else " FAILED", flush=True)
    if code != 0:
        sys.stdout.write("".join(output))
        sys.exit(code)


def _pip_activity(line: str) -> str | None:
    """What a line of pip's output says it is doing, shortly: ``collecting ray``, ``installing 143 packages``."""
    words = line.split()
    if len(words) >= 2 and words[0] in ("Collecting", "Downloading", "Building"):
        return f"{words[0].lower()} {words[1]}"
    if line.startswith("Installing collected packages:"):
        return f"installing {line.count(',') + 1} packages"
    return None


def setup() -> None:
    """Create .venv and install the project with its dev extras, once per pyproject change."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if (BIN / "python").exists() and STAMP.exists() and STAMP.read_text() == wanted:
        return
    started = time.monotonic()
    print(f"setting up {VENV} (Ancha, its dependencies and the test tools; a few minutes the first time)",
          flush=True)
    if not (BIN / "python").exists():
        made = time.monotonic()
        venv.EnvBuilder(with_pip=True, clear=VENV.exists()).create(VENV)
        print(f"[1/4] virtual environment: done in {time.monotonic() - made:.1f} s", flush=True)
    else:
        print("[1/4] virtual environment: already there", flush=True)
    pip = (BIN / "python", "-m", "pip", "install", "--disable-pip-version-check")
    _step(2, 4, "pip", *pip, "--upgrade", "pip")
    _step(3, 4, "Ancha and what it needs to run", *pip, "-e", ".")
    _step(4, 4, "the test tools (.[dev]: SDKs, Ray, Playwright, linters)", *pip, "-e", ".[dev]")
    STAMP.write_text(wanted)
    print(f"set up in {time.monotonic() - started:.0f} s", flush=True)


def examples() -> None:
    """The main job: every bundled example scene through `ancha run` on the embedded server."""
    _run(BIN / "ancha", "run", cwd=ROOT / "examples", env=_venv_env())


def test() -> None:
    """Lint, types, import layers, the docs site (mkdocs --strict), the Python suite (SQLite and PostgreSQL) and the JavaScript SDK's tests."""
    env = _venv_env()
    _run(BIN / "ruff", "check", "src", "tests", "bench", "examples", env=env)
    _run(BIN / "mypy", env=env)
    _run_quiet(BIN / "lint-imports", "--no-cache", env=env)
    vendor = _vendor_descriptions()
    if vendor is not None:  # the packaged vendor data is what regeneration would write from them
        _run_quiet(BIN / "python", "-m", "ancha.vendor", "regenerate", "--check", "--from", vendor, env=env)
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


def _vendor_descriptions() -> Path | None:
    """The vendors' descriptions, where this checkout has them (``$ANCHA_VENDOR_DIR``, else
    ``../shared/vendor``); a stranger's clone has none and needs none."""
    configured = os.environ.get("ANCHA_VENDOR_DIR")
    folder = Path(configured) if configured else ROOT.parent / "shared" / "vendor"
    return folder if folder.is_dir() else None


def _venv_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANCHA_VENDOR_DIR"}  # regeneration's input, never the product's
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
