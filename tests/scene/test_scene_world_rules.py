from __future__ import annotations

from pathlib import Path

import pytest
from scene_files import PEOPLE, messages, problems_of, scene_of, slack_only

from ancha.scene.model import MessageSelector, Predicate

_ANY_NEWS = ("slack.message: { channel: $slack_support, from: $slack_laura, text: Any news?, "
             "thread_of: $slack_laura_question }")


def _events(body: str) -> str:
    return PEOPLE + "world_rules:\n  events:\n" + body


def test_event__at_with_unless_and_slack_message(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _events(
        f"    - at: 10m\n      unless: {{ message: {{ to: laura, from: $slack_bot }} }}\n      do:\n        - {_ANY_NEWS}\n"))
    (event,) = scene.world_rules.events
    assert (event.at, event.after, event.delay) == (600.0, None, 0.0)
    assert event.unless == Predicate(message=MessageSelector(to="laura", from_user="slack_bot"))
    assert event.do == [{"slack.message": {"channel": "slack_support", "from": "slack_laura", "text": "Any news?",
                                           "thread_of": "slack_laura_question"}}]


def test_event__at_signed_offset(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _events(f"    - {{ at: -1h30m, do: [{{ {_ANY_NEWS} }}] }}\n"))
    assert scene.world_rules.events[0].at == -5400.0


def test_event__after_milestone_with_delay_and_reaction(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _events(
        "    - after: { decided: [mike, severity, p1] }\n      delay: 5m\n      do:\n"
        "        - slack.reaction: { channel: $slack_support, message: $slack_laura_question, from: $slack_mike,"
        " name: ':eyes:' }\n"
        f"    - after: {{ called: 'POST /api/chat.postMessage' }}\n      do: [{{ {_ANY_NEWS} }}]\n"))
    first, second = scene.world_rules.events
    assert (first.at, first.after, first.delay) == (None, Predicate(decided=["mike", "severity", "p1"]), 300.0)
    assert first.do[0]["slack.reaction"] == {
        "channel": "slack_support", "message": "slack_laura_question", "from": "slack_mike", "name": "eyes"}
    assert (second.after, second.delay) == (Predicate(called="POST /api/chat.postMessage"), 0.0)


def test_event__exactly_one_of_at_or_after(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _events(
        f"    - {{ do: [{{ {_ANY_NEWS} }}] }}\n"
        f"    - {{ at: 1m, after: {{ called: '*' }}, do: [{{ {_ANY_NEWS} }}] }}\n"
        f"    - {{ at: 1m, delay: 5m, do: [{{ {_ANY_NEWS} }}] }}\n"
        "    - { at: 1m, do: [] }\n"
        "    - { at: soon }\n"))
    assert messages(found) == [
        "world_rules.events[0]: an event needs at or after",
        "world_rules.events[1]: an event needs exactly one of at or after",
        "world_rules.events[2].delay: only applies with after",
        "world_rules.events[3].do: needs at least one action",
        "world_rules.events[4].do: missing required field",
        "world_rules.events[4].at: expected a duration from clock.start such as 10m, got 'soon'",
    ]


def test_event__conditions_name_known_people_facts_and_decisions(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _events(
        f"    - after: {{ knows: [lara, laura.beta_on] }}\n      do: [{{ {_ANY_NEWS} }}]\n"
        f"    - at: 1m\n      unless: {{ decided: [mike, severity, p9] }}\n      do: [{{ {_ANY_NEWS} }}]\n"))
    assert messages(found) == ["world_rules.events[0].after.knows[0]: unknown person lara",
                               "world_rules.events[1].unless.decided[2]: unknown option p9 for mike.severity"]
    assert [p.hint for p in found] == ["people: ben, laura, mike", "options: p1, p2, p3"]


def test_actions__refs_checked_and_same_channel(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _events(
        "    - at: 1m\n      do:\n"
        "        - slack.message: { channel: $slack_eng, from: $slack_ben, text: hi, thread_of: $slack_laura_question }\n"
        "        - slack.reaction: { channel: $slack_eng, message: $slack_ben, from: $laura, name: eyes }\n"
        "        - slack.message: { channel: $slack_eng, from: $slack_ben }\n"
        "        - {}\n"))
    assert messages(found) == [
        "world_rules.events[0].do[0].slack.message.thread_of: "
        "$slack_laura_question is in channel $slack_support, not $slack_eng",
        "world_rules.events[0].do[1].slack.reaction.from: $laura is a person, not a user",
        "world_rules.events[0].do[1].slack.reaction.message: $slack_ben is a user, not a message",
        "world_rules.events[0].do[2].slack.message.text: missing required field",
        "world_rules.events[0].do[3]: an action needs a kind",
    ]


@pytest.mark.parametrize("kind", ["datadog.monitor", "pagerduty.trigger", "okta.user", "github.comment"])
def test_actions_of_tools_not_in_the_build__not_supported_yet(tmp_path: Path, kind: str) -> None:
    found = problems_of(tmp_path, _events(f"    - {{ at: 1m, do: [{{ {kind}: {{ x: 1 }} }}] }}\n"), slack_only())
    assert messages(found) == [f"world_rules.events[0].do[0].{kind}: not supported yet"]
    assert found[0].hint is not None and "later version" in found[0].hint


def test_world_rules__omitted_means_no_events(tmp_path: Path) -> None:
    assert scene_of(tmp_path, PEOPLE).world_rules.events == []
