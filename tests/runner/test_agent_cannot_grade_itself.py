"""The agent under test never reaches the control API: not of the embedded server of
`ancha run`, nor of an `ancha serve`. It tries every control route with every credential
it holds at every base URL it was given (``control_probe.py``), and another trial's own
routes with its own tokens; every try is refused, and both trials still grade normally."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ancha.server.embedded import free_port
from ancha.server.keys import key_file, server_key

ANCHA = [sys.executable, "-m", "ancha.cli"]
PROBE = Path(__file__).with_name("control_probe.py")

SCENE = """
name: probe
task: Post in #general.
world:
  slack:
    channels: [{ ref: slack_general, name: general, members: [$slack_bot] }]
  github:
    repos: [{ ref: gh_orders, name: acme/orders }]
  pagerduty:
    agent: { ref: pd_agent, name: Bot, email: bot@acme.test }
    escalation_policies: [{ ref: pd_policy, name: orders, rules: [{ delay: 15m, targets: [$pd_agent] }] }]
    services: [{ ref: pd_orders, name: orders, escalation_policy: $pd_policy }]
checks:
  - id: posted
    state:
      slack.message: { channel: $slack_general, from: $slack_bot, text_contains: hi }
"""


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Kept server keys go here, for this test and the CLI processes it starts."""
    home = tmp_path / "xdg-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    monkeypatch.delenv("ANCHA_SERVER_KEY", raising=False)
    return home


def make_project(root: Path, extra: str = "") -> Path:
    (root / "scenes" / "probe").mkdir(parents=True)
    (root / "scenes" / "probe" / "scene.yaml").write_text(SCENE)
    shared = root / "shared"
    shared.mkdir()
    (root / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} {PROBE}\n  idle: 120s\n"
        f"  env: {{PROBE_SHARED: '{shared}'}}\n  pass_env: [ANCHA_SERVER_KEY]\n"
        f"trials: 2\nparallel: 2\n{extra}")
    return root


def reports(root: Path) -> list[dict[str, Any]]:
    found = []
    for trial in (1, 2):
        log = (root / ".ancha" / "runs" / "latest" / "probe" / str(trial) / "agent.log").read_text()
        line = next(line for line in log.splitlines() if line.startswith("PROBE-REPORT "))
        found.append(json.loads(line.removeprefix("PROBE-REPORT ")))
    return found


def assert_refused_and_graded(root: Path, ran: subprocess.CompletedProcess[str]) -> None:
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for report in reports(root):
        assert report["opened"] == [], report["opened"]
        assert report["other"] is True  # the two trials ran side by side and found each other
        assert report["server_key_given"] is False  # not even from the shell, though pass_env names it
        assert {"ANCHA_TRIAL_TOKEN", "ANCHA_EVENTS_TOKEN", "ANCHA_SLACK_TOKEN", "ANCHA_GITHUB_TOKEN",
                "ANCHA_SLACK_SIGNING_SECRET", "none"} <= set(report["credentials"])
        assert any(b.startswith("https://") for b in report["bases"]) and any(
            b.startswith("http://") for b in report["bases"])
        assert report["tried"] > 500
    summary = json.loads((root / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    assert summary["scenes"][0]["passed"] == 2, summary


def test_run__agent_is_refused_every_control_route_of_the_embedded_server(tmp_path: Path, state_home: Path) -> None:
    root = make_project(tmp_path)
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=root, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "ANCHA_SERVER_KEY": "the-users-own-key"})
    assert_refused_and_graded(root, ran)


def test_run__agent_is_refused_every_control_route_of_ancha_serve(tmp_path: Path, state_home: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serving = subprocess.Popen([*ANCHA, "serve", "--port", str(port)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        key = wait_for_kept_key(url)
        assert httpx.get(url + "/envs").status_code == 401
        assert httpx.get(url + "/envs", headers={"authorization": f"Bearer {key}"}).status_code == 200
        root = make_project(tmp_path, f"server:\n  url: {url}\n")
        ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=root, capture_output=True, text=True,
                             timeout=300)  # no ANCHA_SERVER_KEY: run finds the key serve kept
        assert_refused_and_graded(root, ran)
    finally:
        serving.terminate()
        out, _ = serving.communicate(timeout=10)
    assert f"server key: {key}" in out


def wait_for_kept_key(url: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        key = server_key(url)
        if key is not None:
            try:
                httpx.get(url + "/envs", timeout=2)
                return key
            except httpx.HTTPError:
                pass
        time.sleep(0.05)
    raise AssertionError(f"ancha serve did not keep a key for {url}")


def test_serve__keeps_its_key_for_its_user_only_and_forgets_it_on_exit(state_home: Path) -> None:
    port = free_port()
    url = f"http://localhost:{port}"
    serving = subprocess.Popen([*ANCHA, "serve", "--port", str(port)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        key = wait_for_kept_key(url)
        kept = key_file(url)
        assert kept == key_file(f"http://127.0.0.1:{port}")  # every loopback name of the port
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", key)
        assert httpx.get(url + "/envs", headers={"authorization": f"Bearer {key}"}).status_code == 200
    finally:
        serving.terminate()
        serving.communicate(timeout=10)
    assert not kept.exists()


def test_serve__no_key_needs_the_flag_and_warns(state_home: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serving = subprocess.Popen([*ANCHA, "serve", "--port", str(port), "--no-key"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert httpx.get(url + "/envs", timeout=2).status_code == 200
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert server_key(url) is None
    finally:
        serving.terminate()
        _, err = serving.communicate(timeout=10)
    assert "warning: --no-key" in err and "grade" in err
    both = subprocess.run([*ANCHA, "serve", "--no-key", "--key", "k"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "cannot be combined" in both.stderr


@pytest.fixture
def keyed_world(state_home: Path) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    from ancha.server.embedded import EmbeddedServer
    from ancha.server.keys import new_key

    scene = {"name": "t", "task": "x", "world": {"slack": {}, "github": {}}}
    with EmbeddedServer(key=new_key()) as server:
        assert server.key is not None
        keyed = {"authorization": f"Bearer {server.key}"}
        contexts = [httpx.post(server.url + "/envs", json={"scene": scene, "trial": t}, headers=keyed).json()
                    for t in (1, 2)]
        yield server.url, server.key, contexts


def test_trial_token__opens_only_its_own_agent_routes(keyed_world: tuple[str, str, list[dict[str, Any]]]) -> None:
    url, key, (mine, theirs) = keyed_world
    trial = {"authorization": f"Bearer {mine['trial_token']}"}
    assert httpx.get(mine["context_url"], headers=trial).status_code == 200
    assert httpx.get(theirs["context_url"], headers=trial).status_code == 401
    assert httpx.post(theirs["done_url"], headers=trial).status_code == 401
    for path in ("waiting", "endpoint"):  # the runner's, not the agent's
        assert httpx.post(f"{url}/envs/{mine['env_id']}/{path}", json={"waiting": True}, headers=trial).status_code \
            == 401
    assert httpx.post(f"{url}/envs/{mine['env_id']}/waiting", json={"waiting": True},
                      headers={"authorization": f"Bearer {key}"}).status_code == 200
    events = {"authorization": f"Bearer {mine['events']['token']}"}
    assert httpx.get(mine["events"]["url"], headers=events).status_code == 200
    assert httpx.get(theirs["events"]["url"], headers=events).status_code == 401


# --- a container agent, through its forwarders ------------------------------------------------

sys.path.insert(0, str(Path(__file__).parent))
from container_image import ENGINES, agent_image, usable_engine  # noqa: E402


@pytest.fixture(scope="module", params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each engine in turn, as in test_container_agents.py: in CI one that does not answer fails."""
    return usable_engine(request.param)


def test_container_agent__is_refused_every_control_route_through_its_forwarders(
        tmp_path: Path, state_home: Path, engine: str) -> None:
    image = agent_image(engine)
    (tmp_path / "scenes" / "probe").mkdir(parents=True)
    (tmp_path / "scenes" / "probe" / "scene.yaml").write_text(SCENE)
    (tmp_path / "control_probe.py").write_text(PROBE.read_text())
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: python3 control_probe.py\n  idle: 120s\n  execution:\n    mode: container\n"
        f"    image: {image}\ntrials: 2\nparallel: 2\n")
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "ANCHA_CONTAINER_ENGINE": engine, "ANCHA_SERVER_KEY": "shell-key"})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for report in reports(tmp_path):
        assert report["opened"] == [], report["opened"]
        assert report["server_key_given"] is False
        assert {"ANCHA_TRIAL_TOKEN", "ANCHA_EVENTS_TOKEN", "ANCHA_SLACK_TOKEN", "none"} <= set(report["credentials"])
        assert len(report["bases"]) >= 2 and report["tried"] > 150
    summary = json.loads((tmp_path / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    assert summary["scenes"][0]["passed"] == 2, summary
