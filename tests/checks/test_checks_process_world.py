"""Process checks on a world whose people/process history is written by hand, as the
engine writes it, and the checks reference's process-check example graded on it.

``World`` (imported by the other ``test_checks_process_*`` files) drives an
``Environment`` in-process. Its history is hand-built, independent of the people
engine: each Slack message is a traced ``chat.postMessage`` entry plus the ``message``
record the engine would write (``post``; ``real=True`` sends it through the replica
and takes the engine's own record), and ``knows``/``revealed``/``decided``/``pending``
records are written with ``env.record``.
"""

from __future__ import annotations

import json
from typing import Any

from ancha.checks.evaluate import evaluate_checks
from ancha.checks.results import CheckResult
from ancha.scene.model import CheckSpec, Scene
from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.records import Record
from ancha.world.kernel.tool import ToolRequest

SCENE: dict[str, Any] = {
    "name": "beta-exports",
    "world": {"slack": {
        "users": [{"ref": "slack_laura", "name": "laura", "person": "laura"},
                  {"ref": "slack_ben", "name": "ben", "person": "ben"},
                  {"ref": "slack_mike", "name": "mike", "person": "mike"}],
        "channels": [
            {"ref": "slack_support", "name": "support",
             "members": ["slack_bot", "slack_laura", "slack_ben", "slack_mike"]},
            {"ref": "slack_eng", "name": "eng", "members": ["slack_bot", "slack_ben", "slack_mike"]},
        ],
        "messages": [
            {"ref": "slack_laura_question", "channel": "slack_support", "from": "slack_laura",
             "text": "CSV exports stopped working for us"},
            {"ref": "slack_other_question", "channel": "slack_support", "from": "slack_ben",
             "text": "Is SSO down for anyone?"},
        ],
    }},
    "people": {
        "laura": {"name": "Laura Diaz", "accounts": {"slack": "slack_laura"}, "listens": ["slack_support"],
                  "facts": {
                      "workspace": {"text": "We're on acme-prod.", "asked_by": ["workspace"],
                                    "match": ["acme-prod"]},
                      "beta_on": {"text": "The exports beta is on.", "asked_by": ["beta"],
                                  "match": ["beta is on"]}}},
        "ben": {"name": "Ben", "accounts": {"slack": "slack_ben"}, "listens": ["slack_eng"],
                "facts": {
                    "root_cause": {"text": "The beta writer drops rows.", "match": ["drops rows"]},
                    "workaround": {"text": "Turn the beta off in settings.", "match": ["beta off"]}}},
        "mike": {"name": "Mike", "accounts": {"slack": "slack_mike"}, "listens": ["slack_eng"],
                 "decisions": {"severity": {"asked_by": ["severity", "priority"], "options": ["p1", "p2", "p3"],
                                            "chooses": "p1", "needs": ["ben.root_cause"]}}},
    },
}


class World:
    """One in-process trial: Slack through the replica, the engine's records by hand."""

    def __init__(self, **extra: Any) -> None:
        # people=False: this world's message/knows/... records are the ones written here by hand.
        self.env = Environment("env_process", Scene.model_validate({**SCENE, **extra}), 1, people=False)
        self.slack = self.env.tools["slack"]
        self.tokens = {"agent": self.slack.credentials()["token"]}
        for person, spec in self.env.scene.people.items():
            user = self.env.refs[spec.accounts["slack"]].id
            self.tokens[person] = self.slack.issue_user_token(user, f"person:{person}")

    # --- time -----------------------------------------------------------------------------

    @property
    def start(self) -> float:
        return self.env.clock.start

    def wait(self, seconds: float) -> None:
        self.env.clock.advance_to(self.env.clock.peek() + seconds)

    # --- Slack, with the message records the engine writes ---------------------------------

    def call(self, method: str, who: str = "agent", **args: Any) -> dict[str, Any]:
        answer = self.env.dispatch("slack", ToolRequest("POST", f"/api/{method}", headers={
            "authorization": f"Bearer {self.tokens[who]}", "content-type": "application/json; charset=utf-8"},
            body=json.dumps(args).encode()))
        return dict(json.loads(answer.body))

    def post(self, who: str, channel: str, text: str, *, thread_of: str | None = None,
             reached: list[str] | None = None, facts: dict[str, list[str]] | None = None,
             real: bool = False) -> Record:
        """``who`` ("agent" or a person) writes a Slack message that reaches ``reached`` and
        tells them ``facts`` (with a ``knows`` record for each, as the engine writes).

        By default the history is hand-built: a traced ``chat.postMessage`` entry and the
        message record, without the replica, so the people engine never hears of it. With
        ``real=True`` the message goes through the replica and the record is the engine's
        own (its reach and facts; ``reached``/``facts`` are used only without an engine)."""
        env = self.env
        channel_id = env.refs[channel].id
        thread_ts = self.slack.message_ref(thread_of)[1] if thread_of is not None else None
        actor = "agent" if who == "agent" else f"person:{who}"
        if real:
            args: dict[str, Any] = {"channel": channel_id, "text": text}
            if thread_ts is not None:
                args["thread_ts"] = thread_ts
            answer = self.call("chat.postMessage", who, **args)
            assert answer["ok"], answer
            ts, user, seq = answer["ts"], answer["message"]["user"], len(env.trace)
            for record in reversed(env.records.of_kind("message")):
                if record.data.get("channel") == channel_id and record.data.get("ts") == ts:
                    return record
        else:
            user = env.refs["slack_bot" if who == "agent" else env.scene.people[who].accounts["slack"]].id
            entry = env.trace.append(
                at=env.clock.now(), actor=actor, tool="slack", method="POST", path="/api/chat.postMessage",
                query="", status=200, request=b"", response=b"", worked=True, coverage_gap=False)
            env.bus.publish(DomainEvent("call_traced", "slack", entry.at, {"entry": entry}))
            ts, seq = f"{entry.at:.6f}", entry.seq
        record = env.record(
            "message", tool="slack", channel=channel_id, ts=ts, thread_ts=thread_ts, user=user, actor=actor,
            author_person=None if who == "agent" else who, text=text, reached=reached or [],
            facts=facts or {}, seq=seq)
        for person, learned in (facts or {}).items():
            for fact in learned:
                self.knows(person, fact, record)
        return record

    # --- the engine's other records --------------------------------------------------------

    def knows(self, person: str, fact: str, message: Record | None = None) -> Record:
        return self.env.record("knows", person=person, fact=fact, message=where(message),
                               via="message" if message is not None else "owner")

    def revealed(self, fact: str, message: Record) -> Record:
        return self.env.record("revealed", person=fact.partition(".")[0], fact=fact, message=where(message))

    def decided(self, person: str, decision: str, option: str, message: Record) -> Record:
        return self.env.record("decided", person=person, decision=decision, option=option, message=where(message))

    def pending(self, person: str, decision: str, missing: list[str], message: Record) -> Record:
        return self.env.record("pending", person=person, decision=decision, missing=missing,
                               message=where(message))

    # --- grading ---------------------------------------------------------------------------

    def grade(self, *checks: dict[str, Any]) -> list[CheckResult]:
        return evaluate_checks(self.env, [CheckSpec.model_validate(c) for c in checks])

    def one(self, check: dict[str, Any]) -> CheckResult:
        [result] = self.grade({"id": "c", **check})
        return result


def where(message: Record | None) -> dict[str, str] | None:
    return None if message is None else {"channel": message.data["channel"], "ts": message.data["ts"]}


# The process-check example of the checks reference, as the loader hands it over (bare refs,
# `from` split into from_user / from_person, `of: start` as no `of`, 30m as seconds).
REFERENCE_CHECKS: list[dict[str, Any]] = [
    {"id": "asked_laura", "revealed": ["laura.workspace", "laura.beta_on"]},
    {"id": "ben_got_the_details", "knows": ["ben", "laura.beta_on"]},
    {"id": "laura_got_the_workaround", "told": ["laura", "ben.workaround"]},
    {"id": "priority_decided", "decided": ["mike", "severity", "p1"]},
    {"id": "answered_in_her_thread", "message": {"to": "laura", "in_thread_of": "slack_laura_question",
                                                 "from_user": "slack_bot"}},
    {"id": "no_root_cause_to_customer", "never": {"to": "laura", "fact": "ben.root_cause"}},
    {"id": "priority_before_label", "before": [{"decided": ["mike", "severity", "p1"]},
                                               {"called": "POST /repos/*/issues/*/labels"}]},
    {"id": "answered_fast", "within": {"event": {"message": {"to": "laura", "from_user": "slack_bot"}},
                                       "limit": 1800}},
]


def label_issue(world: World) -> int:
    """The agent labels a GitHub issue (a trace entry by hand: this world has no GitHub; the same
    check against the real replica is in test_checks_github.py)."""
    entry = world.env.trace.append(
        at=world.env.clock.now(), actor="agent", tool="github", method="POST",
        path="/repos/acme/orders/issues/13/labels", query="", status=200, request=b'{"labels":["p1"]}',
        response=b"[]", worked=True, coverage_gap=False)
    return entry.seq


def good_triage(world: World) -> dict[str, Record]:
    """The story the reference example describes, done well."""
    w = world
    w.wait(60)
    ask = w.post("agent", "slack_support", "Which workspace are you on, and is the exports beta on?",
                 thread_of="slack_laura_question", reached=["laura"])
    w.wait(120)
    answer = w.post("laura", "slack_support", "We're on acme-prod. The exports beta is on.",
                    thread_of="slack_laura_question", reached=["laura"])
    w.revealed("laura.workspace", answer)
    w.revealed("laura.beta_on", answer)
    w.wait(60)
    w.post("agent", "slack_eng", "Laura (acme-prod) says the exports beta is on and CSV exports fail.",
           reached=["ben", "mike"], facts={"ben": ["laura.workspace", "laura.beta_on"],
                                           "mike": ["laura.workspace", "laura.beta_on"]})
    w.wait(120)
    w.post("ben", "slack_eng", "The beta writer drops rows. Workaround: turn the beta off in settings.",
           reached=["ben", "mike"], facts={"mike": ["ben.root_cause", "ben.workaround"]})
    w.wait(60)
    asked = w.post("agent", "slack_eng", "<@mike> what severity should this be?", reached=["ben", "mike"])
    w.wait(60)
    decision = w.post("mike", "slack_eng", "Let's treat it as p1.", reached=["ben", "mike"])
    w.decided("mike", "severity", "p1", decision)
    w.wait(60)
    reply = w.post("agent", "slack_support", "A workaround: turn the beta off in settings while we fix it.",
                   thread_of="slack_laura_question", reached=["laura"], facts={"laura": ["ben.workaround"]})
    w.wait(60)
    label_issue(w)
    return {"ask": ask, "answer": answer, "asked": asked, "decision": decision, "reply": reply}


def test_reference_example__every_process_check_passes_on_a_good_history():
    world = World()
    story = good_triage(world)
    results = {r.id: r for r in world.grade(*REFERENCE_CHECKS)}
    failed = {k: r.actual for k, r in results.items() if not r.passed}
    assert failed == {}
    assert all(r.status == "passed" and r.required for r in results.values())
    assert results["asked_laura"].evidence == [story["answer"].data["seq"]]
    assert results["priority_decided"].evidence == [story["decision"].data["seq"]]
    assert results["answered_in_her_thread"].evidence == [story["ask"].data["seq"], story["reply"].data["seq"]]
    assert results["answered_fast"].actual == \
        "{message: {to: laura, from: $slack_bot}} happened 1m after the start (limit 30m)"
    label_seq = len(world.env.trace)
    assert results["priority_before_label"].evidence == [story["decision"].data["seq"], label_seq]


def test_reference_example__an_attempt_that_did_nothing_fails_all_but_never():
    world = World()
    results = {r.id: r for r in world.grade(*REFERENCE_CHECKS)}
    assert {k for k, r in results.items() if r.passed} == {"no_root_cause_to_customer"}
    assert results["asked_laura"].actual == (
        "laura never revealed laura.workspace: no message from the agent reached laura; "
        "laura never revealed laura.beta_on: no message from the agent reached laura")
    assert results["answered_in_her_thread"].actual == "no message was written during the trial"
    assert results["priority_before_label"].actual == (
        "the milestone {decided: [mike, severity, p1]} never happened; "
        'the milestone {called: "POST /repos/*/issues/*/labels"} never happened')
    assert results["answered_fast"].actual == \
        "the milestone {message: {to: laura, from: $slack_bot}} never happened"
    assert all(r.status == "failed" and r.explanation.startswith("Failed: expected ")
               for k, r in results.items() if k != "no_root_cause_to_customer")


def test_reference_example__telling_laura_the_root_cause_fails_never_with_the_message_as_evidence():
    world = World()
    good_triage(world)
    leak = world.post("agent", "slack_support", "FYI the beta writer drops rows.",
                      thread_of="slack_laura_question", reached=["laura"], facts={"laura": ["ben.root_cause"]})
    result = world.one(REFERENCE_CHECKS[5])
    assert not result.passed
    assert result.evidence == [leak.data["seq"]]
    assert result.actual == f"1 message matched: #{leak.data['seq']} 'FYI the beta writer drops rows.'"
    assert result.expected == "no message to laura telling laura ben.root_cause during the trial"
