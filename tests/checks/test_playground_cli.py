"""``ancha playground TASK.json --scene SCENE`` end to end: a subprocess prints its context,
an agent acts with slack_sdk, ``ancha check --task`` grades it, SIGINT tears it down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from slack_sdk import WebClient
from task_scene import write

DEADLINE_S = 60.0


def _ancha(*args: str) -> list[str]:
    return [sys.executable, "-m", "ancha.cli", *args]


def _lines_until(stream: IO[str], lines: list[str], prefix: str, deadline: float) -> str:
    """Read ``stream`` into ``lines`` until a line starts with ``prefix`` (or the deadline passes)."""
    found: list[str] = []

    def read() -> None:
        for line in stream:
            lines.append(line)
            if line.startswith(prefix):
                found.append(line)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=max(0.0, deadline - time.monotonic()))
    assert found, f"no line starting {prefix!r} before the deadline; output so far: {''.join(lines)}"
    return found[0]


def _check(env_id: str, server: str, task: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_ancha("check", "--env", env_id, "--server", server, "--task", str(task)), cwd=cwd,
                          capture_output=True, text=True, timeout=DEADLINE_S, env={**os.environ, "NO_COLOR": "1"})


@pytest.mark.parametrize("server_url", [False, True], ids=["embedded", "server_url"])
def test_playground__context_printed_agent_acts_check_grades_sigint_tears_down(
        tmp_path: Path, server_url: bool, request: pytest.FixtureRequest) -> None:
    scene, task = write(tmp_path)
    remote = request.getfixturevalue("ancha_server") if server_url else None
    if remote is not None:  # ancha.yaml names a server: the world is built there
        (tmp_path / "ancha.yaml").write_text(f"server: {{url: {remote}}}\n")
    process = subprocess.Popen(_ancha("playground", str(task), "--scene", str(scene)), cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        deadline = time.monotonic() + DEADLINE_S
        context: dict[str, Any] = json.loads(_lines_until(process.stdout, lines, "context: ", deadline)  # type: ignore[arg-type]
                                             .removeprefix("context: "))
        env_id, server = context["env_id"], context["server_url"]
        assert remote is None or server == remote
        assert any(line.startswith(f"playground: environment {env_id} of scene exports") for line in lines)
        assert f"  slack: {context['tools']['slack']['url']}\n" in lines
        assert f"    token: {context['tools']['slack']['token']}\n" in lines
        assert f"grade it: ancha check --env {env_id} --server {server} --task {task}\n" in lines

        before = _check(env_id, server, task, tmp_path)
        assert before.returncode == 1, before.stdout + before.stderr
        assert "FAIL  answered" in before.stdout and "FAIL  posted" in before.stdout
        assert "scene_only" not in before.stdout  # graded with the task's checks, not the scene's

        slack = context["tools"]["slack"]
        agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
        support = next(c["id"] for c in agent.conversations_list()["channels"] if c["name"] == "support")
        question = agent.conversations_history(channel=support)["messages"][0]["ts"]
        agent.chat_postMessage(channel=support, thread_ts=question, text="Exports are back, sorry about that.")

        after = _check(env_id, server, task, tmp_path)
        assert after.returncode == 0, after.stdout + after.stderr
        assert "PASS  answered" in after.stdout and "PASS  posted" in after.stdout

        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=DEADLINE_S)
        assert process.returncode == 0, "".join(lines) + rest
        assert "playground closed: the environment was torn down" in rest
        if remote is not None:
            assert httpx.get(f"{remote}/envs/{env_id}", timeout=5).status_code == 404
        else:
            with pytest.raises(httpx.ConnectError):  # the embedded server stopped with it
                httpx.get(f"{server}/envs/{env_id}", timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=DEADLINE_S)


def test_playground__invalid_task_exits_2_before_a_world_is_built(tmp_path: Path) -> None:
    scene, task = write(tmp_path, [{"id": "kind", "judge": "The reply is kind."}])
    done = subprocess.run(_ancha("playground", str(task), "--scene", str(scene)), cwd=tmp_path,
                          capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error[TASK_INVALID]: {task}:2: checks[0].judge: judge checks do not work")
    assert "playground:" not in done.stdout


def test_check__invalid_task_file_exits_2_without_a_server(tmp_path: Path) -> None:
    _scene, task = write(tmp_path, text="[{")
    done = _check("env_none", "http://127.0.0.1:9", task, tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error[TASK_INVALID]: {task}:1: not valid JSON")
