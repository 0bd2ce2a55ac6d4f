"""Fixtures for the console's tests: real runs of the bundled examples, a real ``ancha ui``
and headless Chromium driven by Playwright."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from console_helpers import (
    CHROMIUM,
    EXAMPLES,
    HASTY_AGENT,
    ConsoleServer,
    ExampleRuns,
    ancha,
    newest_run,
    start_console,
    stop_console,
)


@pytest.fixture(scope="session")
def example_runs(tmp_path_factory: pytest.TempPathFactory) -> ExampleRuns:
    project = tmp_path_factory.mktemp("console") / "project"
    project.mkdir()
    shutil.copytree(EXAMPLES / "scenes", project / "scenes")
    shutil.copytree(EXAMPLES / "agents", project / "agents")
    shutil.copy(EXAMPLES / "ancha.yaml", project / "ancha.yaml")
    (project / "agents" / "hasty.py").write_text(HASTY_AGENT)
    runs = project / ".ancha" / "runs"
    done = ancha("run", "-n", "1", "--no-progress", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    passing = newest_run(runs, set())
    (project / "hasty.yaml").write_text("agent:\n  command: python agents/hasty.py\n"
                                        "scenes: [scenes/beta-exports/scene.yaml]\ntrials: 1\n")
    done = ancha("run", "--config", "hasty.yaml", "--no-progress", cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr
    return ExampleRuns(project, runs, passing, newest_run(runs, {passing}))


@pytest.fixture(scope="session")
def console(example_runs: ExampleRuns) -> Iterator[ConsoleServer]:
    server = start_console(example_runs.runs)
    yield server
    stop_console(server)


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is open, and later tests on the same worker call asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()
