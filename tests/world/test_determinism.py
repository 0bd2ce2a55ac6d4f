"""A trial's world is a pure function of the scene, the trial, the run's seed and the agent's
calls with the simulated instants they arrive at (issue 30).

One scene uses all five tools, two people who reply after drawn delays, a fault with
effects that is resolved by a message, and world events. Hypothesis draws a sequence of
agent calls across the tools (reads and writes), each after a gap of simulated time, so
replies, escalations, fault effects and world events interleave with the calls; the same
sequence driven twice on two fresh worlds gives the same bytes everywhere: the trace, the
stored request headers, the records, the snapshot, the feed and every answer. Replaying
the agent's calls as the first world's trace holds them gives the same world again.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ancha.scene.loading import parse_scene_text
from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import ToolRequest, ToolResponse
from ancha.world.registry import catalog

SCENE = """\
name: determinism
clock: { start: 2026-03-02T14:00:00Z, limit: 2h }
world:
  slack:
    bot: { ref: slack_bot, name: acme-oncall }
    users:
      - { ref: slack_maya, name: maya, real_name: Maya Chen, email: maya@acme.test }
      - { ref: slack_ben, name: ben, real_name: Ben Okafor, email: ben@acme.test }
    channels:
      - { ref: slack_incidents, name: incidents, members: [$slack_maya, $slack_ben, $slack_bot] }
      - { ref: slack_eng, name: eng, members: [$slack_ben, $slack_bot] }
    messages:
      - { ref: slack_question, channel: $slack_incidents, from: $slack_maya, at: -5m,
          text: "Orders look slow, anyone?" }
  github:
    agent: { ref: github_agent, login: acme-oncall }
    users:
      - { ref: github_maya, login: maya, name: Maya Chen, email: maya@acme.test }
    orgs:
      - { login: acme, members: [$github_maya] }
    repos:
      - ref: github_orders
        name: acme/orders
        files:
          README.md: "# orders\\n"
          config/db.yaml: "pool_size: 20\\n"
        commits:
          - { ref: github_good, message: "Add export", author: $github_maya, at: -1d,
              files: { src/export.py: "x = 1\\n" } }
          - { ref: github_bad, message: "Shrink pool", author: $github_maya, at: -20m,
              files: { config/db.yaml: "pool_size: 2\\n" } }
        permissions: { $github_agent: write }
        production: $github_bad
  datadog:
    monitors:
      - { ref: datadog_orders, name: orders p99 latency, type: query alert,
          query: "avg(last_5m):avg:orders.latency.p99{service:orders} > 2000", tags: [service:orders] }
      - { ref: datadog_payments, name: payments error rate, type: query alert,
          query: "avg(last_5m):avg:payments.errors{service:payments} > 5", tags: [service:payments] }
    metrics:
      orders.latency.p99: { baseline: 120, noise: 10 }
      payments.errors: { baseline: 0.5, noise: 0.2 }
  pagerduty:
    agent: { ref: pagerduty_agent, name: Acme On-call Bot, email: oncall-bot@acme.test }
    users:
      - { ref: pagerduty_maya, name: Maya Chen, email: maya@acme.test }
    escalation_policies:
      - { ref: pagerduty_policy, name: orders,
          rules: [{ delay: 5m, targets: [$pagerduty_agent] }, { delay: 5m, targets: [$pagerduty_maya] }] }
    services:
      - { ref: pagerduty_orders, name: orders, escalation_policy: $pagerduty_policy }
  okta:
    groups:
      - { ref: okta_eng, name: Engineering }
      - { ref: okta_vpn, name: VPN Users }
    users:
      - { ref: okta_dana, login: dana@acme.test, first_name: Dana, last_name: Scully,
          groups: [$okta_eng, $okta_vpn] }
      - { ref: okta_fox, login: fox@acme.test, first_name: Fox, last_name: Mulder, groups: [$okta_eng] }
people:
  maya:
    name: Maya Chen
    accounts: { slack: $slack_maya, github: $github_maya, pagerduty: $pagerduty_maya }
    listens: [$slack_incidents]
    replies_after: 30s..3m
    facts:
      deploy:
        text: "The pool shrink went out twenty minutes ago."
        asked_by: [deploy, changed]
        match: [pool shrink]
    decisions:
      rollback:
        asked_by: [rollback, roll back]
        options: [yes, no]
        chooses: yes
        needs: [maya.deploy]
        text: "Yes, {option}, roll it back."
        pending: "Not until I know what changed."
    otherwise: Can you say what you need?
  ben:
    name: Ben Okafor
    accounts: { slack: $slack_ben, okta: $okta_fox }
    listens: [$slack_eng]
    replies_after: 1m..4m
    facts:
      root_cause:
        text: "Root cause: the DB pool is exhausted."
        asked_by: [root cause, why]
        match: [pool is exhausted]
world_rules:
  faults:
    - ref: orders_latency
      starts: 2m
      effects:
        - datadog.metric: { name: orders.latency.p99, value: 2300 }
        - datadog.monitor: { monitor: $datadog_orders, state: Alert }
        - datadog.log: { service: orders, status: error, message: "db pool exhausted", every: 45s, host: orders-1 }
        - pagerduty.trigger: { service: $pagerduty_orders, title: orders p99 latency above 2s }
      resolved_when: { message: { in: $slack_incidents, text_contains: [rolled back] } }
  events:
    - at: 6m
      unless: { message: { in: $slack_incidents, from: $slack_bot } }
      do:
        - slack.message: { channel: $slack_incidents, from: $slack_maya, text: "Any news?",
                           thread_of: $slack_question }
        - datadog.event: { title: orders deploy, text: pool_size=2, tags: [service:orders] }
    - after: { revealed: [maya.deploy] }
      delay: 1m
      do:
        - slack.reaction: { channel: $slack_incidents, message: $slack_question, from: $slack_maya, name: eyes }
        - github.issue: { repo: $github_orders, from: $github_maya, title: Pool shrink postmortem, body: Track it }
        - okta.user: { user: $okta_dana, status: SUSPENDED }
checks:
  - id: fault_fixed
    state: { fault_resolved: $orders_latency }
"""

ENV_ID = "env_determinism"
TRIAL = 2
SEED = 7
MAX_GAP_MS = 240_000
"""Up to four minutes of simulated time before a call: replies (30 s to 4 m), escalation
(5 m), log lines (45 s) and world events (6 m) fall between calls."""

@cache
def scene() -> Scene:
    """The scene, parsed and validated once (a world never changes it)."""
    return parse_scene_text(SCENE, "scene.yaml", Path("."), catalog())


def world(seed: int = SEED) -> Environment:
    """A fresh world driven with no event loop: the test moves its clock. (The world lets the
    clock flow again whenever its feed changes while nobody reads it, as it would while an
    agent works; what happens is stamped all the same at the instants things happen.)"""
    env = Environment(ENV_ID, scene(), TRIAL, {"idle": 60}, seed=seed)
    env.clock.pause()
    return env


# --- the agent's calls --------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call the agent makes, ``gap_ms`` of simulated time after the one before; ``pick``
    chooses its text, target or phrasing. Which request it is depends on the world only
    through ids the world itself decided (refs, the incidents the fault triggered) and on
    the instant it arrives at (times in its query or body), never on the clock's reading."""

    gap_ms: int
    action: str
    pick: int


Built = tuple[str, str, str, str, dict[str, str], bytes]
"""tool, method, path, query, headers, body."""

SLACK_TEXTS = (
    "<@{maya}> what changed in the last deploy?",
    "<@{maya}> can we roll back the orders deploy?",
    "Why is orders slow? What's the root cause?",
    "We rolled back the pool change, latency is recovering.",
    "<@{maya}> the pool shrink looks like the cause.",
    "Looking into the orders latency now.",
    "<@{ben}> why is the pool exhausted?",
)
GITHUB_FILES = ("README.md", "config/db.yaml", "src/export.py", "missing.txt")
REACTIONS = ("eyes", "white_check_mark", "rotating_light")


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _slack(env: Environment, method: str, http: str, fields: dict[str, Any]) -> Built:
    headers = {"authorization": f"Bearer {env.tools['slack'].credentials()['token']}"}
    if http == "GET":
        return "slack", "GET", f"/api/{method}", urlencode(fields), headers, b""
    headers["content-type"] = "application/json; charset=utf-8"
    return "slack", "POST", f"/api/{method}", "", headers, _json(fields)


def _github(env: Environment, method: str, path: str, body: Any = None, query: str = "") -> Built:
    headers = {"authorization": f"token {env.tools['github'].credentials()['token']}",
               "accept": "application/vnd.github+json", "user-agent": "determinism-test"}
    if body is not None:
        headers["content-type"] = "application/json"
    return "github", method, path, query, headers, b"" if body is None else _json(body)


def _datadog(env: Environment, method: str, path: str, body: Any = None, query: str = "") -> Built:
    keys = env.tools["datadog"].credentials()
    headers = {"dd-api-key": keys["api_key"], "dd-application-key": keys["app_key"], "accept": "application/json"}
    if body is not None:
        headers["content-type"] = "application/json"
    return "datadog", method, path, query, headers, b"" if body is None else _json(body)


def _pagerduty(env: Environment, method: str, path: str, body: Any = None, query: str = "") -> Built:
    keys = env.tools["pagerduty"].credentials()
    headers = {"authorization": f"Token token={keys['token']}", "from": keys["from_email"],
               "accept": "application/vnd.pagerduty+json;version=2"}
    if body is not None:
        headers["content-type"] = "application/json"
    return "pagerduty", method, path, query, headers, b"" if body is None else _json(body)


def _okta(env: Environment, method: str, path: str, body: Any = None, query: str = "") -> Built:
    headers = {"authorization": f"SSWS {env.tools['okta'].credentials()['token']}", "accept": "application/json"}
    if body is not None:
        headers["content-type"] = "application/json"
    return "okta", method, path, query, headers, b"" if body is None else _json(body)


def _id(env: Environment, ref: str) -> str:
    return env.ref_id(ref)


def _question(env: Environment) -> tuple[str, str]:
    channel, _, ts = _id(env, "slack_question").partition("/")
    return channel, ts


def _incident(env: Environment, pick: int) -> str:
    """One of the incidents the world holds by now (the fault's), or an id that names none."""
    incidents = sorted(env.tools["pagerduty"].state.incidents.values(),  # type: ignore[attr-defined]
                       key=lambda incident: incident.number)
    return incidents[pick % len(incidents)].id if incidents else "PNOSUCH"


def _okta_user(env: Environment, pick: int) -> str:
    return _id(env, ("okta_dana", "okta_fox")[pick % 2])


def _iso(env: Environment, at: float) -> str:
    return env.clock.isoformat(at)


def _post(env: Environment, pick: int, at: float) -> Built:
    channel = _id(env, ("slack_incidents", "slack_eng")[pick // len(SLACK_TEXTS) % 2])
    text = SLACK_TEXTS[pick % len(SLACK_TEXTS)].format(maya=_id(env, "slack_maya"), ben=_id(env, "slack_ben"))
    return _slack(env, "chat.postMessage", "POST", {"channel": channel, "text": text})


def _reply_in_thread(env: Environment, pick: int, at: float) -> Built:
    channel, ts = _question(env)
    text = SLACK_TEXTS[pick % len(SLACK_TEXTS)].format(maya=_id(env, "slack_maya"), ben=_id(env, "slack_ben"))
    return _slack(env, "chat.postMessage", "POST", {"channel": channel, "thread_ts": ts, "text": text})


def _react(env: Environment, pick: int, at: float) -> Built:
    channel, ts = _question(env)
    return _slack(env, "reactions.add", "POST", {"channel": channel, "timestamp": ts,
                                                 "name": REACTIONS[pick % len(REACTIONS)]})


def _history(env: Environment, pick: int, at: float) -> Built:
    return _slack(env, "conversations.history", "GET",
                  {"channel": _id(env, ("slack_incidents", "slack_eng")[pick % 2]), "limit": 20})


def _replies(env: Environment, pick: int, at: float) -> Built:
    channel, ts = _question(env)
    return _slack(env, "conversations.replies", "GET", {"channel": channel, "ts": ts})


def _socket_url(env: Environment, pick: int, at: float) -> Built:
    """A Socket Mode URL: its ticket is a capability the replica hands out."""
    headers = {"authorization": f"Bearer {env.tools['slack'].credentials()['app_token']}"}
    return "slack", "POST", "/api/apps.connections.open", "", headers, b""


def _upload_url(env: Environment, pick: int, at: float) -> Built:
    """An upload URL for a file: another capability the replica hands out."""
    return _slack(env, "files.getUploadURLExternal", "GET", {"filename": f"notes-{pick}.txt", "length": 10 + pick})


def _open_issue(env: Environment, pick: int, at: float) -> Built:
    return _github(env, "POST", "/repos/acme/orders/issues",
                   {"title": f"Orders latency ({pick})", "body": "@maya what changed in the deploy? Roll back?"})


def _comment(env: Environment, pick: int, at: float) -> Built:
    return _github(env, "POST", f"/repos/acme/orders/issues/{1 + pick % 3}/comments",
                   {"body": ("@maya roll back?", "Pool shrink suspected.", "Looking.")[pick % 3]})


def _read_file(env: Environment, pick: int, at: float) -> Built:
    return _github(env, "GET", f"/repos/acme/orders/contents/{GITHUB_FILES[pick % len(GITHUB_FILES)]}")


def _issues(env: Environment, pick: int, at: float) -> Built:
    return _github(env, "GET", "/repos/acme/orders/issues", query="state=all")


def _commits(env: Environment, pick: int, at: float) -> Built:
    return _github(env, "GET", "/repos/acme/orders/commits", query=f"per_page={1 + pick % 3}")


def _monitors(env: Environment, pick: int, at: float) -> Built:
    return _datadog(env, "GET", "/api/v1/monitor", query="group_states=all" if pick % 2 else "")


def _monitor(env: Environment, pick: int, at: float) -> Built:
    return _datadog(env, "GET", f"/api/v1/monitor/{_id(env, ('datadog_orders', 'datadog_payments')[pick % 2])}")


def _mute(env: Environment, pick: int, at: float) -> Built:
    monitor = int(_id(env, ("datadog_orders", "datadog_payments")[pick % 2]))
    body = {"data": {"type": "downtime", "attributes": {
        "scope": "*", "message": "working on it", "monitor_identifier": {"monitor_id": monitor},
        "schedule": {"end": _iso(env, at + 60.0 * (5 + pick))}}}}
    return _datadog(env, "POST", "/api/v2/downtime", body)


def _metric_query(env: Environment, pick: int, at: float) -> Built:
    now = int(at)
    metric = ("avg:orders.latency.p99{service:orders}", "avg:payments.errors{*}")[pick % 2]
    return _datadog(env, "GET", "/api/v1/query", query=urlencode({"from": now - 900, "to": now, "query": metric}))


def _logs(env: Environment, pick: int, at: float) -> Built:
    return _datadog(env, "GET", "/api/v2/logs/events",
                    query=urlencode({"filter[query]": "service:orders", "filter[from]": "now-15m",
                                     "page[limit]": 1 + pick}))


def _incidents(env: Environment, pick: int, at: float) -> Built:
    return _pagerduty(env, "GET", "/incidents",
                      query="statuses%5B%5D=triggered&statuses%5B%5D=acknowledged" if pick % 2 else "")


def _set_incident(status: str) -> Any:
    def build(env: Environment, pick: int, at: float) -> Built:
        return _pagerduty(env, "PUT", f"/incidents/{_incident(env, pick)}",
                          {"incident": {"type": "incident_reference", "status": status}})
    return build


def _note(env: Environment, pick: int, at: float) -> Built:
    return _pagerduty(env, "POST", f"/incidents/{_incident(env, pick)}/notes",
                      {"note": {"content": f"Rolling back ({pick})"}})


def _log_entries(env: Environment, pick: int, at: float) -> Built:
    return _pagerduty(env, "GET", f"/incidents/{_incident(env, pick)}/log_entries")


def _users(env: Environment, pick: int, at: float) -> Built:
    return _okta(env, "GET", "/api/v1/users", query="limit=1" if pick % 2 else "")


def _lifecycle(operation: str, query: str = "") -> Any:
    def build(env: Environment, pick: int, at: float) -> Built:
        return _okta(env, "POST", f"/api/v1/users/{_okta_user(env, pick)}/lifecycle/{operation}", query=query)
    return build


def _leave_group(env: Environment, pick: int, at: float) -> Built:
    group = _id(env, ("okta_eng", "okta_vpn")[pick % 2])
    return _okta(env, "DELETE", f"/api/v1/groups/{group}/users/{_okta_user(env, pick // 2)}")


def _system_log(env: Environment, pick: int, at: float) -> Built:
    return _okta(env, "GET", "/api/v1/logs", query="sortOrder=DESCENDING" if pick % 2 else "")


ACTIONS: dict[str, Any] = {
    "slack.post": _post, "slack.thread": _reply_in_thread, "slack.react": _react,
    "slack.history": _history, "slack.replies": _replies, "slack.socket": _socket_url, "slack.upload": _upload_url,
    "github.issue": _open_issue, "github.comment": _comment, "github.file": _read_file,
    "github.issues": _issues, "github.commits": _commits,
    "datadog.monitors": _monitors, "datadog.monitor": _monitor, "datadog.mute": _mute,
    "datadog.query": _metric_query, "datadog.logs": _logs,
    "pagerduty.list": _incidents, "pagerduty.acknowledge": _set_incident("acknowledged"),
    "pagerduty.resolve": _set_incident("resolved"), "pagerduty.note": _note,
    "pagerduty.log": _log_entries,
    "okta.users": _users, "okta.deactivate": _lifecycle("deactivate"), "okta.suspend": _lifecycle("suspend"),
    "okta.unsuspend": _lifecycle("unsuspend"), "okta.reset": _lifecycle("reset_password", "sendEmail=false"),
    "okta.leave": _leave_group, "okta.log": _system_log,
}

gaps = st.one_of(st.just(0), st.integers(1, 2_000), st.integers(2_000, MAX_GAP_MS))
"""No time at all (two calls at one instant), a moment, or long enough for the world to move."""
calls = st.builds(Call, gap_ms=gaps, action=st.sampled_from(sorted(ACTIONS)),
                  pick=st.integers(0, 2 * len(SLACK_TEXTS) - 1))
sessions = st.tuples(st.lists(calls, min_size=1, max_size=24), st.one_of(st.just(0), st.integers(0, 20 * 60_000)))
"""The agent's calls and how long after the last one the trial ends (ms of simulated time)."""


# --- driving a world ----------------------------------------------------------------------------


@dataclass
class Run:
    env: Environment
    answers: list[ToolResponse]


def _instant(t: float) -> float:
    return round(t * 1_000_000) / 1_000_000


def drive(calls: list[Call], end_ms: int, seed: int = SEED) -> Run:
    """A fresh world, the calls made at their instants, the trial ended ``end_ms`` after the last."""
    env = world(seed)
    answers = []
    at = env.clock.start
    for call in calls:
        at = _instant(at + call.gap_ms / 1000)
        env.clock.advance_to(at)
        tool, method, path, query, headers, body = ACTIONS[call.action](env, call.pick, at)
        answers.append(env.dispatch(tool, ToolRequest(method, path, query, headers, body), from_agent=True,
                                    arrived=at))
    env.end("done", "the agent said it was done", at=_instant(at + end_ms / 1000))
    return Run(env, answers)


def replay(original: Environment, seed: int = SEED) -> Environment:
    """A fresh world given the agent's calls as ``original``'s trace holds them, each at the
    instant it arrived at, and ended where ``original`` ended."""
    env = world(seed)
    for entry in original.trace:
        if not entry.arrived:
            continue  # a person's or a world rule's call: the replayed world makes it by itself
        env.clock.advance_to(entry.arrived)
        headers = json.loads(entry.head)
        env.dispatch(entry.tool, ToolRequest(entry.method, entry.path, entry.query, headers, entry.request),
                     from_agent=True, arrived=entry.arrived)
    assert original.ended_at is not None
    env.end(original.status, original.ended_reason or "", at=original.ended_at)
    return env


def _world_bytes(env: Environment) -> dict[str, Any]:
    """Everything the world holds, as bytes (or plain values) to compare."""
    return {
        "status": (env.status, env.ended_reason, env.ended_at),
        "trace": env.trace.to_jsonl(),
        "heads": [entry.head for entry in env.trace],
        "arrivals": [entry.arrived for entry in env.trace],
        "records": env.records_jsonl(),
        "snapshot": b"".join(env.snapshot_json()),
        "feed": json.dumps(env.feed.events, sort_keys=False),
        "refs": sorted((name, ref.kind, ref.tool, ref.id) for name, ref in env.refs.items()),
    }


def _answers(answers: list[ToolResponse]) -> list[tuple[int, str, bytes, list[tuple[str, str]]]]:
    return [(a.status, a.content_type, a.body, sorted(a.headers.items())) for a in answers]


def long_session() -> list[Call]:
    """Sixty calls of every kind, drawn once from a fixed seed (the same in any process)."""
    rng = random.Random(30)
    return [Call(rng.choice((0, 500, 30_000, 90_000, 200_000)), rng.choice(sorted(ACTIONS)),
                 rng.randrange(2 * len(SLACK_TEXTS))) for _ in range(60)]


LONG_END_MS = 900_000


def digests(run: Run) -> dict[str, str]:
    """SHA-256 of each part of a run's world and of its answers (what another process prints)."""
    parts: dict[str, Any] = {**_world_bytes(run.env), "answers": _answers(run.answers)}
    out = {}
    for key, value in parts.items():
        data = value if isinstance(value, bytes) else value.encode() if isinstance(value, str) else repr(value).encode()
        out[key] = hashlib.sha256(data).hexdigest()
    return out


def _assert_same(first: Environment, second: Environment) -> None:
    one, two = _world_bytes(first), _world_bytes(second)
    lines, others = one["trace"].splitlines(), two["trace"].splitlines()
    for seq, (line, other) in enumerate(zip(lines, others, strict=False), start=1):  # the first that differs
        assert line == other, f"trace entry {seq}"
    for key in one:
        assert one[key] == two[key], key


# --- the properties -----------------------------------------------------------------------------

PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(sessions)
def test_same_calls_at_same_instants__give_byte_identical_worlds(session: tuple[list[Call], int]) -> None:
    calls, end_ms = session
    first, second = drive(calls, end_ms), drive(calls, end_ms)
    try:
        _assert_same(first.env, second.env)
        assert _answers(first.answers) == _answers(second.answers)
        assert len(first.env.trace) >= len(calls)
    finally:
        first.env.close()
        second.env.close()


@PROPERTY
@given(sessions)
def test_replay__the_traced_agent_calls_remake_the_world(session: tuple[list[Call], int]) -> None:
    calls, end_ms = session
    first = drive(calls, end_ms)
    again = replay(first.env)
    try:
        _assert_same(first.env, again)
    finally:
        first.env.close()
        again.close()


def test_a_busy_session__people_faults_and_events_all_happen_and_replay() -> None:
    """A fixed session that reaches every moving part, so the properties above are known to
    compare worlds where people replied, the fault started and ended, and events fired."""
    calls = [
        Call(1_000, "slack.post", 0),  # maya: what changed (she reveals the deploy)
        Call(150_000, "pagerduty.list", 0),  # the fault has triggered an incident by now
        Call(20_000, "github.issue", 0),
        Call(30_000, "slack.post", 1),  # maya: roll back? (she decides)
        Call(60_000, "datadog.mute", 0),
        Call(40_000, "okta.reset", 1),
        Call(200_000, "slack.post", 3),  # rolled back: the fault is resolved
        Call(10_000, "pagerduty.acknowledge", 0),
        Call(90_000, "slack.post", 9),  # #eng: ben, root cause
        Call(5_000, "okta.deactivate", 0),
        Call(0, "github.comment", 0),
        Call(120_000, "datadog.query", 0),
    ]
    first, second = drive(calls, 600_000), drive(calls, 600_000)
    again = replay(first.env)
    try:
        _assert_same(first.env, second.env)
        assert _answers(first.answers) == _answers(second.answers)
        _assert_same(first.env, again)
        kinds = {json.loads(line)["kind"] for line in first.env.records_jsonl().splitlines()}
        assert {"revealed", "decided", "message", "fault_started", "fault_resolved", "event_fired"} <= kinds, kinds
        actors = {entry.actor for entry in first.env.trace}
        assert {"agent", "world", "person:maya", "person:ben"} <= actors, actors
        feed = {(event["service"], event["type"]) for event in first.env.feed.events}
        assert any(service == "pagerduty" for service, _ in feed), feed
        assert any(service == "datadog" for service, _ in feed), feed
    finally:
        for env in (first.env, second.env, again):
            env.close()


def test_another_process__another_hash_seed_gives_the_same_world() -> None:
    """Two worlds in one process share its string hashing, so a set's or a dict's order that
    follows hashes would look deterministic there; a replay runs in another process."""
    run = drive(long_session(), LONG_END_MS)
    here = digests(run)
    run.env.close()
    hash_seed = "12345" if os.environ.get("PYTHONHASHSEED") != "12345" else "54321"
    script = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_determinism as t; "
              "run = t.drive(t.long_session(), t.LONG_END_MS); print(json.dumps(t.digests(run)))")
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": hash_seed}, check=False)
    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout.splitlines()[-1])
    assert {key for key in here if here[key] != there[key]} == set()


def test_another_seed__other_tokens_same_seed__same_tokens() -> None:
    """Tokens come from the run's seed: a replay's agent calls with the tokens it had, and
    no token works in a world of another seed."""
    one, same, other = world(SEED), world(SEED), world(SEED + 1)
    try:
        for name in one.tools:
            mine = one.tools[name].credentials()
            assert mine == same.tools[name].credentials(), name
            theirs = other.tools[name].credentials()
            secret_names = [key for key in ("token", "api_key", "app_key", "signing_secret") if key in mine]
            assert secret_names, name
            for key in secret_names:
                assert mine[key] != theirs[key], (name, key)
    finally:
        for env in (one, same, other):
            env.close()
