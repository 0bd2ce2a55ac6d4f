"""GitHub webhooks on the agent's event feed: issues, issue comments and labels changed by
people through the real HTTP API arrive in GitHub's shapes (validated against the
vendor's webhook schema), the agent's own writes do not, and signed requests verify as
octokit/webhooks verifies them."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from functools import cache
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from ancha.world.kernel import vendor_data
from ancha.world.tools.github.delivery import HOOKSHOT, delivery_guid, signed_request, start_delivery

GH = Any  # conftest.GH
SCHEMA_URI = "https://schemas.github.test/webhooks.json"


# --- the vendor's webhook schema ------------------------------------------------------------------


@cache
def _registry() -> Registry[Any]:
    resource = Resource.from_contents(vendor_data.read("github", "webhooks")["schema"], default_specification=DRAFT7)
    return Registry().with_resource(SCHEMA_URI, resource)


def definition(event: str, payload: dict[str, Any]) -> str:
    """The schema's definition for a webhook: ``issues$opened``, ``push$event``, ..."""
    return f"{event}${payload['action']}" if "action" in payload else f"{event}$event"


def assert_valid(event: str, payload: dict[str, Any]) -> None:
    registry = _registry()
    schema = {"$ref": f"{SCHEMA_URI}#/definitions/{definition(event, payload)}"}
    validator = jsonschema.Draft7Validator(schema, registry=registry,
                                           format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{event}: {list(e.absolute_path)}: {e.message[:300]}" for e in errors[:5])


# --- an environment whose feed hears GitHub ---------------------------------------------------------


class Hooks:
    """One GitHub world with delivery on, and the tokens of its people."""

    def __init__(self, gh: GH, env: Any) -> None:
        self.gh = gh
        self.env = env
        self.laura = gh.replica.issue_token("laura", "person:laura")
        self.ben = gh.replica.issue_token("ben", "person:ben")
        self.mark = len(env.feed.events)

    def as_person(self, method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        answer = self.gh.raw(method, path, token=token or self.laura, **kwargs)
        assert answer.status_code < 300, answer.text
        return answer.json() if answer.content else None

    def take(self) -> list[tuple[str, dict[str, Any]]]:
        """The GitHub events delivered since the last take, each validated against the schema."""
        events = self.env.feed.events[self.mark:]
        self.mark = len(self.env.feed.events)
        out = []
        for item in events:
            assert item["service"] == "github"
            assert item["at"].endswith("Z")
            assert_valid(item["type"], item["payload"])
            out.append((item["type"], item["payload"]))
        return out

    def kinds(self) -> list[tuple[str, str | None]]:
        return [(kind, body.get("action")) for kind, body in self.take()]


def hooks_for(gh: GH, embedded_server: Any) -> Hooks:
    env = embedded_server.app.registry.get(gh.context["env_id"])
    spec = env.registry.tools["github"]
    if getattr(spec, "delivery", None) is None:  # until the tool's spec registers it
        start_delivery(gh.replica, env)
    return Hooks(gh, env)


@pytest.fixture
def hooks(gh: GH, embedded_server: Any) -> Hooks:
    return hooks_for(gh, embedded_server)


@pytest.fixture
def make_hooks(make_github: Callable[..., GH], embedded_server: Any) -> Callable[..., Hooks]:
    def make(seed: dict[str, Any] | None = None) -> Hooks:
        return hooks_for(make_github(seed), embedded_server)

    return make


# --- issues ---------------------------------------------------------------------------------------


def test_issue_opened__with_labels_and_assignee(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/acme/orders/issues",
                    json={"title": "Refunds fail", "body": "Since 9:00", "labels": ["bug"], "assignees": ["ben"]})
    delivered = hooks.take()
    assert [(k, b["action"]) for k, b in delivered] == [("issues", "opened"), ("issues", "labeled"),
                                                         ("issues", "assigned")]
    kind, opened = delivered[0]
    assert opened["issue"]["title"] == "Refunds fail" and opened["issue"]["number"] == 4
    assert opened["sender"]["login"] == "laura" and "user_view_type" not in opened["sender"]
    assert opened["repository"]["full_name"] == "acme/orders"
    assert opened["organization"]["login"] == "acme"
    assert "installation" not in opened
    assert list(opened)[:2] == ["action", "issue"] and list(opened)[-1] == "sender"
    assert delivered[1][1]["label"]["name"] == "bug"
    assert delivered[2][1]["assignee"]["login"] == "ben"


def test_issue_edited_closed_reopened(hooks: Hooks) -> None:
    hooks.as_person("PATCH", "/repos/acme/orders/issues/1", json={"title": "CSV exports missing", "body": "Gone"})
    hooks.as_person("PATCH", "/repos/acme/orders/issues/1", json={"state": "closed", "state_reason": "not_planned"})
    hooks.as_person("PATCH", "/repos/acme/orders/issues/1", json={"state": "open"})
    delivered = hooks.take()
    assert [b["action"] for _, b in delivered] == ["edited", "closed", "reopened"]
    edited, closed, reopened = (b for _, b in delivered)
    assert edited["changes"] == {"title": {"from": "CSV exports are gone"},
                                 "body": {"from": "Where did exports go? cc @ben"}}
    assert closed["issue"]["state"] == "closed" and closed["issue"]["state_reason"] == "not_planned"
    assert reopened["issue"]["state"] == "open" and reopened["issue"]["closed_at"] is None


def test_issue_labeled_unlabeled_assigned_unassigned(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/acme/orders/issues/1/labels", json={"labels": ["p1"]})
    hooks.as_person("DELETE", "/repos/acme/orders/issues/1/labels/bug")
    hooks.as_person("POST", "/repos/acme/orders/issues/1/assignees", json={"assignees": ["laura"]})
    hooks.as_person("DELETE", "/repos/acme/orders/issues/1/assignees", json={"assignees": ["ben"]})
    delivered = hooks.take()
    assert [b["action"] for _, b in delivered] == ["labeled", "unlabeled", "assigned", "unassigned"]
    assert delivered[0][1]["label"]["name"] == "p1"
    assert delivered[1][1]["label"]["name"] == "bug"
    assert [label["name"] for label in delivered[1][1]["issue"]["labels"]] == ["p1"]
    assert delivered[2][1]["assignee"]["login"] == "laura"
    assert delivered[3][1]["assignee"]["login"] == "ben"


def test_issue_milestone_change__milestoned_not_edited(hooks: Hooks) -> None:
    hooks.as_person("PATCH", "/repos/acme/orders/issues/1", json={"milestone": None})
    assert hooks.kinds() == [("issues", "demilestoned")]


def test_issue_in_a_users_repository__no_organization(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/laura/notes/issues", json={"title": "Todo"})
    [(kind, body)] = hooks.take()
    assert (kind, body["action"]) == ("issues", "opened")
    assert "organization" not in body and body["repository"]["owner"]["login"] == "laura"


# --- issue comments -------------------------------------------------------------------------------


def test_issue_comment_created_edited_deleted(hooks: Hooks) -> None:
    made = hooks.as_person("POST", "/repos/acme/orders/issues/1/comments", json={"body": "Any news?"})
    hooks.as_person("PATCH", f"/repos/acme/orders/issues/comments/{made['id']}", json={"body": "Any news, Ben?"})
    hooks.as_person("DELETE", f"/repos/acme/orders/issues/comments/{made['id']}")
    delivered = hooks.take()
    assert [(k, b["action"]) for k, b in delivered] == [("issue_comment", "created"), ("issue_comment", "edited"),
                                                         ("issue_comment", "deleted")]
    created, edited, deleted = (b for _, b in delivered)
    assert created["comment"]["id"] == made["id"] and created["comment"]["body"] == "Any news?"
    assert created["issue"]["number"] == 1
    assert edited["changes"] == {"body": {"from": "Any news?"}}
    assert deleted["comment"]["body"] == "Any news, Ben?"


def test_issue_comment__seeded_comment_deleted(hooks: Hooks) -> None:
    seeded = hooks.gh.raw("GET", "/repos/acme/orders/issues/1/comments").json()[0]
    hooks.as_person("DELETE", f"/repos/acme/orders/issues/comments/{seeded['id']}")
    [(kind, body)] = hooks.take()
    assert (kind, body["action"], body["comment"]["body"]) == ("issue_comment", "deleted", "Looking into it")


def test_issue_comment_on_a_pull__issue_carries_pull_request(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/acme/orders/issues/3/comments", json={"body": "LGTM"})
    [(kind, body)] = hooks.take()
    assert kind == "issue_comment" and "pull_request" in body["issue"]


# --- labels ---------------------------------------------------------------------------------------


def test_label_created_edited_deleted(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/acme/orders/labels", json={"name": "infra", "color": "123456"})
    hooks.as_person("PATCH", "/repos/acme/orders/labels/infra", json={"new_name": "infrastructure", "color": "654321"})
    hooks.as_person("DELETE", "/repos/acme/orders/labels/infrastructure")
    delivered = hooks.take()
    assert [(k, b["action"]) for k, b in delivered] == [("label", "created"), ("label", "edited"),
                                                         ("label", "deleted")]
    assert delivered[0][1]["label"]["name"] == "infra"
    assert delivered[1][1]["changes"] == {"name": {"from": "infra"}, "color": {"from": "123456"}}
    assert delivered[2][1]["label"]["name"] == "infrastructure"


def test_label_deleted__seeded_label(hooks: Hooks) -> None:
    hooks.as_person("DELETE", "/repos/acme/orders/labels/area%2Fui")
    [(kind, body)] = hooks.take()
    assert (kind, body["action"], body["label"]["color"]) == ("label", "deleted", "0e8a16")


# --- the agent's own writes ---------------------------------------------------------------------


def test_agent_writes__not_delivered(hooks: Hooks) -> None:
    gh = hooks.gh
    assert gh.raw("POST", "/repos/acme/orders/issues", json={"title": "Mine", "labels": ["p1"]}).status_code == 201
    assert gh.raw("POST", "/repos/acme/orders/issues/1/comments", json={"body": "On it"}).status_code == 201
    assert gh.raw("POST", "/repos/acme/orders/labels", json={"name": "agent-made"}).status_code == 201
    assert hooks.take() == []
    hooks.as_person("POST", "/repos/acme/orders/issues/1/comments", json={"body": "Thanks"})
    assert hooks.kinds() == [("issue_comment", "created")]


def test_feed_event__shape(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/acme/orders/issues", json={"title": "Shape"})
    item = hooks.env.feed.events[-1]
    assert set(item) == {"id", "service", "type", "at", "payload"}
    assert (item["service"], item["type"]) == ("github", "issues")


# --- signed requests ------------------------------------------------------------------------------


def verify(secret: str, body: bytes, signature: str) -> bool:
    """octokit/webhooks' ``verify``: HMAC-SHA256 of the raw body, hex, constant-time compare."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode())


def test_signed_request__verifies_as_octokit_does(hooks: Hooks) -> None:
    hooks.as_person("POST", "/repos/acme/orders/issues", json={"title": "Signed", "body": "Ünïcode ✓"})
    [(kind, payload)] = hooks.take()
    guid = delivery_guid(hooks.env)
    headers, body = signed_request(kind, payload, "It's a Secret to Everybody", guid)
    assert json.loads(body) == payload
    assert verify("It's a Secret to Everybody", body, headers["X-Hub-Signature-256"])
    assert not verify("another secret", body, headers["X-Hub-Signature-256"])
    assert not verify("It's a Secret to Everybody", body + b" ", headers["X-Hub-Signature-256"])
    sha1 = "sha1=" + hmac.new(b"It's a Secret to Everybody", body, hashlib.sha1).hexdigest()
    assert hmac.compare_digest(headers["X-Hub-Signature"], sha1)
    assert headers["X-GitHub-Event"] == "issues" and headers["X-GitHub-Delivery"] == guid
    assert headers["Content-Type"] == "application/json" and headers["User-Agent"] == HOOKSHOT
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")


def test_signed_request__github_documented_example() -> None:
    # GitHub's documentation: secret "It's a Secret to Everybody", payload "Hello, World!".
    expected = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    key, text = b"It's a Secret to Everybody", b"Hello, World!"
    assert hmac.new(key, text, hashlib.sha256).hexdigest() == expected
    headers, body = signed_request("ping", {"zen": "Hello"}, "It's a Secret to Everybody", "x")
    assert body == b'{"zen":"Hello"}'
    assert verify("It's a Secret to Everybody", body, headers["X-Hub-Signature-256"])


def test_delivery_guid__from_the_trials_rng(make_hooks: Callable[..., Hooks]) -> None:
    first, second = make_hooks(), make_hooks()
    a, b = delivery_guid(first.env), delivery_guid(second.env)
    assert a == b  # same scene, same trial: same ids
    assert [len(part) for part in a.split("-")] == [8, 4, 4, 4, 12]
    assert delivery_guid(first.env) != a
