from __future__ import annotations

from pathlib import Path

import pytest
from scene_files import PEOPLE, REFERENCE, messages, problems_of, scene_of, slack_only

from ancha.scene.model import CheckSpec, MessageCheck, MessageSelector, Predicate, Within


def _checks(body: str) -> str:
    return PEOPLE + "checks:\n" + body


def _check(tmp_path: Path, line: str) -> CheckSpec:
    return scene_of(tmp_path, _checks(f"  - {line}\n")).checks[0]


def test_reference_process_checks__load_into_the_model(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, PEOPLE + REFERENCE)
    by_id = {c.id: c for c in scene.checks}
    assert [c.kind for c in scene.checks] == ["revealed", "knows", "told", "decided", "message", "never", "before",
                                              "within"]
    assert by_id["asked_laura"].revealed == ["laura.workspace", "laura.beta_on"]
    assert by_id["ben_got_the_details"].knows == ["ben", "laura.beta_on"]
    assert by_id["laura_got_the_workaround"].told == ["laura", "ben.workaround"]
    assert by_id["priority_decided"].decided == ["mike", "severity", "p1"]
    assert by_id["answered_in_her_thread"].message == MessageCheck(
        to="laura", in_thread_of="slack_laura_question", from_user="slack_bot", count_gte=1)
    assert by_id["no_root_cause_to_customer"].never == MessageSelector(to="laura", fact="ben.root_cause")
    assert by_id["priority_before_label"].before == [Predicate(decided=["mike", "severity", "p1"]),
                                                     Predicate(called="POST /repos/*/issues/*/labels")]
    assert by_id["answered_fast"].within == Within(
        event=Predicate(message=MessageSelector(to="laura", from_user="slack_bot")), of=None, limit=1800.0)
    assert scene.pass_ == list(by_id)


@pytest.mark.parametrize("written", ["laura", "$laura", "$person.laura"])
def test_person__bare_dollar_or_kind_dot_name(tmp_path: Path, written: str) -> None:
    assert _check(tmp_path, f"{{ id: a, knows: [{written}, ben.workaround] }}").knows == ["laura", "ben.workaround"]


def test_unknown_person__hint_lists_people(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - { id: a, knows: [lara, laura.beta_on] }\n"
                                          "  - { id: b, message: { to: $lara } }\n"))
    assert messages(found) == ["checks[0].knows[0]: unknown person lara", "checks[1].message.to: unknown person lara"]
    assert [p.hint for p in found] == ["people: ben, laura, mike"] * 2


def test_person__wrong_kinds(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - { id: a, knows: [$slack_laura, laura.beta_on] }\n"
                                          "  - { id: b, told: [$user.laura, laura.beta_on] }\n"))
    assert messages(found) == ["checks[0].knows[0]: $slack_laura is a user, not a person",
                               "checks[1].told[0]: $user.laura is written as a user, but a person is needed here"]


def test_unknown_fact__hint_lists_facts_of_person(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, _checks("  - { id: a, revealed: [laura.workspace, laura.beta_onn] }\n"))
    assert (problem.path, problem.message) == ("checks[0].revealed[1]", "unknown fact laura.beta_onn")
    assert problem.hint == "facts of laura: laura.beta_on, laura.workspace"


def test_fact_of_person_without_facts(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, _checks("  - { id: a, never: { fact: mike.x } }\n"))
    assert (problem.message, problem.hint) == ("unknown fact mike.x", "mike has no facts")


def test_knows__person_first_then_facts(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - { id: a, knows: [laura.beta_on, ben] }\n"
                                          "  - { id: b, told: [ben] }\n  - { id: c, revealed: [] }\n"))
    assert messages(found) == [
        "checks[0].knows[0]: expected the person who knows, got the fact laura.beta_on",
        "checks[1].told: needs a person and at least one fact",
        "checks[2].revealed: needs at least one fact",
    ]


def test_decided__decision_and_option_checked(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - { id: a, decided: [mike, severity, p4] }\n"
                                          "  - { id: b, decided: [mike, sevrity] }\n"
                                          "  - { id: c, decided: [ben, severity] }\n"
                                          "  - { id: d, decided: [mike] }\n"))
    assert messages(found) == [
        "checks[0].decided[2]: unknown option p4 for mike.severity",
        "checks[1].decided[1]: unknown decision sevrity for mike",
        "checks[2].decided[1]: unknown decision severity for ben",
        "checks[3].decided: expected [person, decision] or [person, decision, option], got 1 items",
    ]
    assert [p.hint for p in found[:3]] == ["options: p1, p2, p3", "decisions of mike: severity", "ben has no decisions"]


def test_decided__without_option(tmp_path: Path) -> None:
    assert _check(tmp_path, "{ id: a, decided: [$mike, severity] }").decided == ["mike", "severity"]


def test_message__from_user_or_person_text_list_and_count(tmp_path: Path) -> None:
    check = _check(tmp_path, "{ id: a, message: { from: ben, in: $slack_eng, text_contains: CSV, count_gte: 2 } }")
    assert check.message == MessageCheck(from_person="ben", in_="slack_eng", text_contains=["CSV"], count_gte=2)
    check = _check(tmp_path, "{ id: a, never: { from: $user.slack_bot, text_contains: [root, cause] } }")
    assert check.never == MessageSelector(from_user="slack_bot", text_contains=["root", "cause"])
    assert _check(tmp_path, "{ id: a, never: { from: $person.ben } }").never == MessageSelector(from_person="ben")


def test_message__selector_problems(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks(
        "  - { id: a, message: { count_gte: 2 } }\n"
        "  - { id: b, never: { from: $slack_support } }\n"
        "  - { id: c, message: { in: $slack_laura, in_thread_of: $slack_eng, count_gte: 0 } }\n"
        "  - { id: d, never: { in: $slack_eng, in_thread_of: $slack_laura_question } }\n"
        "  - { id: e, never: { text_contains: [] } }\n"
        "  - { id: f, never: { form: $slack_bot } }\n"))
    assert messages(found) == [
        "checks[0].message: a message selector needs at least one field",
        "checks[1].never.from: $slack_support is a channel, not a user or a person",
        "checks[2].message.count_gte: expected a positive integer, got 0",
        "checks[2].message.in: $slack_laura is a user, not a channel, issue or pull",
        "checks[2].message.in_thread_of: $slack_eng is a channel, not a message",
        "checks[3].never.in_thread_of: $slack_laura_question is in channel $slack_support, not $slack_eng",
        "checks[4].never.text_contains: needs non-empty text",
        "checks[5].never.form: unknown field",
    ]
    assert found[1].hint == "refs of kind user: $slack_bot, $slack_laura, $slack_ben, $slack_mike; " \
                            "people: ben, laura, mike"
    assert found[7].hint == "did you mean checks[5].never.from?"


def test_before__at_least_two_milestones_and_predicate_forms(tmp_path: Path) -> None:
    check = _check(tmp_path, """id: a
    before:
      - { slack.message: { channel: $slack_support, from: $slack_bot, text_contains: beta } }
      - { all: [{ knows: [ben, laura.beta_on] }, { not: { revealed: [laura.workspace] } }] }
      - { any: [{ told: [laura, ben.workaround] }, { message: { from: laura } }] }""")
    assert check.before is not None
    first, second, third = check.before
    assert first.state is not None and "slack.message" in first.state
    assert (first.state["slack.message"]["channel"], first.state["slack.message"]["from"]) == (
        "slack_support", "slack_bot")
    assert second == Predicate(all=[Predicate(knows=["ben", "laura.beta_on"]),
                                    Predicate(not_=Predicate(revealed=["laura.workspace"]))])
    assert third == Predicate(any=[Predicate(told=["laura", "ben.workaround"]),
                                   Predicate(message=MessageSelector(from_person="laura"))])


def test_before__problems(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks(
        "  - { id: a, before: [{ called: 'POST /x' }] }\n"
        "  - { id: b, before: [{ called: 'POST x' }, {}, { called: '*', message: { to: ben } }] }\n"
        "  - { id: c, before: [{ all: [] }, { not: { decided: [mike, nope] } }] }\n"))
    assert messages(found) == [
        "checks[0].before: needs at least 2 milestones",
        "checks[1].before[0].called: expected a pattern such as \"POST /api/chat.postMessage\" or \"*\", "
        "got 'POST x'",
        "checks[1].before[1]: a predicate needs a kind",
        "checks[1].before[2]: a predicate has exactly one kind, got called, message",
        "checks[2].before[0].all: needs at least 1 predicate",
        "checks[2].before[1].not.decided[1]: unknown decision nope for mike",
    ]


@pytest.mark.parametrize("kind", ["datadog.monitor", "pagerduty.incident", "okta.user", "github.issue"])
def test_predicates_of_tools_not_in_the_build__not_supported_yet(tmp_path: Path, kind: str) -> None:
    found = problems_of(tmp_path, _checks(f"  - {{ id: a, before: [{{ {kind}: x }}, {{ called: '*' }}] }}\n"),
                        slack_only())
    assert messages(found) == [f"checks[0].before[0].{kind}: not supported yet"]
    assert found[0].hint is not None and "later version" in found[0].hint


def test_within__of_a_milestone_and_default_start(tmp_path: Path) -> None:
    check = _check(tmp_path, "{ id: a, within: { event: { decided: [mike, severity] }, "
                             "of: { message: { to: mike } }, limit: 1h30m } }")
    assert check.within == Within(event=Predicate(decided=["mike", "severity"]),
                                  of=Predicate(message=MessageSelector(to="mike")), limit=5400.0)
    check = _check(tmp_path, "{ id: a, within: { event: { called: '*' }, limit: 10s } }")
    assert check.within is not None and (check.within.of, check.within.limit) == (None, 10.0)


def test_within__problems(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks(
        "  - { id: a, within: { event: { called: '*' }, of: later, limit: 5m } }\n"
        "  - { id: b, within: { event: { knows: [lara, laura.beta_on] }, limit: 0s } }\n"
        "  - { id: c, within: { of: { message: { to: nobody } }, limit: soon } }\n"))
    assert messages(found) == [
        "checks[0].within.of: expected start, or a milestone such as { called: ... }, got 'later'",
        "checks[1].within.event.knows[0]: unknown person lara",
        "checks[1].within.limit: expected a positive duration, got 0",
        "checks[2].within.limit: expected a duration such as 500ms, 10s or 1m30s, got 'soon'",
        "checks[2].within.event: missing required field",
        "checks[2].within.of.message.to: unknown person nobody",
    ]


def test_process_checks__without_people_say_so(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "checks:\n  - { id: a, knows: [laura, laura.x] }\n")
    assert messages(found) == ["checks[0].knows[0]: unknown person laura", "checks[0].knows[1]: unknown person laura"]
    assert found[0].hint == "this scene has no people"


def test_check_kind_hint__lists_every_kind(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, _checks("  - { id: a }\n"))
    assert problem.hint == "kinds: trace, state, judge, revealed, knows, told, decided, message, never, before, within"
