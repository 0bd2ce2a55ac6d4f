"""`agent.input: per_event`: an event too large for one variable still reaches the agent whole.

Linux refuses a variable over 128 KiB (MAX_ARG_STRLEN): a 25,000-character CJK message,
escaped in JSON, is about 150 KB, so the agent would never start. Every per-event run gets
its event in a file (``ANCHA_EVENT_FILE``, readable by the agent only, gone after the run);
``ANCHA_EVENT_JSON`` holds the same JSON when it is small enough, and is absent otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ancha.runner.agents.environment import EVENT_VARIABLE_MAX, event_variables

sys.path.insert(0, str(Path(__file__).parent))
from container_image import ENGINES, agent_image, usable_engine  # noqa: E402

ANCHA = [sys.executable, "-m", "ancha.cli"]
LONG_TEXT = ("締め切りは金曜日です。ご確認ください。" * 1400)[:25_000]
"""25,000 CJK characters: about 150 KB as escaped JSON, past the kernel's limit for one variable."""

SCENE = f"""
name: long-message
task: Acknowledge every message.
clock: {{ limit: 2h }}
world:
  slack:
    users: [{{ ref: slack_laura, name: laura }}]
    channels: [{{ ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }}]
people:
  laura:
    name: Laura
    accounts: {{ slack: $slack_laura }}
world_rules:
  events:
    - at: 10m
      do:
        - slack.message: {{ channel: $slack_support, from: $slack_laura, text: "short one" }}
    - at: 30m
      do:
        - slack.message: {{ channel: $slack_support, from: $slack_laura, text: "{LONG_TEXT}" }}
checks:
  - id: acknowledged_both
    message: {{ to: laura, from: $slack_bot, count_gte: 2 }}
"""

AGENT = textwrap.dedent("""
    import json, os, stat, urllib.request
    path = os.environ["ANCHA_EVENT_FILE"]
    info = os.stat(path)
    with open(path, encoding="utf-8") as source:
        event = json.load(source)
    seen = {
        "type": event["type"], "file": path, "mode": stat.S_IMODE(info.st_mode), "mine": info.st_uid == os.getuid(),
        "variable": json.loads(os.environ["ANCHA_EVENT_JSON"]) == event if "ANCHA_EVENT_JSON" in os.environ else None,
        "text": event["payload"].get("event", {}).get("text"),
    }
    with open(os.path.join(os.environ["ANCHA_STATE_DIR"], "seen.jsonl"), "a", encoding="utf-8") as out:
        out.write(json.dumps(seen, ensure_ascii=False) + "\\n")
    if event["type"] != "message":
        raise SystemExit(0)
    inner = event["payload"]["event"]
    body = json.dumps({"channel": inner["channel"], "thread_ts": inner["ts"], "text": "got it"}).encode()
    req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/chat.postMessage", data=body,
        headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
    assert json.load(urllib.request.urlopen(req))["ok"]
""")


def make_project(root: Path, agent_block: str) -> None:
    (root / "scenes" / "long-message").mkdir(parents=True)
    (root / "scenes" / "long-message" / "scene.yaml").write_text(SCENE, encoding="utf-8")
    (root / "agent.py").write_text(AGENT)
    (root / "ancha.yaml").write_text(f"agent:\n{agent_block}  input: per_event\n  idle: 5m\ntrials: 1\n")


def messages_seen(root: Path) -> list[dict[str, object]]:
    trial = root / ".ancha" / "runs" / "latest" / "long-message" / "1"
    checks = json.loads((trial / "checks.json").read_text())
    assert checks["verdict"] == "passed", checks
    seen = [json.loads(line) for line in (trial / "state" / "seen.jsonl").read_text(encoding="utf-8").splitlines()]
    return [s for s in seen if s["type"] == "message"]


def test_per_event__a_25000_character_cjk_message_reaches_the_agent_whole_in_a_file(tmp_path: Path) -> None:
    make_project(tmp_path, f"  command: {sys.executable} agent.py\n")
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    short, long = messages_seen(tmp_path)
    assert short["text"] == "short one" and short["variable"] is True  # a small event: in the variable too
    assert long["text"] == LONG_TEXT  # the exact text, every character of it
    assert long["variable"] is None  # too large for one variable: only in the file
    for seen in (short, long):
        assert seen["mode"] == 0o600 and seen["mine"] is True
        assert Path(str(seen["file"])).is_absolute()  # whatever agent.cwd is
        assert not Path(str(seen["file"])).exists()  # removed once the agent's run ended
        assert Path(str(seen["file"])).parent.resolve() == (tmp_path / ".ancha" / "runs" / "latest" /
                                                             "long-message" / "1").resolve()


def test_event_variables__the_variable_only_while_it_fits_one_variable_and_the_whole_environment() -> None:
    small, large = json.dumps({"text": "x" * 100}), json.dumps({"text": "漢" * 25_000})
    assert event_variables(small, Path("/t/event.json"), {"PATH": "/bin"}) == {
        "ANCHA_EVENT_FILE": "/t/event.json", "ANCHA_EVENT_JSON": small}
    assert len(large.encode()) > 128 * 1024 > EVENT_VARIABLE_MAX
    assert event_variables(large, Path("/t/event.json"), {"PATH": "/bin"}) == {"ANCHA_EVENT_FILE": "/t/event.json"}
    crowded = {"PATH": "/bin", "HUGE": "y" * (int(os.sysconf("SC_ARG_MAX")) // 2 - 100)}  # near half the total
    assert "ANCHA_EVENT_JSON" not in event_variables(small, Path("/t/event.json"), crowded)


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn (as in test_container_agents); in CI one that does not answer fails."""
    return usable_engine(request.param)


@pytest.fixture(scope="module")
def image(engine: str) -> Iterator[str]:
    listed = [engine, "images", "--filter", "label=ancha.workspace-of", "--format", "{{.ID}}"]
    before = set(subprocess.run(listed, capture_output=True, text=True).stdout.split())
    yield agent_image(engine)
    made = set(subprocess.run(listed, capture_output=True, text=True).stdout.split()) - before
    if made:
        subprocess.run([engine, "rmi", "--force", *made], capture_output=True)


def test_per_event__a_25000_character_cjk_message_reaches_a_container_agent_whole(tmp_path: Path, engine: str,
                                                                                  image: str) -> None:
    make_project(tmp_path, f"  command: python3 agent.py\n  execution: {{ mode: container, image: {image} }}\n")
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=180,
                         env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    short, long = messages_seen(tmp_path)
    assert short["text"] == "short one" and short["variable"] is True
    assert long["text"] == LONG_TEXT and long["variable"] is None
    assert not list((tmp_path / ".ancha" / "runs" / "latest" / "long-message" / "1").glob("*event*"))
