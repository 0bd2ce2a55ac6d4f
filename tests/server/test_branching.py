"""The control API's replay and fork routes, as a user's own harness drives them (issue 30).

A checkpoint (``POST /envs/{id}/checkpoint``) is the world as it stands; ``POST /envs
{"from_checkpoint": id}`` starts another world there (Slack's messages, PagerDuty's incidents,
the clock and what was due), which then goes its own way. Its bytes come back with ``GET
/checkpoints/{id}`` and are taken back (``POST /checkpoints``) only as this machine signed
them. A world built with ``"replay": true`` makes an agent's recorded calls (``GET`` then
``POST /envs/{id}/calls``) at the instants they arrived: the same scene, trial, seed and calls
give the same world, byte for byte. Every tool call here goes through the vendor's own SDK.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
import pagerduty
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from ancha.server.embedded import EmbeddedServer
from ancha.world.signing import sign

SCENE = """\
name: branching
clock: { start: 2026-03-02T14:00:00Z, limit: 2h }
world:
  slack:
    users: [{ ref: slack_maya, name: maya }]
    channels: [{ ref: slack_incidents, name: incidents, members: [$slack_maya, $slack_bot] }]
  pagerduty:
    agent: { ref: pagerduty_agent, name: Acme Bot, email: bot@acme.test }
    escalation_policies:
      - { ref: pagerduty_policy, name: orders, rules: [{ delay: 5m, targets: [$pagerduty_agent] }] }
    services:
      - { ref: pagerduty_orders, name: orders, escalation_policy: $pagerduty_policy }
world_rules:
  events:
    - at: 6m
      do:
        - slack.message: { channel: $slack_incidents, from: $slack_maya, text: "Any news?" }
"""
START = "2026-03-02T14:00:00Z"
SEED = 4242
SERVER_KEY = "branching-test-key"
UNSIGNED_HINT = "only checkpoints this machine's Ancha made are taken"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@dataclass
class World:
    """One environment on the server, seen as an agent sees it: through the vendors' SDKs."""

    context: dict[str, Any]
    slack: WebClient
    pagerduty: pagerduty.RestApiV2Client

    @property
    def id(self) -> str:
        return str(self.context["env_id"])

    def channel(self) -> str:
        return str(self.slack.conversations_list()["channels"][0]["id"])

    def messages(self) -> list[str]:
        return [m["text"] for m in self.slack.conversations_history(channel=self.channel())["messages"]]

    def service(self) -> str:
        return str(self.pagerduty.list_all("services")[0]["id"])

    def incident(self, incident_id: str) -> dict[str, Any]:
        found = self.pagerduty.rget(f"incidents/{incident_id}")
        assert isinstance(found, dict)
        return found


def as_world(context: dict[str, Any]) -> World:
    slack, pd = context["tools"]["slack"], context["tools"]["pagerduty"]
    return World(context, WebClient(token=slack["token"], base_url=slack["url"] + "/api/"),
                 pagerduty.RestApiV2Client(pd["token"], default_from=pd["from_email"], base_url=pd["url"]))


@pytest.fixture
def control(ancha_server: str) -> Iterator[httpx.Client]:
    """The control API, as a harness calls it; every environment made through it is torn down."""
    with httpx.Client(base_url=ancha_server, timeout=60) as client:
        yield client
        for env in client.get("/envs").json()["envs"]:
            if env.get("scene") == "branching":
                client.delete(f"/envs/{env['id']}")


@pytest.fixture
def create(control: httpx.Client) -> Callable[..., dict[str, Any]]:
    """``POST /envs`` with the scene and these fields; the context of the world it made."""

    def make(**fields: Any) -> dict[str, Any]:
        body = fields if "from_checkpoint" in fields else {"scene": SCENE, **fields}
        answer = control.post("/envs", json=body)
        assert answer.status_code == 201, answer.text
        context: dict[str, Any] = answer.json()
        return context

    return make


@pytest.fixture(scope="module")
def keyed_server() -> Iterator[EmbeddedServer]:
    """Another server, with a key: as a checkpoint is brought to a later run's server."""
    with EmbeddedServer(key=SERVER_KEY) as server:
        yield server


def checkpoint(control: httpx.Client, env_id: str) -> dict[str, Any]:
    answer = control.post(f"/envs/{env_id}/checkpoint")
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


def status(control: httpx.Client, env_id: str) -> dict[str, Any]:
    answer = control.get(f"/envs/{env_id}")
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def recorded_calls(control: httpx.Client, env_id: str) -> list[dict[str, Any]]:
    answer = control.get(f"/envs/{env_id}/calls")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in answer.text.splitlines()]


def make_calls(control: httpx.Client, env_id: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = control.post(f"/envs/{env_id}/calls", json=body)
    assert answer.status_code == 200, answer.text
    made: dict[str, Any] = answer.json()
    return made


def open_incident(world: World, title: str) -> str:
    created = world.pagerduty.rpost("incidents", json={
        "type": "incident", "title": title, "service": {"id": world.service(), "type": "service_reference"}})
    assert isinstance(created, dict) and created["status"] == "triggered"
    return str(created["id"])


def acknowledge(world: World, incident_id: str) -> None:
    world.pagerduty.rput(f"incidents/{incident_id}", json={"type": "incident_reference", "status": "acknowledged"})


def instant(text: str) -> datetime:
    """An instant as the control API writes it (``2026-03-02T14:05:00Z``, or with microseconds)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def world_of(control: httpx.Client, env_id: str) -> tuple[str, str, str]:
    """What a replay must make again: the final state, the records and the trace, as bytes."""
    return (control.get(f"/envs/{env_id}/state").text, control.get(f"/envs/{env_id}/records").text,
            control.get(f"/envs/{env_id}/trace").text)


# --- checkpoints --------------------------------------------------------------------------


def test_checkpoint__answers_201_with_its_id_size_instant_and_seq(control: httpx.Client,
                                                                  create: Callable[..., dict[str, Any]]) -> None:
    world = as_world(create(seed=SEED))
    world.slack.chat_postMessage(channel=world.channel(), text="Looking into it")
    before = status(control, world.id)["clock"]["now"]
    made = checkpoint(control, world.id)
    after = status(control, world.id)["clock"]["now"]
    assert made["checkpoint"].startswith("ckpt_")
    assert made["env_id"] == world.id and made["scene"] == "branching" and made["seed"] == SEED
    assert made["seq"] == 2  # conversations.list, chat.postMessage
    assert made["status"] == "running"
    assert instant(before) <= instant(made["at"]) <= instant(after)
    data = control.get(f"/checkpoints/{made['checkpoint']}")
    assert data.status_code == 200 and data.headers["content-type"] == "application/octet-stream"
    assert len(data.content) == made["bytes"]
    assert data.content.startswith(b"ancha-signature ")
    assert control.get(f"/checkpoints/{made['checkpoint']}").content == data.content


def test_fork__starts_from_the_originals_slack_and_pagerduty_then_goes_its_own_way(
        control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    original = as_world(create(seed=SEED))
    original.slack.chat_postMessage(channel=original.channel(), text="Orders are slow, on it")
    incident = open_incident(original, "Orders p99 above 2s")
    made = checkpoint(control, original.id)

    fork = as_world(create(from_checkpoint=made["checkpoint"]))
    assert fork.id != original.id
    assert fork.context["forked_at"] == made["at"] and fork.context["forked_seq"] == made["seq"]
    assert instant(fork.context["clock"]["now"]) >= instant(made["at"])
    assert fork.messages() == ["Orders are slow, on it"]
    assert fork.incident(incident)["status"] == "triggered"

    acknowledge(fork, incident)
    fork.slack.chat_postMessage(channel=fork.channel(), text="Only in the fork")
    original.slack.chat_postMessage(channel=original.channel(), text="Only in the original")

    assert fork.incident(incident)["status"] == "acknowledged"
    assert original.incident(incident)["status"] == "triggered"
    assert fork.messages() == ["Only in the fork", "Orders are slow, on it"]
    assert original.messages() == ["Only in the original", "Orders are slow, on it"]


def test_fork__keeps_the_originals_clock_and_what_was_due(control: httpx.Client,
                                                          create: Callable[..., dict[str, Any]]) -> None:
    original = create(seed=SEED, replay=True)  # its clock stands where the calls leave it: at 5m
    make_calls(control, original["env_id"], {"until": "2026-03-02T14:05:00Z"})
    made = checkpoint(control, original["env_id"])
    assert made["at"] == "2026-03-02T14:05:00Z"

    fork = as_world(create(from_checkpoint=made["checkpoint"], agent={"mode": "command"}))
    assert instant("2026-03-02T14:05:00Z") <= instant(fork.context["clock"]["now"]) < instant("2026-03-02T14:06:00Z")
    assert fork.messages() == []
    # The agent waits: the fork's clock jumps to what the original had due at 6m.
    events = control.get(fork.context["events"]["url"], params={"after": 0, "wait": "10m"},
                         headers={"authorization": f"Bearer {fork.context['events']['token']}"})
    assert events.status_code == 200, events.text
    assert [e["payload"]["event"]["text"] for e in events.json()["events"]] == ["Any news?"]
    assert fork.messages() == ["Any news?"]
    assert instant(status(control, fork.id)["clock"]["now"]) >= instant("2026-03-02T14:06:00Z")

    assert status(control, original["env_id"])["clock"]["now"] == "2026-03-02T14:05:00Z"
    assert "Any news?" not in control.get(f"/envs/{original['env_id']}/state").text


def test_fork__of_an_unknown_checkpoint_is_404_saying_how_to_make_one(control: httpx.Client) -> None:
    for answer in (control.post("/envs", json={"from_checkpoint": "ckpt_0000000000000000"}),
                   control.get("/checkpoints/ckpt_0000000000000000")):
        assert answer.status_code == 404
        assert "ckpt_0000000000000000" in answer.json()["error"]
        assert "POST /envs/{id}/checkpoint" in answer.json()["hint"]


def test_fork__into_another_scene_is_refused_naming_both(control: httpx.Client,
                                                         create: Callable[..., dict[str, Any]]) -> None:
    made = checkpoint(control, create()["env_id"])
    other = SCENE.replace("name: branching", "name: branching-other")
    answer = control.post("/envs", json={"from_checkpoint": made["checkpoint"], "scene": other})
    assert answer.status_code == 422
    assert "the checkpoint is of scene branching" in answer.json()["error"]


def test_fork__with_an_env_id_in_use_is_409(control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    env_id = create()["env_id"]
    made = checkpoint(control, env_id)
    answer = control.post("/envs", json={"from_checkpoint": made["checkpoint"], "env_id": env_id})
    assert answer.status_code == 409
    assert env_id in answer.json()["error"]


# --- bringing a checkpoint back ---------------------------------------------------------------


def test_upload__a_downloaded_checkpoint_is_taken_back_and_forks_with_its_scene(
        control: httpx.Client, create: Callable[..., dict[str, Any]], keyed_server: EmbeddedServer) -> None:
    original = as_world(create(seed=SEED))
    original.slack.chat_postMessage(channel=original.channel(), text="Kept in the checkpoint")
    made = checkpoint(control, original.id)
    data = control.get(f"/checkpoints/{made['checkpoint']}").content

    key = {"authorization": f"Bearer {SERVER_KEY}"}
    with httpx.Client(base_url=keyed_server.url, timeout=60, headers=key) as later:
        brought = later.post("/checkpoints", content=data)
        assert brought.status_code == 201, brought.text
        kept = brought.json()
        assert kept["checkpoint"].startswith("ckpt_")
        assert {k: kept[k] for k in ("bytes", "env_id", "at", "seq", "seed")} == \
               {k: made[k] for k in ("bytes", "env_id", "at", "seq", "seed")}
        assert later.get(f"/checkpoints/{kept['checkpoint']}").content == data

        # This server never saw the scene: it asks for it, then forks.
        unseen = later.post("/envs", json={"from_checkpoint": kept["checkpoint"]})
        assert unseen.status_code == 404 and unseen.json()["hint"] == "send the scene itself in 'scene'"
        forked = later.post("/envs", json={"from_checkpoint": kept["checkpoint"], "scene": SCENE})
        assert forked.status_code == 201, forked.text
        try:
            assert as_world(forked.json()).messages() == ["Kept in the checkpoint"]
        finally:
            later.delete(f"/envs/{forked.json()['env_id']}")


def test_checkpoint_routes__need_the_servers_key_when_it_has_one(keyed_server: EmbeddedServer) -> None:
    for method, path in (("POST", "/checkpoints"), ("GET", "/checkpoints/ckpt_0000000000000000"),
                         ("POST", "/envs/env_000000000000/checkpoint"), ("GET", "/envs/env_000000000000/calls")):
        answer = httpx.request(method, keyed_server.url + path, content=b"x" if method == "POST" else None)
        assert answer.status_code == 401, path
        assert "Authorization: Bearer" in answer.json()["hint"]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + (b"0" if data[at:at + 1] != b"0" else b"1") + data[at + 1:]


@pytest.mark.parametrize("tamper, message", [
    (lambda data: _flip(data, len(b"ancha-signature ")), "was not signed on this machine (or was changed since)"),
    (lambda data: _flip(data, len(data) - 1), "was not signed on this machine (or was changed since)"),
    (lambda data: data.replace(b"ancha-checkpoint {", b"ancha-checkpoint  {", 1),
     "was not signed on this machine (or was changed since)"),
    (lambda data: data.partition(b"\n")[2], "the checkpoint is not signed"),
    (lambda data: b"", "the checkpoint is not signed"),
    (lambda data: b"ancha-signature \n", "was not signed on this machine"),
], ids=["signature-changed", "body-changed", "header-changed", "signature-removed", "empty", "signature-empty"])
def test_upload__a_changed_or_unsigned_checkpoint_is_refused(control: httpx.Client,
                                                             create: Callable[..., dict[str, Any]],
                                                             tamper: Callable[[bytes], bytes], message: str) -> None:
    made = checkpoint(control, create()["env_id"])
    data = control.get(f"/checkpoints/{made['checkpoint']}").content
    answer = control.post("/checkpoints", content=tamper(data))
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("invalid checkpoint: ") and message in answer.json()["error"]
    assert UNSIGNED_HINT in answer.json()["hint"] and "replaying its calls" in answer.json()["hint"]


def test_upload__a_signed_file_that_is_no_checkpoint_is_refused(control: httpx.Client) -> None:
    for body, message in ((b"hello", "not an Ancha checkpoint"),
                          (b'ancha-checkpoint {"format": 1}\n', "the checkpoint's header is unreadable"),
                          (b"ancha-checkpoint [1, 2\n", "the checkpoint's header is unreadable")):
        answer = control.post("/checkpoints", content=sign(body))
        assert answer.status_code == 400, body
        assert message in answer.json()["error"]


def test_fork__of_a_checkpoint_from_another_ancha_build_says_to_replay(control: httpx.Client,
                                                                       create: Callable[..., dict[str, Any]]) -> None:
    made = checkpoint(control, create()["env_id"])
    data = control.get(f"/checkpoints/{made['checkpoint']}").content
    body = data.partition(b"\n")[2]
    head, _, pickled = body.partition(b"\n")
    header = json.loads(head.removeprefix(b"ancha-checkpoint "))
    header["ancha"] = "0.0.1+000000000000"
    older = b"ancha-checkpoint " + json.dumps(header).encode() + b"\n" + pickled
    brought = control.post("/checkpoints", content=sign(older))
    assert brought.status_code == 201, brought.text
    answer = control.post("/envs", json={"from_checkpoint": brought.json()["checkpoint"]})
    assert answer.status_code == 422
    assert "made by Ancha 0.0.1+000000000000" in answer.json()["error"]
    assert "rebuild the world by replaying its trace" in answer.json()["error"]


# --- POST /envs: env_id, seed ---------------------------------------------------------------


def test_create_env__takes_the_env_id_it_is_given(create: Callable[..., dict[str, Any]]) -> None:
    context = create(env_id="env_0123456789ab")
    assert context["env_id"] == "env_0123456789ab"
    assert "/envs/env_0123456789ab/slack" in context["tools"]["slack"]["url"]


def test_create_env__an_env_id_in_use_is_409(control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    env_id = create()["env_id"]
    answer = control.post("/envs", json={"scene": SCENE, "env_id": env_id})
    assert answer.status_code == 409
    assert answer.json() == {"error": f"the environment {env_id} exists on this server",
                             "hint": "leave env_id out for a new one"}


@pytest.mark.parametrize("env_id", ["env_123", "env_0123456789AB", "env_0123456789abc", "0123456789ab", "",
                                    "env_0123456789ab\n", "env_0123456789ab/x", 12, ["env_0123456789ab"], True])
def test_create_env__a_malformed_env_id_is_400(control: httpx.Client, env_id: Any) -> None:
    answer = control.post("/envs", json={"scene": SCENE, "env_id": env_id})
    assert answer.status_code == 400, answer.text
    assert "'env_id' must be env_ and 12 hex digits" in answer.json()["error"]


@pytest.mark.parametrize("field, value, message", [
    ("seed", "7", "'seed' must be a whole number from 0 to 2**63-1"),
    ("seed", -1, "'seed' must be a whole number from 0 to 2**63-1"),
    ("seed", 2**63, "'seed' must be a whole number from 0 to 2**63-1"),
    ("seed", 1.5, "'seed' must be a whole number from 0 to 2**63-1"),
    ("seed", True, "'seed' must be a whole number from 0 to 2**63-1"),
    ("replay", "yes", "'replay' must be true or false"),
    ("replay", 1, "'replay' must be true or false"),
])
def test_create_env__a_wrong_seed_or_replay_is_400(control: httpx.Client, field: str, value: Any, message: str) -> None:
    answer = control.post("/envs", json={"scene": SCENE, field: value})
    assert answer.status_code == 400
    assert message in answer.json()["error"]


def _identity(context: dict[str, Any]) -> dict[str, Any]:
    world = as_world(context)
    slack, pd = context["tools"]["slack"], context["tools"]["pagerduty"]
    return {"slack_token": slack["token"], "signing_secret": slack["signing_secret"], "team": slack["team_id"],
            "bot": slack["bot_user_id"], "channel": world.channel(), "pagerduty_token": pd["token"],
            "routing_key": pd["routing_key"], "service": world.service()}


def test_seed__decides_tokens_and_ids(create: Callable[..., dict[str, Any]]) -> None:
    first, again, other = (_identity(create(seed=seed)) for seed in (SEED, SEED, SEED + 1))
    assert first == again
    assert all(first[key] != other[key] for key in first), (first, other)


def test_seed__left_out_draws_tokens_at_random(create: Callable[..., dict[str, Any]]) -> None:
    first, second = _identity(create()), _identity(create())
    assert first["slack_token"] != second["slack_token"]
    assert first["pagerduty_token"] != second["pagerduty_token"]
    assert create()["seed"] is None


# --- recorded calls and replays -------------------------------------------------------------


def test_calls__are_the_agents_calls_as_it_made_them(control: httpx.Client,
                                                     create: Callable[..., dict[str, Any]]) -> None:
    world = as_world(create(seed=SEED))
    channel = world.channel()
    world.slack.chat_postMessage(channel=channel, text="Rolling back")
    incident = open_incident(world, "Orders slow")
    calls = recorded_calls(control, world.id)
    assert [(c["seq"], c["tool"], c["method"], c["path"]) for c in calls] == [
        (1, "slack", "POST", "/api/conversations.list"), (2, "slack", "POST", "/api/chat.postMessage"),
        (3, "pagerduty", "GET", "/services"), (4, "pagerduty", "POST", "/incidents")]
    posted = calls[1]
    assert json.loads(posted["body"]) == {"channel": channel, "text": "Rolling back"}
    assert posted["headers"]["authorization"] == f"Bearer {world.context['tools']['slack']['token']}"
    assert posted["arrived"].startswith("2026-03-02T14:00:") and posted["arrived"].endswith("Z")
    assert [c["arrived"] for c in calls] == sorted(c["arrived"] for c in calls)
    assert json.loads(calls[3]["body"])["incident"]["title"] == "Orders slow"
    assert calls[3]["headers"]["from"] == "bot@acme.test"
    assert world.incident(incident)["title"] == "Orders slow"


def test_calls__page_after_a_seq(control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    world = as_world(create())
    for text in ("one", "two", "three"):
        world.slack.chat_postMessage(channel="incidents", text=text)
    first = control.get(f"/envs/{world.id}/calls", params={"limit": 2})
    assert [json.loads(line)["seq"] for line in first.text.splitlines()] == [1, 2]
    assert first.headers["ancha-trace-next"] == "2"
    last = control.get(f"/envs/{world.id}/calls", params={"after": 2, "limit": 2})
    assert [json.loads(line)["seq"] for line in last.text.splitlines()] == [3]
    assert "ancha-trace-next" not in last.headers


@pytest.mark.parametrize("query", ["after=-1", "after=x", "limit=0", "limit=10001", "limit=abc", "after=" + "9" * 5000])
def test_calls__bad_paging_is_400_with_a_hint(control: httpx.Client, create: Callable[..., dict[str, Any]],
                                              query: str) -> None:
    answer = control.get(f"/envs/{create()['env_id']}/calls?{query}")
    assert answer.status_code == 400
    assert answer.json() == {"error": "invalid calls query", "hint": "page with ?after=SEQ&limit=N (1 <= N <= 10000)"}


def test_calls__of_an_unknown_environment_is_404(control: httpx.Client) -> None:
    for method, path in (("GET", "/envs/env_000000000000/calls"), ("POST", "/envs/env_000000000000/calls"),
                         ("POST", "/envs/env_000000000000/checkpoint")):
        answer = control.request(method, path)
        assert answer.status_code == 404, path
        assert "env_000000000000" in answer.json()["error"]


def test_replay__the_same_seed_trial_and_calls_remake_the_world_byte_for_byte(
        control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    original = as_world(create(seed=SEED, trial=2))
    original.slack.chat_postMessage(channel=original.channel(), text="Looking into orders")
    incident = open_incident(original, "Orders slow")
    acknowledge(original, incident)
    ended = control.post(original.context["done_url"],
                         headers={"authorization": f"Bearer {original.context['trial_token']}"})
    assert ended.status_code == 200
    calls = recorded_calls(control, original.id)
    ending = {"at": status(control, original.id)["clock"]["ended_at"], "status": "done",
              "reason": "the done URL was called"}
    was = world_of(control, original.id)
    assert control.delete(f"/envs/{original.id}").status_code == 204

    remade = []
    for _ in range(2):  # a replay takes its original's id: the world writes it into its URLs
        create(seed=SEED, trial=2, replay=True, env_id=original.id)
        answer = make_calls(control, original.id, {"calls": calls, "end": ending})
        assert answer["made"] == len(calls) == 5 and answer["status"] == "done"
        remade.append(world_of(control, original.id))
        assert control.delete(f"/envs/{original.id}").status_code == 204
    assert remade[0] == remade[1]
    assert remade[0] == was
    assert '"acknowledged"' in was[0] and "Looking into orders" in was[0]


def test_replay__another_seed_gives_another_world_for_the_same_calls(control: httpx.Client,
                                                                     create: Callable[..., dict[str, Any]]) -> None:
    original = as_world(create(seed=SEED))
    original.slack.chat_postMessage(channel=original.channel(), text="Looking into orders")
    calls = recorded_calls(control, original.id)
    states = []
    for seed in (SEED, SEED + 1):
        replayed = create(seed=seed, replay=True)
        make_calls(control, replayed["env_id"], {"calls": calls})
        states.append(json.loads(control.get(f"/envs/{replayed['env_id']}/state").text)["slack"])
    assert states[0]["team"]["id"] != states[1]["team"]["id"]
    assert states[0]["channels"][0]["id"] != states[1]["channels"][0]["id"]


def test_make_calls__refused_409_in_a_world_on_its_own_clock(control: httpx.Client,
                                                             create: Callable[..., dict[str, Any]]) -> None:
    live = create()
    answer = control.post(f"/envs/{live['env_id']}/calls", json={"calls": []})
    assert answer.status_code == 409
    assert "runs on its own clock" in answer.json()["error"] and '"replay": true' in answer.json()["hint"]


def test_make_calls__until_lets_the_world_go_on_to_an_instant(control: httpx.Client,
                                                              create: Callable[..., dict[str, Any]]) -> None:
    env_id = create(seed=SEED, replay=True)["env_id"]
    assert status(control, env_id)["clock"]["now"] == START
    at_five = make_calls(control, env_id, {"until": "2026-03-02T14:05:00Z"})
    assert at_five["clock"]["now"] == "2026-03-02T14:05:00Z" and at_five["pending"] == 1
    assert "Any news?" not in control.get(f"/envs/{env_id}/records").text
    at_ten = make_calls(control, env_id, {"until": "2026-03-02T14:10:00Z"})
    assert at_ten["clock"]["now"] == "2026-03-02T14:10:00Z" and at_ten["pending"] == 0
    message = json.loads(control.get(f"/envs/{env_id}/records").text.splitlines()[0])
    assert message["kind"] == "message" and message["text"] == "Any news?"
    assert message["at"] == "2026-03-02T14:06:00Z"  # when it was due, not when the replay got there
    assert at_ten["status"] == "running"


def test_make_calls__end_finishes_the_trial_where_the_original_ended(control: httpx.Client,
                                                                     create: Callable[..., dict[str, Any]]) -> None:
    env_id = create(seed=SEED, replay=True)["env_id"]
    ended = make_calls(control, env_id, {"end": {"at": "2026-03-02T14:20:00Z", "status": "done",
                                                 "reason": "the agent finished"}})
    assert ended["status"] == "done" and ended["ended_reason"] == "the agent finished"
    assert ended["clock"]["ended_at"] == "2026-03-02T14:20:00Z"
    assert "Any news?" in control.get(f"/envs/{env_id}/records").text  # what was due by then happened first
    defaults = create(seed=SEED, replay=True)["env_id"]
    assert make_calls(control, defaults, {"end": {"at": "2026-03-02T14:01:00Z"}})["ended_reason"] == "the replay ended"


def test_make_calls__an_end_before_the_worlds_clock_or_going_on_after_the_end_is_400(
        control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    env_id = create(seed=SEED, replay=True)["env_id"]
    make_calls(control, env_id, {"until": "2026-03-02T14:05:00Z"})
    early = control.post(f"/envs/{env_id}/calls", json={"end": {"at": "2026-03-02T14:01:00Z"}})
    assert early.status_code == 400 and "is before the world's clock" in early.json()["error"]
    assert status(control, env_id)["status"] == "running"
    make_calls(control, env_id, {"end": {"at": "2026-03-02T14:06:00Z"}})
    later = control.post(f"/envs/{env_id}/calls", json={"until": "2026-03-02T14:30:00Z"})
    assert later.status_code == 400 and "it goes on no further" in later.json()["error"]
    assert status(control, env_id)["clock"]["now"].startswith("2026-03-02T14:06:00")  # it stood still


def test_fork__with_a_changed_scene_that_is_invalid_is_400_in_the_scene_files_terms(
        control: httpx.Client, create: Callable[..., dict[str, Any]]) -> None:
    made = checkpoint(control, create(seed=SEED)["env_id"])
    answer = control.post("/envs", json={"from_checkpoint": made["checkpoint"],
                                         "patched_scene": {"name": "branching", "clock": {"limit": "soon"}}})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"].startswith("invalid scene: ") and "errors.pydantic.dev" not in answer.text


def test_make_calls__a_call_before_the_worlds_clock_is_400(control: httpx.Client,
                                                           create: Callable[..., dict[str, Any]]) -> None:
    original = as_world(create(seed=SEED))
    original.slack.chat_postMessage(channel=original.channel(), text="first")
    calls = recorded_calls(control, original.id)
    env_id = create(seed=SEED, replay=True)["env_id"]
    make_calls(control, env_id, {"calls": calls})
    answer = control.post(f"/envs/{env_id}/calls", json={"calls": calls[:1]})
    assert answer.status_code == 400
    assert "calls must come in the order they were made" in answer.json()["error"]


CALL = {"seq": 1, "arrived": "2026-03-02T14:00:01Z", "tool": "slack", "method": "POST",
        "path": "/api/auth.test", "query": "", "headers": {}, "body": ""}


@pytest.mark.parametrize("body, message", [
    (b"not json", "invalid calls: "),
    (b"[1]", 'send {"calls": [...]'),
    (b'{"calls": "all"}', 'send {"calls": [...]'),
    (json.dumps({"calls": [1]}).encode(), "calls[0]: a call is a JSON object"),
    (json.dumps({"calls": [{**CALL, "seq": None}]}).encode(), "calls[0]: "),
    (json.dumps({"calls": [{k: v for k, v in CALL.items() if k != "tool"}]}).encode(), "calls[0]: 'tool'"),
    (json.dumps({"calls": [{**CALL, "arrived": "2026-03-02T14:00:01"}]}).encode(), "has no time zone"),
    (json.dumps({"calls": [{**CALL, "arrived": 5}]}).encode(), "calls[0]: "),
    (json.dumps({"calls": [{**CALL, "headers": {"a": 1}}]}).encode(), "headers must be an object of strings"),
    (json.dumps({"calls": [{**CALL, "body_base64": "!!"}]}).encode(), "calls[0]: "),
    (json.dumps({"calls": [{**CALL, "tool": "jira"}]}).encode(), "this world has no jira"),
    (b'{"end": "now"}', "end must be {"),
    (b'{"end": {"at": 5}}', "end must be {"),
    (b'{"end": {"at": "soon"}}', "invalid calls: "),
    (b'{"until": 5}', "until must be an instant"),
    (b'{"until": "soon"}', "invalid calls: "),
    (b'{"until": "2026-03-02T14:05:00"}', "has no time zone"),
])
def test_make_calls__bad_bodies_are_400_with_a_reason(control: httpx.Client, create: Callable[..., dict[str, Any]],
                                                      body: bytes, message: str) -> None:
    env_id = create(replay=True)["env_id"]
    answer = control.post(f"/envs/{env_id}/calls", content=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"].startswith("invalid calls: ") and message in answer.json()["error"]
    assert status(control, env_id)["trace_entries"] == 0


# --- never a 500 ------------------------------------------------------------------------------

KEPT = "a checkpoint of a world of the scene"

recorded_call = st.fixed_dictionaries({}, optional={
    "seq": st.integers(-2, 2**70) | json_values,
    "arrived": st.sampled_from(["2026-03-02T14:00:01Z", "2026-03-02T13:00:00Z", "9999-12-31T23:59:59Z",
                                "0001-01-01T00:00:00Z", "2026-03-02T14:00:01+14:00", "yesterday"]) | json_values,
    "tool": st.sampled_from(["slack", "pagerduty", "jira", ""]) | json_values,
    "method": st.sampled_from(["GET", "POST", "PUT", "DELETE", "BREW", ""]) | json_values,
    "path": st.sampled_from(["/api/chat.postMessage", "/incidents", "/", "", "../x", "/api/\x00"]) | st.text(max_size=20),
    "query": st.text(max_size=20) | json_values,
    "headers": st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=3) | json_values,
    "body": st.sampled_from(['{"channel": "incidents", "text": "hi"}', "{", ""]) | json_values,
    "body_base64": st.sampled_from(["aGk=", "!!", ""]) | json_values,
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.fixed_dictionaries({}, optional={
    "calls": st.lists(recorded_call, max_size=3) | json_values,
    "until": st.sampled_from(["2026-03-02T14:10:00Z", "2026-03-02T13:00:00Z", "x"]) | json_values,
    "end": st.fixed_dictionaries({}, optional={"at": st.sampled_from(["2026-03-02T14:30:00Z", "x"]) | json_values,
                                               "status": json_values, "reason": json_values}) | json_values,
}))
def test_make_calls__never_500_on_any_json_body(control: httpx.Client, create: Callable[..., dict[str, Any]],
                                                body: dict[str, Any]) -> None:
    env_id = create(replay=True)["env_id"]
    answer = control.post(f"/envs/{env_id}/calls", json=body)
    assert answer.status_code in (200, 400), answer.text
    control.delete(f"/envs/{env_id}")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.fixed_dictionaries({}, optional={
    "seed": st.integers(-2, 2**64) | json_values,
    "env_id": st.sampled_from(["env_0123456789ab", "env_x", "env_0123456789ab\n"]) | json_values,
    "replay": json_values,
    "from_checkpoint": st.sampled_from([KEPT, "ckpt_0000000000000000", ""]) | json_values,
    "patched_scene": st.sampled_from([{"name": "branching", "world": {"slack": {}}}]) | json_values,
    "trial": json_values,
    "scene": st.sampled_from([SCENE, SCENE.replace("branching", "branching-other")]) | json_values,
}))
def test_create_env__never_500_on_any_branching_fields(control: httpx.Client, create: Callable[..., dict[str, Any]],
                                                       fields: dict[str, Any]) -> None:
    if fields.get("from_checkpoint") == KEPT:
        fields["from_checkpoint"] = checkpoint(control, create()["env_id"])["checkpoint"]
    answer = control.post("/envs", json=fields)
    assert answer.status_code in (201, 400, 404, 409, 422), answer.text
    if answer.status_code == 201:
        control.delete(f"/envs/{answer.json()['env_id']}")


SEEDED_SCENE = SCENE.replace(
    "    channels: [{ ref: slack_incidents, name: incidents, members: [$slack_maya, $slack_bot] }]\n",
    "    channels: [{ ref: slack_incidents, name: incidents, members: [$slack_maya, $slack_bot] }]\n"
    "    messages:\n"
    + "".join(f'      - {{ channel: $slack_incidents, from: {"$slack_bot" if n == 4 else "$slack_maya"},'
              f' text: "seeded {n}", at: -{10 - n}m }}\n' for n in range(1, 10)),
)


@pytest.mark.parametrize("delete_seeded", [False, True], ids=["added-to", "seeded-message-deleted"])
def test_fork__of_a_seeded_history_keeps_what_was_added_and_what_was_deleted(
        control: httpx.Client, delete_seeded: bool) -> None:
    """A checkpoint names the seeded keys it did not change (the shared plan) and carries the rest."""
    made = control.post("/envs", json={"scene": SEEDED_SCENE, "seed": SEED})
    assert made.status_code == 201, made.text
    original = as_world(made.json())
    channel = original.channel()
    seeded = original.slack.conversations_history(channel=channel, limit=100)["messages"]
    assert [m["text"] for m in seeded] == [f"seeded {n}" for n in range(9, 0, -1)]
    if delete_seeded:
        target = next(m for m in seeded if m["text"] == "seeded 4")
        deleted = original.slack.chat_delete(channel=channel, ts=target["ts"])
        assert deleted["ok"], deleted
    original.slack.chat_postMessage(channel=channel, text="Added in the trial")

    fork = as_world(create_from(control, checkpoint(control, original.id)["checkpoint"]))
    expected = ["Added in the trial", *(f"seeded {n}" for n in range(9, 0, -1) if not (delete_seeded and n == 4))]
    assert fork.messages() == original.messages() == expected


def create_from(control: httpx.Client, checkpoint_id: str) -> dict[str, Any]:
    answer = control.post("/envs", json={"from_checkpoint": checkpoint_id})
    assert answer.status_code == 201, answer.text
    context: dict[str, Any] = answer.json()
    return context
