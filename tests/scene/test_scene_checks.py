from __future__ import annotations

from pathlib import Path

import pytest
from scene_files import SLACK, messages, problems_of, scene_of, slack_only

from ancha.errors import Problem


def hints(problems: list[Problem]) -> list[str | None]:
    return [p.hint for p in problems]


def _checks(body: str) -> str:
    return SLACK + "checks:\n" + body


@pytest.mark.parametrize("kind", ["datadog.monitor", "datadog.downtime", "pagerduty.incident", "okta.user",
                                  "github.pull"])
def test_state_kinds_of_tools_not_in_the_build__not_supported_yet(tmp_path: Path, kind: str) -> None:
    found = problems_of(tmp_path, _checks(f"  - id: a\n    state: {{ {kind}: x, status: resolved }}\n"), slack_only())
    assert messages(found) == [f"checks[0].state.{kind}: not supported yet"]


def test_check_kinds__exactly_one(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - id: a\n  - id: b\n    judge: x\n    trace: {called: '*'}\n"))
    assert messages(found) == ["checks[0]: a check needs a kind",
                               "checks[1]: a check has exactly one kind, got trace, judge"]


def test_check_id__empty_is_refused_and_kept_out_of_the_id_list(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - { id: '', judge: x }\n  - { id: ' ', judge: x }\n"
                                          "  - { id: a, judge: y }\npass: [b]\n"))
    assert messages(found) == ["checks[0].id: a check id cannot be empty", "checks[1].id: a check id cannot be empty",
                               "pass[0]: unknown check id b"]
    assert hints(found)[-1] == "check ids: a"


@pytest.mark.parametrize("where", ["trace: { called: '{p}' }", "trace: { not_called: ['*', '{p}'] }",
                                   "before: [{ called: '{p}' }, { called: '*' }]"])
def test_call_pattern__a_query_string_is_refused_at_validation(tmp_path: Path, where: str) -> None:
    pattern = "GET /api/conversations.history?channel=*"
    found = problems_of(tmp_path, _checks(f"  - id: a\n    {where.replace('{p}', pattern)}\n"))
    assert [m.split(": ", 1)[1] for m in messages(found)] == [
        f"a pattern matches the path only, not the query string: got {pattern!r}"]
    assert 'write "GET /api/conversations.history"' in hints(found)[0]


def test_check_id__required_and_unique(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - judge: x\n  - { id: a, judge: x }\n  - { id: a, judge: y }\n"))
    assert messages(found) == ["checks[0].id: missing required field", "checks[2].id: duplicate check id a"]


def test_trace__called_string_or_list_and_not_called(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _checks(
        "  - { id: a, trace: { called: 'GET /x', status: any } }\n"
        "  - { id: b, trace: { called: ['get /a/*', '* /b'], not_called: 'DELETE /crm/*' } }\n"
        "  - { id: c, trace: { not_called: '*' } }\n"))
    traces = [c.trace for c in scene.checks]
    assert [(t.called, t.not_called, t.status) for t in traces if t] == [
        (["GET /x"], [], "any"), (["get /a/*", "* /b"], ["DELETE /crm/*"], None), ([], ["*"], None)]


def test_trace__bad_patterns_and_rules(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks(
        "  - { id: a, trace: { called: ['GET x', 'POST /ok', 'G3T /x'] } }\n"
        "  - { id: b, trace: { status: any } }\n"
        "  - { id: c, trace: { not_called: '*', status: any } }\n"
        "  - { id: d, trace: { called: '*', status: some } }\n"))
    assert messages(found) == [
        "checks[0].trace.called[0]: expected a pattern such as \"POST /api/chat.postMessage\" or \"*\", got 'GET x'",
        "checks[0].trace.called[2]: expected a pattern such as \"POST /api/chat.postMessage\" or \"*\", got 'G3T /x'",
        "checks[1].trace: needs called or not_called",
        "checks[2].trace.status: only applies with called",
        "checks[3].trace.status: expected one of any, got 'some'",
    ]


def test_state__slack_message_defaults_and_count(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _checks(
        "  - id: a\n    state:\n      slack.message: { channel: $slack_support, text_contains: Exports }\n"
        "  - id: b\n    state:\n      slack.message: { channel: $slack_support, count_gte: 3 }\n"))
    assert [c.state for c in scene.checks] == [
        {"slack.message": {"channel": "slack_support", "text_contains": "Exports", "count_gte": 1}},
        {"slack.message": {"channel": "slack_support", "count_gte": 3}}]


def test_state__problems(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks(
        "  - { id: a, state: {} }\n"
        "  - { id: b, state: { slack.message: { from: $slack_bot, count_gte: 0 } } }\n"))
    assert messages(found) == [
        "checks[0].state: needs a state kind",
        "checks[1].state.slack.message.count_gte: expected a positive integer, got 0",
        "checks[1].state.slack.message.channel: missing required field",
    ]


def test_pass__unknown_ids_list_check_ids(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - { id: a, judge: x }\n  - { id: b, judge: y }\npass: [a, zz]\n"))
    assert messages(found) == ["pass[1]: unknown check id zz"]
    assert found[0].hint == "check ids: a, b"


def test_judge__accepted_as_string(tmp_path: Path) -> None:
    scene = scene_of(tmp_path, _checks("  - { id: a, judge: The reply helps. }\n"))
    assert scene.checks[0].judge == "The reply helps." and scene.checks[0].kind == "judge"


def test_invalid_check_item__later_checks_keep_their_index(tmp_path: Path) -> None:
    found = problems_of(tmp_path, _checks("  - 1\n  - { id: b }\n"))
    assert messages(found) == ["checks[0]: expected a mapping, got 1", "checks[1]: a check needs a kind"]
