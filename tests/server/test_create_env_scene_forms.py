"""POST /envs takes the scene as a user has it: the text of a scene file, or that file parsed
into JSON as written (durations, refs), read as the file would be; a problem comes back in the
scene file's terms, never as a raw validation error. ancha run's resolved scene still works."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from ancha.scene.loading import load_scene
from ancha.server.embedded import EmbeddedServer
from ancha.world.registry import catalog

SCENE = """\
name: greet
task: Say hello in #general.
clock: { limit: 2h }
world:
  slack:
    users: [{ ref: slack_ana, name: ana }]
    channels: [{ ref: slack_general, name: general, members: [$slack_ana, $slack_bot] }]
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with EmbeddedServer() as running:
        yield running


def _post(server: EmbeddedServer, body: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/envs", json=body, timeout=30)


def test_the_text_of_a_scene_file_makes_a_world(server: EmbeddedServer) -> None:
    answer = _post(server, {"scene": SCENE, "trial": 2})
    assert answer.status_code == 201, answer.text
    context = answer.json()
    assert context["scene"] == "greet" and context["trial"] == 2
    assert httpx.get(f"{server.url}/envs/{context['env_id']}").json()["clock"]["limit_s"] == 7200


def test_a_scene_file_parsed_as_written_makes_a_world(server: EmbeddedServer) -> None:
    answer = _post(server, {"scene": yaml.safe_load(SCENE)})
    assert answer.status_code == 201, answer.text
    assert "slack" in answer.json()["tools"]


def test_ancha_runs_resolved_scene_still_makes_a_world(server: EmbeddedServer, tmp_path: Path) -> None:
    (tmp_path / "scene.yaml").write_text(SCENE)
    resolved = load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True)
    assert _post(server, {"scene": resolved}).status_code == 201


def test_a_bad_scene_is_told_in_the_scene_files_terms(server: EmbeddedServer) -> None:
    answer = _post(server, {"scene": SCENE.replace("limit: 2h", "limit: soon").replace("$slack_ana, ", "$nobody, ")})
    assert answer.status_code == 400
    body = answer.json()
    wheres = [p["where"] for p in body["problems"]]
    assert "scene.yaml:3: clock.limit" in wheres
    assert any("$nobody" in p["message"] for p in body["problems"])
    assert "Input should be" not in answer.text  # no raw validation error
    assert body["error"].startswith("invalid scene: scene.yaml:")
    assert "the text of a scene file" in body["hint"]


@pytest.mark.parametrize(("scene", "says"), [
    ("scenes/greet/scene.yaml", "is the text of a scene file, not a path"),
    (42, "must be the text of a scene file, or a scene file's content as a JSON object"),
])
def test_a_scene_that_is_neither_text_nor_an_object_says_what_to_send(server: EmbeddedServer, scene: Any,
                                                                     says: str) -> None:
    answer = _post(server, {"scene": scene})
    assert answer.status_code == 400
    assert says in answer.json()["error"] and "hint" in answer.json()


DOCS = Path(__file__).resolve().parents[2] / "docs" / "feed-and-control.md"


def _documented(title: str) -> dict[str, Any]:
    text = DOCS.read_text()
    start = text.index(f'```json title="{title}"\n') + len(f'```json title="{title}"\n')
    return json.loads(text[start:text.index("```", start)])


def test_the_documented_request_makes_a_world_and_the_documented_refusal_is_what_the_server_says(
        server: EmbeddedServer) -> None:
    good = _documented("POST /envs")
    assert _post(server, good).status_code == 201
    refused = _documented("POST /envs (400)")
    bad = {"scene": good["scene"].replace("limit: 2h", "limit: soon")}
    assert _post(server, bad).json() == refused


def test_a_resolved_scene_without_its_hash_still_makes_a_world(server: EmbeddedServer, tmp_path: Path) -> None:
    """Scripts (and tests) send the validated model's JSON without path and hash: as before."""
    (tmp_path / "scene.yaml").write_text(SCENE)
    resolved = load_scene(tmp_path / "scene.yaml", catalog()).model_dump(mode="json", by_alias=True)
    for key in ("path", "source_hash"):
        resolved.pop(key)
    assert _post(server, {"scene": resolved}).status_code == 201
