"""The embedded server builds trials from the scene the runner loaded (handed over in
this process, named by hash), and streams each trial's final state into world.json."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from ancha.runner.control import ControlClient
from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

SCENE = """\
name: handoff
task: read the channel
world:
  slack:
    users: [{ ref: ana, name: ana }]
    channels: [{ ref: general, name: general, members: [$ana, $slack_bot] }]
    messages_file: history.jsonl
checks:
  - { id: posted, trace: { called: "POST /api/chat.postMessage" } }
"""


def _scene(folder: Path) -> Path:
    (folder / "scene.yaml").write_text(SCENE)
    lines = [json.dumps({"channel": "$general", "from": "$ana", "text": f"message {i}"}) for i in range(300)]
    (folder / "history.jsonl").write_text("\n".join(lines) + "\n")
    return folder / "scene.yaml"


def test_embedded_server__trials_share_the_runners_loaded_scene(tmp_path: Path) -> None:
    scene = load_scene(_scene(tmp_path), catalog())
    sent: list[bytes] = []

    async def trials() -> list[str]:
        with EmbeddedServer() as server:
            control = ControlClient(server.url, share=server.share)
            original = control._http.request

            async def spy(method: str, url: str, **kwargs: object) -> httpx.Response:
                sent.append(json.dumps(kwargs.get("json"), default=str).encode())
                return await original(method, url, **kwargs)  # type: ignore[arg-type]

            control._http.request = spy  # type: ignore[method-assign]
            ids = [(await control.create_env(scene, trial, {}))["env_id"] for trial in (1, 2)]
            assert all(server.app.registry.envs[env_id].scene is scene for env_id in ids)
            await control.close()
            return ids

    assert len(asyncio.run(trials())) == 2
    assert all(b"message 1" not in body for body in sent)  # named by hash, never sent as JSON


def test_save_state__writes_world_json_as_the_server_streams_it(tmp_path: Path) -> None:
    scene = load_scene(_scene(tmp_path), catalog())

    async def trial() -> dict[str, object]:
        with EmbeddedServer() as server:
            control = ControlClient(server.url, share=server.share)
            env_id = (await control.create_env(scene, 1, {}))["env_id"]
            graded = await control.grade(env_id, teardown=False, trace=False, state=False)
            await control.save_state(env_id, tmp_path / "world.json")
            await control.close()
            return graded

    graded = asyncio.run(trial())
    assert "state" not in graded and [r["id"] for r in graded["results"]] == ["posted"]
    world = json.loads((tmp_path / "world.json").read_bytes())
    (messages,) = world["slack"]["messages"].values()
    assert [m["text"] for m in messages] == [f"message {i}" for i in range(300)]
    assert {m["channel"] for m in messages} == {next(iter(world["slack"]["messages"]))}
