"""The npm packages the real-hostname tests run: Octokit and GitHub's MCP server.

They are installed once per machine from the npm registry into a cache folder named after
their pinned versions (``~/.cache/ancha-tests/npm-<hash>``), under a file lock so that two
pytest workers never install into the same folder at once. A test that needs them calls
``node_packages()``: it answers the folder (its ``node_modules`` holds the packages), or
skips the test when npm or the registry is not there, and in CI (``CI=true``) fails it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock

PINNED = {
    "@octokit/rest": "22.0.1",
    "@modelcontextprotocol/server-github": "2025.4.8",
}
"""Exact versions: the cache folder's name is their hash, so a new pin installs afresh."""
INSTALL_TIMEOUT_S = 600.0
MARKER = ".ancha-installed"
"""Written last, after npm succeeded: a folder without it is a half-done install."""


def cache_root() -> Path:
    """Where the test suite keeps what it downloads (``ANCHA_TEST_CACHE`` overrides it)."""
    configured = os.environ.get("ANCHA_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ancha-tests"


def packages_folder() -> Path:
    """The folder the pinned packages are (or will be) installed into."""
    key = hashlib.sha256(json.dumps(PINNED, sort_keys=True).encode()).hexdigest()[:12]
    return cache_root() / f"npm-{key}"


def node_packages() -> Path:
    """The folder whose ``node_modules`` holds the pinned packages, installed the first time."""
    folder = packages_folder()
    if (folder / MARKER).is_file():
        return folder
    problem = _install(folder)
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs the real-hostname tests with npm packages: {problem}")
        pytest.skip(problem)
    return folder


def node_modules() -> Path:
    """``node_packages()/node_modules``: what NODE_PATH names for ``require('@octokit/rest')``."""
    return node_packages() / "node_modules"


def mcp_github_server() -> Path:
    """The GitHub MCP server's entry point (run it as ``node <path>``)."""
    return node_modules() / "@modelcontextprotocol" / "server-github" / "dist" / "index.js"


def _install(folder: Path) -> str | None:
    """Install the pinned packages into ``folder``; why that failed, or None."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return "node and npm are not installed (apt-get install nodejs npm)"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock", timeout=INSTALL_TIMEOUT_S):
        if (folder / MARKER).is_file():  # another worker installed it while this one waited
            return None
        folder.mkdir(exist_ok=True)
        # npm install --prefix needs a package.json there, or it climbs to a parent's.
        (folder / "package.json").write_text(json.dumps({"name": "ancha-test-clients", "private": True}))
        specs = [f"{name}@{version}" for name, version in PINNED.items()]
        try:
            done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--save-exact", "--prefix",
                                   str(folder), *specs], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"npm install {' '.join(specs)} took over {INSTALL_TIMEOUT_S:.0f} s"
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[-5:]
            return f"npm install {' '.join(specs)} failed: " + " / ".join(said)
        (folder / MARKER).write_text(json.dumps(PINNED))
    return None
