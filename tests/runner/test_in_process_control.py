"""The runner reaches the embedded server in its own process without a socket, and gets
the same answers, files and errors as over HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from ancha.runner.control import ControlClient, ServerError
from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

SCENE = """\
name: in-process
task: post a greeting
world:
  slack:
    users: [{ ref: ana, name: ana }]
    channels: [{ ref: general, name: general, members: [$ana, $slack_bot] }]
checks:
  - { id: posted, trace: { called: "POST /api/chat.postMessage" } }
"""


async def _trial(control: ControlClient, scene_path: Path, out: Path) -> dict[str, object]:
    """One trial as the runner makes it: world, an agent's Slack call over HTTP, grade, files."""
    scene = load_scene(scene_path, catalog())
    context = await control.create_env(scene, 1, {})
    slack = context["tools"]["slack"]
    agent = AsyncWebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    channel = (await agent.conversations_list())["channels"][0]["id"]
    await agent.chat_postMessage(channel=channel, text="hello from the agent")
    graded = await control.grade(context["env_id"], teardown=False, trace=False, state=False)
    await control.save_trace(context["env_id"], out / "trace.jsonl", page=1)
    await control.save_state(context["env_id"], out / "world.json")
    await control.delete(context["env_id"])
    with pytest.raises(ServerError, match="404"):
        await control.grade(context["env_id"])
    return graded


def test_control_client__in_process_and_over_http_give_the_same_grades_and_files(tmp_path: Path) -> None:
    (tmp_path / "scene.yaml").write_text(SCENE)
    answers: dict[str, dict[str, object]] = {}

    async def both() -> None:
        with EmbeddedServer() as server:
            for way, transport in (("http", None), ("in-process", server.transport())):
                (tmp_path / way).mkdir()
                control = ControlClient(server.url, share=server.share, transport=transport)
                answers[way] = await _trial(control, tmp_path / "scene.yaml", tmp_path / way)
                await control.close()

    asyncio.run(both())
    assert answers["in-process"]["results"] == answers["http"]["results"]
    assert [r["passed"] for r in answers["in-process"]["results"]] == [True]  # type: ignore[attr-defined,index]
    traces = {way: [json.loads(line) for line in (tmp_path / way / "trace.jsonl").read_text().splitlines()]
              for way in answers}
    assert [(e["method"], e["path"]) for e in traces["in-process"]] == [(e["method"], e["path"]) for e in traces["http"]]
    assert any(e["path"].endswith("chat.postMessage") for e in traces["in-process"])
    worlds = {way: json.loads((tmp_path / way / "world.json").read_bytes()) for way in answers}
    texts = {way: [m["text"] for msgs in w["slack"]["messages"].values() for m in msgs] for way, w in worlds.items()}
    assert texts["in-process"] == texts["http"] == ["hello from the agent"]


def test_control_client__a_stopped_embedded_server_is_a_server_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "scene.yaml").write_text(SCENE)
    scene = load_scene(tmp_path / "scene.yaml", catalog())

    async def after_stop() -> None:
        server = EmbeddedServer().start()
        control = ControlClient(server.url, share=server.share, transport=server.transport())
        server.stop()
        try:
            with pytest.raises(ServerError, match="not running"):
                await control.create_env(scene, 1, {})
        finally:
            await control.close()

    asyncio.run(after_stop())
