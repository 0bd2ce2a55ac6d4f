"""Every Python example on the tool pages (docs/tools/*.md) runs, with the official SDKs this
project installs, against a real Ancha server whose world is the page's own seed.

Each page's first whole ``scene.yaml`` block is its world: the scene is loaded by the real
loader and posted to an embedded server (``POST /envs``), and each example runs as an agent
runs, in a process of its own with the variables an agent is given (``ANCHA_<TOOL>_URL``,
its tokens, ``ANCHA_CONTEXT_URL``...). A script must exit 0, and every call it made to the
tool must have worked (no error answer, no coverage gap).

A block titled after an agent program (```python title="bolt_app.py"```) is an agent that
keeps running: it is started, driven as its page says it behaves (a person mentions the
bot; it answers in the thread), then stopped. Tool pages hold only YAML (checked by
``test_ancha_docs_snippets.py``) and Python; a block in another language fails the first test
here until it has a runner.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from doc_snippets import DOCS, Block, fenced_blocks

from ancha.runner.agents.environment import ancha_variables
from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

TOOL_PAGES = sorted((DOCS / "tools").glob("*.md"))
RUNNERS = ("python",)
"""Languages this test runs; YAML blocks are the other test's."""
DEADLINE_S = 60.0

_TITLE = re.compile(r'title="([^"]*)"')


def title(block: Block) -> str:
    found = _TITLE.search(block.info)
    return found.group(1) if found else ""


def page_blocks(*langs: str) -> list[Block]:
    return [b for page in TOOL_PAGES for b in fenced_blocks(page) if b.lang in langs]


def wait_for(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


# --- the world of a page --------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as running:
        yield running


def page_scene(page: Path, folder: Path) -> dict[str, Any]:
    """The page's first whole scene.yaml, through the real loader, as ``POST /envs`` takes it."""
    seeds = [b for b in fenced_blocks(page) if title(b) == "scene.yaml"]
    assert seeds, f"{page.name}: a tool page shows a whole scene.yaml seeding its tool"
    path = folder / "scenes" / "example" / "scene.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(seeds[0].text, encoding="utf-8")
    scene: dict[str, Any] = load_scene(path, catalog()).model_dump(mode="json", by_alias=True)
    return scene


class Trial:
    """One environment on the server, seeded with a page's world, and what an agent of it gets."""

    def __init__(self, server: EmbeddedServer, page: Path, folder: Path, agent: dict[str, Any]) -> None:
        self.server = server
        self.folder = folder
        body = {"scene": page_scene(page, folder), "trial": 1, "agent": agent}
        answer = httpx.post(f"{server.url}/envs", json=body, timeout=30)
        assert answer.status_code == 201, answer.text
        self.context: dict[str, Any] = answer.json()
        self.env_id: str = self.context["env_id"]

    def variables(self) -> dict[str, str]:
        """The environment of an agent process: this one's, without Ancha's own, plus the trial's."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("ANCHA_")}
        state = self.folder / "state"
        state.mkdir(exist_ok=True)
        return {**base, **ancha_variables(self.context, str(state))}

    def trace(self) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.server.url}/envs/{self.env_id}/trace", timeout=30)
        assert answer.status_code == 200, answer.text
        return [json.loads(line) for line in answer.text.splitlines() if line.strip()]

    def failed_calls(self) -> list[str]:
        return [f"{e['method']} {e['path']} -> {e['status']}" + (" (coverage gap)" if e.get("coverage_gap") else "")
                for e in self.trace() if e["actor"] == "agent" and (not e["worked"] or e.get("coverage_gap"))]

    def close(self) -> None:
        httpx.delete(f"{self.server.url}/envs/{self.env_id}", timeout=30)


@pytest.fixture
def trial(server: EmbeddedServer, tmp_path: Path) -> Iterator[Callable[..., Trial]]:
    made: list[Trial] = []

    def make(page: Path, agent: dict[str, Any] | None = None) -> Trial:
        made.append(Trial(server, page, tmp_path, agent or {}))
        return made[-1]

    yield make
    for one in made:
        one.close()


# --- agents that keep running -----------------------------------------------------------------


def drive_bolt_app(server: EmbeddedServer, trial: Trial, process: subprocess.Popen[str]) -> None:
    """slack.md's Bolt app, in Socket Mode: a person mentions the bot, and it answers "On it."
    in the thread of the mention."""
    from slack_sdk import WebClient

    from ancha.world.tools.slack.replica import SlackReplica

    env = server.app.registry.envs[trial.env_id]
    replica = env.tools["slack"]
    assert isinstance(replica, SlackReplica)
    wait_for(lambda: replica.socket_mode.live or process.poll() is not None, "the app's Socket Mode connection")
    assert process.poll() is None, "the app exited before it connected"
    slack = trial.context["tools"]["slack"]
    laura = WebClient(token=replica.issue_user_token(env.refs["slack_laura"].id, "person:slack_laura"),
                      base_url=slack["url"] + "/api/")
    support = env.refs["slack_support"].id
    asked = laura.chat_postMessage(channel=support, text=f"<@{replica.bot.id}> are exports down?")
    bot = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")

    def answer() -> list[dict[str, Any]]:
        replies = bot.conversations_replies(channel=support, ts=asked["ts"])["messages"]
        return [m for m in replies if m.get("user") == replica.bot.id and m.get("text") == "On it."]

    wait_for(answer, "the app's answer in the thread of the mention")


AGENTS: dict[str, tuple[dict[str, Any], Callable[[EmbeddedServer, Trial, subprocess.Popen[str]], None]]] = {
    "bolt_app.py": ({"slack_transport": "socket"}, drive_bolt_app),
}
"""Agent programs shown on a tool page, by the title of their block: the ``agent`` part of
``POST /envs`` they need, and how the test drives them."""


# --- the tests --------------------------------------------------------------------------------


def test_tool_docs__every_code_block_is_yaml_or_runs_here() -> None:
    unrun = [f"{b.where} ({b.lang or 'no language'})" for b in page_blocks()
             if b.lang not in ("yaml", *RUNNERS)]
    assert not unrun, "tool page blocks no test runs (add a runner to this test): " + ", ".join(unrun)


SCRIPTS = [b for b in page_blocks(*RUNNERS) if title(b) not in AGENTS]
AGENT_BLOCKS = [b for b in page_blocks(*RUNNERS) if title(b) in AGENTS]


def test_tool_docs__the_slack_page_shows_its_bolt_app_as_an_agent() -> None:
    """Guards the split above: the Bolt app never exits, so it is driven, not run to its end."""
    assert [b.page.name for b in AGENT_BLOCKS] == ["slack.md"]


@pytest.mark.parametrize("block", SCRIPTS, ids=[b.where for b in SCRIPTS])
def test_tool_docs__every_python_example_runs_against_the_pages_world(
        block: Block, trial: Callable[..., Trial], tmp_path: Path) -> None:
    world = trial(block.page)
    script = tmp_path / "example.py"
    script.write_text(block.text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=world.variables(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert world.failed_calls() == [], f"{block.where}: calls that did not work"


@pytest.mark.parametrize("block", AGENT_BLOCKS, ids=[b.where for b in AGENT_BLOCKS])
def test_tool_docs__every_agent_example_does_what_its_page_says(
        block: Block, server: EmbeddedServer, trial: Callable[..., Trial], tmp_path: Path) -> None:
    agent, drive = AGENTS[title(block)]
    world = trial(block.page, agent)
    script = tmp_path / title(block)
    script.write_text(block.text, encoding="utf-8")
    log = tmp_path / "agent.log"
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=world.variables(),
                                   stdout=output, stderr=subprocess.STDOUT, text=True)
    try:
        drive(server, world, process)
    except BaseException:
        print(log.read_text())
        raise
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
    assert world.failed_calls() == [], f"{block.where}: calls that did not work"
