"""Fixtures for the hosted console's tests: an AgentOS server on a fresh PostgreSQL database
with a blob folder, keys issued by workspace and role, workspaces with a run uploaded, an
Ancha server for console tasks, a real run of a bundled example, and headless Chromium
driven by Playwright.

Each test session (each xdist worker) gets its own database (agentos_console_<random>,
dropped afterwards) and tests make their own workspaces, so they never see each other's
runs. Without a reachable PostgreSQL the tests are skipped, or fail when CI=true.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from console_task_helpers import CHROMIUM, ServerThread, Workspace, run_folder
from playwright.sync_api import Browser, Page, expect, sync_playwright
from tests.agentos.servers import pg_databases

from agentos.api.app import create_app
from agentos.db import Database
from agentos.keys import issue_key
from ancha.results.upload import RunSource, push_run
from ancha.server.embedded import EmbeddedServer
from ancha.server.keys import new_key

# Conditions are waited on for up to 15 s: CI machines run several test workers on few CPUs.
expect.set_options(timeout=15_000)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EXAMPLE_SCENE = "beta-exports"
"""The bundled example the real run runs: people in their own lanes, checks that ask about them."""


@pytest.fixture(scope="session")
def pg_database() -> Iterator[Callable[[], str]]:
    """A factory of fresh PostgreSQL databases (SQLAlchemy URLs), all dropped at the end."""
    yield from pg_databases("agentos_console")


@dataclass
class AgentOS:
    """The running server: ``url`` (the console is at ``url + "/ui"``), its database and blob folder."""

    url: str
    database_url: str
    blob_folder: Path
    db: Database
    """The server's database, for issuing keys as ``agentos keys create`` does."""


@pytest.fixture(scope="session")
def agentos(pg_database: Callable[[], str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentOS]:
    database_url = pg_database()
    blobs = tmp_path_factory.mktemp("blobs")
    with ServerThread(create_app(database_url, blob_url=f"file://{blobs}")) as server:
        db = Database(database_url, run_migrations=False)  # the server migrated it
        yield AgentOS(server.url, database_url, blobs, db)
        db.dispose()


class Workspaces:
    """New workspaces, each with a name no other test uses, and keys of them by role."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def new(self, label: str = "team") -> str:
        return f"{label}-{secrets.token_hex(4)}"

    def key(self, workspace: str, role: str = "viewer") -> str:
        """A new key of ``workspace`` (created if new) with ``role``: viewer, ci or admin."""
        return issue_key(self.db, workspace, role)


@pytest.fixture(scope="session")
def workspaces(agentos: AgentOS) -> Workspaces:
    return Workspaces(agentos.db)


@pytest.fixture
def new_workspace(agentos: AgentOS, workspaces: Workspaces) -> Callable[[], Workspace]:
    """Fresh workspaces with a viewer, a ci and an admin key each."""

    def make() -> Workspace:
        name = workspaces.new()
        return Workspace(name, agentos.url, {role: workspaces.key(name, role) for role in ("viewer", "ci", "admin")})

    return make


@pytest.fixture
def uploaded(new_workspace: Callable[[], Workspace], tmp_path: Path) -> Workspace:
    """A fresh workspace with one run of the bundled export-question scene pushed to it."""
    workspace = new_workspace()
    push_run(run_folder(tmp_path), workspace.url, workspace.keys["ci"], RunSource(commit="c" * 40, branch="main"))
    return workspace


@pytest.fixture(scope="session")
def ancha() -> Iterator[EmbeddedServer]:
    """An Ancha server with a key, for the console's tasks to open worlds on."""
    with EmbeddedServer(key=new_key()) as server:
        yield server


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a real ``ancha run`` of a bundled example scene (one trial), as a user's
    project has it under ``.ancha/runs``."""
    project = tmp_path_factory.mktemp("example") / "project"
    shutil.copytree(EXAMPLES / "scenes" / EXAMPLE_SCENE, project / "scenes" / EXAMPLE_SCENE)
    shutil.copytree(EXAMPLES / "agents", project / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "ancha.yaml").write_text("agent:\n  command: python agents/acme_bot.py\n"
                                        f"scenes: [scenes/{EXAMPLE_SCENE}/scene.yaml]\ntrials: 1\n")
    # This interpreter's folder first on PATH, so `python agents/...` finds the SDKs.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "ancha.cli", "run", "--no-progress"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    runs = project / ".ancha" / "runs"
    found = [p for p in runs.iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(found) == 1, f"expected one run in {runs}: {found}"
    return found[0]


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is open, and later tests on the same worker call asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (.ci/run installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[], Page]]:
    """Pages, each in a browser context of its own (its own cookies: a separate user)."""
    contexts = []

    def make() -> Page:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page: Callable[[], Page]) -> Page:
    """A page in a browser context of its own, signed out."""
    return new_page()


@pytest.fixture
def signed_in(agentos: AgentOS, new_page: Callable[[], Page]) -> Callable[[str], Page]:
    """A page signed in to the console with a key, as a user does: the sign-in form, then the runs page."""

    def sign_in(key: str) -> Page:
        page = new_page()
        page.goto(agentos.url + "/ui/sign-in")
        page.fill("#key", key)
        page.click("#sign-in")
        page.wait_for_url(agentos.url + "/ui/")
        return page

    return sign_in
