"""`ancha run` against a separately started `ancha serve` (server.url), and `ancha check` on a live world."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ancha.server.embedded import free_port
from ancha.server.keys import server_key
from ancha.world.registry import catalog

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: remote
task: Post in #general.
world:
  slack:
    channels: [{ ref: slack_general, name: general, members: [$slack_bot] }]
checks:
  - id: posted
    state:
      slack.message: { channel: $slack_general, from: $slack_bot }
"""

AGENT = """
import json, os, urllib.request
body = json.dumps({"channel": "general", "text": "hi"}).encode()
req = urllib.request.Request(os.environ["ANCHA_SLACK_URL"] + "/api/chat.postMessage", data=body,
    headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"], "Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(req)))
"""


def keyed(url: str) -> dict[str, str]:
    """The key `ancha serve` kept for ``url`` (the CLI's own lookup), as a header."""
    key = server_key(url)
    return {"authorization": f"Bearer {key}"} if key else {}


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """`ancha serve` with the key it makes; the CLI processes of the test find it where serve keeps it."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.delenv("ANCHA_SERVER_KEY", raising=False)
    port = free_port()
    proc = subprocess.Popen([*ANCHA, "serve", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/envs", headers=keyed(url)).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_run__uses_the_server_named_by_server_url(tmp_path: Path, served: str) -> None:
    (tmp_path / "scenes" / "remote").mkdir(parents=True)
    (tmp_path / "scenes" / "remote" / "scene.yaml").write_text(SCENE)
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "ancha.yaml").write_text(
        f"agent:\n  command: {sys.executable} agent.py\ntrials: 2\nserver:\n  url: {served}\n")
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = json.loads((tmp_path / ".ancha" / "runs" / "latest" / "summary.json").read_text())
    assert summary["server"] == served
    assert summary["scenes"][0]["passed"] == 2
    # Every trial's world was torn down on the remote server afterwards.
    assert httpx.get(served + "/envs", headers=keyed(served)).json()["envs"] == []


def test_run__unreachable_server_url_exits_3_with_a_hint(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "remote").mkdir(parents=True)
    (tmp_path / "scenes" / "remote" / "scene.yaml").write_text(SCENE)
    (tmp_path / "ancha.yaml").write_text(f"agent:\n  command: 'true'\nserver:\n  url: http://127.0.0.1:{free_port()}\n")
    ran = subprocess.run([*ANCHA, "run"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3
    assert "no Ancha server answers" in ran.stderr and "ancha serve" in ran.stderr


def test_check__prints_every_result_of_a_live_world(tmp_path: Path, served: str) -> None:
    from ancha.scene.loading import load_scene

    (tmp_path / "scene.yaml").write_text(SCENE)
    scene = load_scene(tmp_path / "scene.yaml", catalog())
    context = httpx.post(served + "/envs", json={"scene": scene.model_dump(mode="json", by_alias=True)},
                         headers=keyed(served)).json()
    env_id = context["env_id"]
    before = subprocess.run([*ANCHA, "check", "--json", "--env", env_id, "--server", served],
                            capture_output=True, text=True, timeout=60)
    assert before.returncode == 1
    assert json.loads(before.stdout)[0]["id"] == "posted" and json.loads(before.stdout)[0]["passed"] is False
    subprocess.run([sys.executable, "-c", AGENT], check=True, capture_output=True, timeout=60,
                   env={**os.environ, "ANCHA_SLACK_URL": context["tools"]["slack"]["url"],
                        "ANCHA_SLACK_TOKEN": context["tools"]["slack"]["token"]})
    after = subprocess.run([*ANCHA, "check", "--json", "--env", env_id, "--server", served],
                           capture_output=True, text=True, timeout=60)
    assert after.returncode == 0, after.stdout + after.stderr
    result = json.loads(after.stdout)[0]
    assert result["passed"] is True and result["status"] == "passed" and result["evidence"] == [1]


def test_serve_with_a_key__control_api_refuses_requests_without_it(tmp_path: Path) -> None:
    from ancha.scene.loading import load_scene

    port = free_port()
    proc = subprocess.Popen([*ANCHA, "serve", "--port", str(port), "--key", "sekret"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(url + "/envs")
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        (tmp_path / "scene.yaml").write_text(SCENE)
        body = {"scene": load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True)}
        assert httpx.post(url + "/envs", json=body).status_code == 401
        keyed = {"authorization": "Bearer sekret"}
        context = httpx.post(url + "/envs", json=body, headers=keyed).json()
        env_id = context["env_id"]
        assert httpx.get(context["context_url"], headers={"authorization": "Bearer wrong"}).status_code == 401
        trial = {"authorization": f"Bearer {context['trial_token']}"}
        assert httpx.get(context["context_url"], headers=trial).status_code == 200
        for what in ("trace", "state", "records"):
            assert httpx.get(f"{url}/envs/{env_id}/{what}").status_code == 401
            assert httpx.get(f"{url}/envs/{env_id}/{what}", headers=keyed).status_code == 200
        assert httpx.post(f"{url}/envs/{env_id}/checks").status_code == 401
        assert httpx.post(f"{url}/envs/{env_id}/grade").status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=10)
