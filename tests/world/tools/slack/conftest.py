"""Fixtures for the Slack replica's tests: a seeded workspace on the real server, an
official ``slack_sdk.WebClient`` pointed at it, and the vendor's OpenAPI schemas."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jsonschema
import pytest
from slack_sdk import WebClient

from ancha.world.kernel import vendor_data

SCENE: dict[str, Any] = {
    "clock": {"start": "2026-03-02T09:00:00Z"},
    "world": {"slack": {
        "team": {"name": "Acme", "domain": "acme"},
        "users": [
            {"ref": "laura", "name": "laura", "real_name": "Laura Diaz", "email": "laura@acme.test",
             "title": "Support lead", "tz": "Europe/Madrid", "person": "laura"},
            {"ref": "ben", "name": "ben", "real_name": "Ben Okafor", "email": "ben@acme.test"},
        ],
        "channels": [
            {"ref": "support", "name": "support", "members": ["laura", "ben", "slack_bot"],
             "topic": "Customer questions"},
            {"ref": "random", "name": "random", "members": ["laura"]},
            {"ref": "secret", "name": "secret", "private": True, "members": ["laura"]},
            {"ref": "ops", "name": "ops", "private": True, "members": ["ben", "slack_bot"]},
            {"ref": "old", "name": "old", "archived": True, "members": ["laura", "slack_bot"]},
        ],
        "messages": [
            {"ref": "question", "channel": "support", "from": "laura", "text": "Where did CSV exports go?",
             "reactions": {"eyes": ["ben"]}},
            {"ref": "answer", "channel": "support", "from": "ben", "text": "Looking", "thread_of": "question"},
            {"ref": "hello", "channel": "random", "from": "laura", "text": "hello"},
            {"ref": "hidden", "channel": "secret", "from": "laura", "text": "psst"},
        ],
    }},
}


@dataclass
class Slack:
    context: dict[str, Any]
    url: str
    token: str
    client: WebClient

    def channel(self, name: str) -> str:
        for page in self.client.conversations_list(types="public_channel,private_channel", limit=200):
            for channel in page["channels"]:
                if channel["name"] == name:
                    return str(channel["id"])
        raise KeyError(name)

    def raw(self, method: str, http: str = "POST", **kwargs: Any) -> httpx.Response:
        return httpx.request(http, f"{self.url}/api/{method}", timeout=10, **kwargs)

    def state(self) -> dict[str, Any]:
        base = self.url.rsplit("/slack", 1)[0]
        return dict(httpx.get(f"{base}/state", timeout=10).json()["slack"])


@pytest.fixture
def slack_scene() -> dict[str, Any]:
    """A fresh copy of the seeded workspace scene the tests share."""
    return copy.deepcopy(SCENE)


@pytest.fixture
def make_slack(make_env: Callable[..., dict[str, Any]]) -> Callable[..., Slack]:
    def make(scene: dict[str, Any] | None = None, trial: int = 1) -> Slack:
        context = make_env(copy.deepcopy(scene or SCENE), trial)
        tool = context["tools"]["slack"]
        client = WebClient(token=tool["token"], base_url=tool["url"] + "/api/")
        return Slack(context, tool["url"], tool["token"], client)

    return make


@pytest.fixture
def slack(make_slack: Callable[..., Slack]) -> Slack:
    return make_slack()


# --- the vendor's response schemas ------------------------------------------------------

# Fields current Slack sends that the 2020 OpenAPI file predates.
_NEWER_MESSAGE_FIELDS = {"app_id": {"type": "string"}, "edited": {"type": "object"},
                         "metadata": {"type": "object"}, "is_locked": {"type": "boolean"},
                         "parent_user_id": {"type": "string"}}
_NEWER_TOP_FIELDS = {"response_metadata": {"type": "object"}, "warning": {"type": "string"}}


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    spec: dict[str, Any] = copy.deepcopy(vendor_data.read("slack", "web_api")["openapi"])
    message = spec["definitions"]["objs_message"]
    message["properties"].update(_NEWER_MESSAGE_FIELDS)
    # The spec's own example attachment has "text", which its schema forbids.
    message["properties"]["attachments"]["items"]["additionalProperties"] = True
    return spec


@pytest.fixture
def matches_spec(openapi: dict[str, Any]) -> Callable[[str, dict[str, Any]], None]:
    """Assert a body fits the vendor's 200 schema for the method."""

    def check(method: str, body: dict[str, Any]) -> None:
        path = openapi["paths"][f"/{method}"]
        operation = path.get("get") or path.get("post")
        schema = copy.deepcopy(operation["responses"]["200"]["schema"])
        schema.setdefault("properties", {}).update(_NEWER_TOP_FIELDS)
        if method == "chat.update":  # the spec types blocks as an object; Slack sends a list
            schema["properties"]["message"]["properties"]["blocks"] = {"type": "array"}
        jsonschema.Draft4Validator({**schema, "definitions": openapi["definitions"]}).validate(body)

    return check
