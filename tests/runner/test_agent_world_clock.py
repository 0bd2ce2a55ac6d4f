"""The agent's clock follows the world's: a real run, real agents (Python and Node) under
libfaketime reading their own clock before and after the world's clock jumps, and a command
agent's feed wait with a duration that wakes it up in simulated time."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import sys
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from ancha.config.loading import load_config
from ancha.runner.agents.world_clock import MISSING, find_library
from ancha.runner.run import run_scenes
from ancha.scene.loading import load_scenes
from ancha.world.registry import catalog, config_catalog

START = "2020-01-05T09:00:00Z"
START_S = datetime.fromisoformat(START).timestamp()

SCENE = """
name: hello
task: Say hello in #general.
clock: {{ start: "{start}", limit: {limit} }}
world:
  slack:
    users: [{{ ref: slack_ana, name: ana }}]
    channels: [{{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }}]
  pagerduty:
    escalation_policies:
      - {{ ref: pd_policy, name: orders, rules: [{{ delay: 15m, targets: [$pagerduty_agent] }}] }}
    services: [{{ ref: pd_orders, name: orders, escalation_policy: $pd_policy }}]
{rules}
checks:
  - id: posted
    trace: {{ called: "POST /api/chat.postMessage" }}
"""

ANA_AT_2M = """
world_rules:
  events:
    - at: 2m
      do:
        - slack.message: { channel: $slack_general, from: $slack_ana, text: "Are you there?" }
"""

PYTHON_AGENT = textwrap.dedent("""
    import json, os, time, urllib.request

    def call(url, token, body=None):
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        data = None if body is None else json.dumps(body).encode()
        return json.load(urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers)))

    time.sleep(0.01)  # sleeps work on the world's clock (an absolute monotonic sleep, in Python)
    before = time.time()
    feed = call(os.environ["ANCHA_EVENTS_URL"] + "?after=0&wait=" + os.environ.get("WAIT", "6m"),
                os.environ["ANCHA_EVENTS_TOKEN"])
    after = time.time()
    context = call(os.environ["ANCHA_CONTEXT_URL"], os.environ["ANCHA_TRIAL_TOKEN"])
    # PagerDuty's replica is served over TLS: its certificate verifies at the world's time.
    services = call(os.environ["ANCHA_PAGERDUTY_URL"] + "/services", os.environ["ANCHA_PAGERDUTY_TOKEN"])
    seen = {"before": before, "after": after, "world_now": context["clock"]["now"],
            "clock_now": os.environ.get("ANCHA_CLOCK_NOW"), "events": [e["type"] for e in feed["events"]],
            "services": len(services["services"])}
    with open(os.path.join(os.environ["ANCHA_STATE_DIR"], "clock.json"), "w") as out:
        json.dump(seen, out)
    slack, token = os.environ["ANCHA_SLACK_URL"], os.environ["ANCHA_SLACK_TOKEN"]
    channel = call(slack + "/api/conversations.list", token)["channels"][0]["id"]
    call(slack + "/api/chat.postMessage", token, {"channel": channel, "text": "hello"})
""")

NODE_AGENT = textwrap.dedent("""
    const fs = require("fs"), path = require("path");
    const env = process.env;
    async function call(url, token, body) {
      const answer = await fetch(url, {method: body ? "POST" : "GET", body: body && JSON.stringify(body),
        headers: {authorization: "Bearer " + token, "content-type": "application/json"}});
      return answer.json();
    }
    (async () => {
      const before = Date.now() / 1000;
      const feed = await call(env.ANCHA_EVENTS_URL + "?after=0&wait=6m", env.ANCHA_EVENTS_TOKEN);
      const after = Date.now() / 1000;
      const context = await call(env.ANCHA_CONTEXT_URL, env.ANCHA_TRIAL_TOKEN);
      fs.writeFileSync(path.join(env.ANCHA_STATE_DIR, "clock.json"), JSON.stringify({before, after,
        world_now: context.clock.now, clock_now: env.ANCHA_CLOCK_NOW, events: feed.events.map(e => e.type)}));
      const channels = await call(env.ANCHA_SLACK_URL + "/api/conversations.list", env.ANCHA_SLACK_TOKEN);
      await call(env.ANCHA_SLACK_URL + "/api/chat.postMessage", env.ANCHA_SLACK_TOKEN,
                 {channel: channels.channels[0].id, text: "hello"});
    })();
""")

needs_libfaketime = pytest.mark.skipif(
    find_library() is None and not __import__("os").environ.get("CI"),
    reason="libfaketime is not installed (apt-get install faketime)",
)


def _run(
    tmp_path: Path,
    agent: str,
    command: str,
    *,
    rules: str = "",
    limit: str = "1h",
    extra: str = "",
    env: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``ancha run`` in this process on a one-trial project: (what the agent saw, checks.json, the run's output)."""
    (tmp_path / "scenes" / "hello").mkdir(parents=True)
    (tmp_path / "scenes" / "hello" / "scene.yaml").write_text(
        SCENE.format(start=START, limit=limit, rules=rules)
    )
    (tmp_path / command.split()[-1]).write_text(agent)
    agent_env = "".join(f'    {name}: "{value}"\n' for name, value in (env or {}).items())
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {command}\n{extra}"
        + (f"  env:\n{agent_env}" if agent_env else "")
        + "trials: 1\n"
    )
    config = load_config(None, tmp_path, catalog=config_catalog())
    scenes = load_scenes(list(config.scenes), config.root, catalog())
    out = io.StringIO()
    result = asyncio.run(run_scenes(config, scenes, console=Console(file=out, width=200), progress=False))
    trial = result.run_dir / "hello" / "1"
    seen_file = trial / "state" / "clock.json"
    seen = json.loads(seen_file.read_text()) if seen_file.exists() else {}
    return seen, json.loads((trial / "checks.json").read_text()), out.getvalue()


def _at(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


@needs_libfaketime
def test_python_agent__time_time_reads_the_worlds_clock_before_and_after_a_jump(tmp_path: Path) -> None:
    seen, checks, _ = _run(tmp_path, PYTHON_AGENT, f"{sys.executable} agent.py")
    print("python agent:", json.dumps(seen))
    assert abs(seen["before"] - START_S) < 60, (
        "the agent's clock starts at the scene's clock.start, not today"
    )
    assert abs(seen["before"] - _at(seen["clock_now"])) < 60
    assert seen["events"] == [] and seen["after"] - seen["before"] >= 360, (
        "the world jumped 6m while it waited"
    )
    assert abs(seen["after"] - _at(seen["world_now"])) < 1, "after the jump the agent's clock is the world's"
    assert seen["services"] == 1, "TLS to the replica verifies at the world's time (2020)"
    assert checks["verdict"] == "passed" and checks["ended"] == "the agent exited (code 0)"


@needs_libfaketime
@pytest.mark.skipif(shutil.which("node") is None and not __import__("os").environ.get("CI"), reason="no node")
def test_node_agent__date_now_reads_the_worlds_clock_before_and_after_a_jump(tmp_path: Path) -> None:
    seen, checks, _ = _run(tmp_path, NODE_AGENT, "node agent.js")
    print("node agent:", json.dumps(seen))
    assert abs(seen["before"] - START_S) < 60
    assert seen["events"] == [] and seen["after"] - seen["before"] >= 360
    assert abs(seen["after"] - _at(seen["world_now"])) < 1
    assert checks["verdict"] == "passed"


@needs_libfaketime
def test_feed_wait__wakes_at_the_next_due_item_when_it_comes_before_the_waits_end(tmp_path: Path) -> None:
    seen, checks, _ = _run(tmp_path, PYTHON_AGENT, f"{sys.executable} agent.py", rules=ANA_AT_2M)
    assert seen["events"] == ["message"], "Ana's message at 2m ended the 6m wait"
    assert abs(seen["after"] - (START_S + 120)) < 60 and abs(seen["after"] - _at(seen["world_now"])) < 1
    assert checks["verdict"] == "passed"


def test_feed_wait__past_the_clock_limit_ends_the_trial_at_the_limit(tmp_path: Path) -> None:
    _, checks, _ = _run(tmp_path, PYTHON_AGENT, f"{sys.executable} agent.py", limit="5m", env={"WAIT": "6m"})
    assert checks["status"] == "timed_out" and "clock.limit" in checks["ended"]


def test_feed_wait__a_command_agent_is_not_ended_idle_while_it_waits_to_act_late(tmp_path: Path) -> None:
    """``agent.idle`` is 10s, the wait 6m: the agent still makes its last calls after it."""
    seen, checks, _ = _run(
        tmp_path, PYTHON_AGENT, f"{sys.executable} agent.py", extra="  idle: 10s\n  clock: wall\n"
    )
    assert seen["events"] == [] and abs(_at(seen["world_now"]) - (START_S + 360)) < 60
    assert checks["verdict"] == "passed" and checks["status"] == "done"


def test_agent_clock_wall__the_agent_reads_the_machines_clock(tmp_path: Path) -> None:
    seen, checks, out = _run(tmp_path, PYTHON_AGENT, f"{sys.executable} agent.py", extra="  clock: wall\n")
    now = datetime.now().timestamp()
    assert abs(seen["before"] - now) < 3600 and checks["verdict"] == "passed"
    assert MISSING not in out


def test_missing_libfaketime__the_run_says_so_once_and_runs_on_the_wall_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANCHA_LIBFAKETIME", str(tmp_path / "nowhere" / "libfaketime.so.1"))
    seen, checks, out = _run(tmp_path, PYTHON_AGENT, f"{sys.executable} agent.py")
    assert out.count("libfaketime is not installed") == 1 and "apt-get install faketime" in out
    assert abs(seen["before"] - datetime.now().timestamp()) < 3600, "the wall clock"
    assert checks["verdict"] == "passed"


def test_agent_clock__other_values_are_refused_with_the_choices(tmp_path: Path) -> None:
    from ancha.config.errors import ConfigInvalid

    (tmp_path / "ancha.yaml").write_text("agent:\n  command: python agent.py\n  clock: simulated\n")
    with pytest.raises(ConfigInvalid) as refused:
        load_config(None, tmp_path, catalog=config_catalog())
    text = str(refused.value) + " ".join(f"{p.path} {p.message} {p.hint}" for p in refused.value.problems)
    assert "agent.clock" in text and "world" in text and "wall" in text
