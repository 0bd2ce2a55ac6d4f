"""How the Slack replica writes its answers: compact JSON in UTF-8, whatever the values."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import ToolRequest

SCENE: dict[str, Any] = {
    "name": "answer-encoding",
    "world": {"slack": {
        "users": [{"ref": "laura", "name": "laura"}],
        "channels": [{"ref": "support", "name": "support", "members": ["laura", "slack_bot"]}],
        "messages": [{"channel": "support", "from": "laura", "text": f"Café #{i} ☕ \"quoted\" \\ done"}
                     for i in range(3)],
    }},
}


def call(env: Environment, method: str, args: dict[str, str]) -> bytes:
    token = env.tools["slack"].credentials()["token"]
    headers = {"authorization": f"Bearer {token}", "content-type": "application/x-www-form-urlencoded"}
    answer = env.dispatch("slack", ToolRequest("POST", f"/api/{method}", headers=headers,
                                               body=urlencode(args).encode()))
    assert answer.status == 200
    return answer.body


def compact(body: bytes) -> bytes:
    return json.dumps(json.loads(body), ensure_ascii=False, separators=(",", ":")).encode()


def test_a_history_page_is_compact_utf8_json_with_its_messages_as_seeded() -> None:
    env = Environment("e1", Scene.model_validate(SCENE), 1)
    body = call(env, "conversations.history", {"channel": env.ref_id("support"), "limit": "100"})
    assert body == compact(body)
    page = json.loads(body)
    assert page["ok"] is True
    assert [m["text"] for m in page["messages"]] == [f"Café #{i} ☕ \"quoted\" \\ done" for i in (2, 1, 0)]


def test_metadata_with_an_integer_past_64_bits_comes_back_exactly() -> None:
    env = Environment("e1", Scene.model_validate(SCENE), 1)
    big = 2**70 + 1
    metadata = json.dumps({"event_type": "order_made", "event_payload": {"id": big, "note": "é"}})
    body = call(env, "chat.postMessage", {"channel": env.ref_id("support"), "text": "made",
                                          "metadata": metadata})
    assert body == compact(body)
    assert json.loads(body)["message"]["metadata"]["event_payload"] == {"id": big, "note": "é"}
