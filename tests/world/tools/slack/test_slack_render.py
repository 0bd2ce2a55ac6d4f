"""Slack in the console's world diff: a message shows its author, channel, thread and whole text."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from ancha.world.kernel.rendered import FieldChange, ObjectChange
from ancha.world.tools.slack.render import render

SNAPSHOT = {"users": [{"id": "U1", "real_name": "Laura Diaz"}],
            "channels": [{"id": "C1", "name": "support", "is_im": False}]}
LONG = "Workaround: turn the beta toggle off. " * 30


def _message(kind: str, before: dict | None, after: dict | None, fields: tuple[FieldChange, ...] = ()) -> ObjectChange:
    return ObjectChange("messages.C1", "ts=1772442000.348518", kind, before, after, fields, snapshot=SNAPSHOT,
                        zone=ZoneInfo("Europe/Berlin"))


def test_slack_render__a_message_shows_author_channel_thread_and_its_whole_text() -> None:
    message = {"ts": "1772442000.348518", "thread_ts": "1772441700.000000", "channel": "C1", "user": "U1",
               "text": LONG, "actor": "person:laura"}
    shown = render(_message("added", None, message))
    assert shown is not None and shown.kind == "message"
    assert shown.title == "message in #support"
    assert shown.body == LONG  # never cut
    values = {f.label: f.value for f in shown.fields}
    assert values["from"] == "Laura Diaz (laura, a person of the scene)"
    assert values["at"] == "2026-03-02 10:00:00 CET"  # the world's zone, not an epoch float
    assert values["thread"] == "reply to the message of 2026-03-02 09:55:00 CET"


def test_slack_render__the_agents_bot_is_named_as_the_agent() -> None:
    message = {"ts": "1772442000.348518", "channel": "C1", "bot_profile": {"name": "acme-helper"}, "text": "hi",
               "actor": "agent"}
    shown = render(_message("added", None, message))
    assert shown is not None and {f.label: f.value for f in shown.fields}["from"] == "acme-helper (the agent)"


def test_slack_render__thread_counters_on_a_seeded_message_are_bookkeeping() -> None:
    before = {"ts": "1772442000.348518", "channel": "C1", "user": "U1", "text": "help?"}
    after = {**before, "reply_count": 2, "latest_reply": "1772442100.000000", "thread_ts": "1772442000.348518"}
    fields = (FieldChange("reply_count", "added", None, 2), FieldChange("latest_reply", "added", None, "1772442100.0"),
              FieldChange("thread_ts", "added", None, "1772442000.348518"))
    shown = render(_message("changed", before, after, fields))
    assert shown is not None and shown.bookkeeping


def test_slack_render__a_reaction_on_a_seeded_message_is_not_bookkeeping() -> None:
    before = {"ts": "1772442000.348518", "channel": "C1", "user": "U1", "text": "help?"}
    after = {**before, "reactions": [{"name": "rotating_light", "count": 1, "users": ["UB"]}]}
    shown = render(_message("changed", before, after, (FieldChange("reactions", "added", None, []),)))
    assert shown is not None and not shown.bookkeeping
    reactions = next(f for f in shown.fields if f.label == "reactions")
    assert (reactions.before, reactions.value) == ("—", ":rotating_light: ×1")


def test_slack_render__leaves_other_collections_to_the_console() -> None:
    assert render(ObjectChange("users", "id=U1", "changed", {"id": "U1"}, {"id": "U1", "tz": "x"}, ())) is None
