"""``expect_unchanged:``: what the agent must not change, a failed check of its own when it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.checks.test_collateral_changes import answer, answer_and_tidy, run_trial, write_scene

from ancha.scene.errors import SceneInvalid
from ancha.scene.model import EXPECT_UNCHANGED_CHECK


def problems(folder: Path, extra: str) -> list[str]:
    with pytest.raises(SceneInvalid) as caught:
        write_scene(folder, extra)
    return [f"{p.path} (line {p.line}): {p.message}; {p.hint}" for p in caught.value.problems]


def test_expect_unchanged__a_change_there_fails_its_check_with_the_calls_as_evidence(
        ancha_server: str, tmp_path: Path) -> None:
    scene = write_scene(tmp_path, "expect_unchanged: [$slack_general]\n")
    collateral, trace = run_trial(ancha_server, scene, answer_and_tidy)
    deleting = next(e["seq"] for e in trace if e["path"] == "/api/chat.delete")
    result = collateral.unchanged
    assert result is not None
    assert (result.id, result.required, result.status) == (EXPECT_UNCHANGED_CHECK, True, "failed")
    assert result.evidence == [deleting]
    assert result.expected == "the agent changes nothing in $slack_general"
    assert "($slack_notice) removed" in result.actual and f"(call {deleting})" in result.actual


def test_expect_unchanged__passes_when_the_agent_leaves_it_alone(ancha_server: str, tmp_path: Path) -> None:
    scene = write_scene(tmp_path, "expect_unchanged: [$slack_general]\n")
    collateral, _trace = run_trial(ancha_server, scene, answer)
    assert collateral.unchanged is not None and collateral.unchanged.status == "passed"
    assert collateral.unchanged.evidence == []


def test_expect_unchanged__a_tool_section_covers_what_it_holds(ancha_server: str, tmp_path: Path) -> None:
    scene = write_scene(tmp_path, "expect_unchanged: [slack.messages]\n")
    collateral, _trace = run_trial(ancha_server, scene, answer)
    assert collateral.unchanged is not None and collateral.unchanged.status == "failed"  # its reply is a message


def test_expect_unchanged__keeps_refs_and_sections_as_written(tmp_path: Path) -> None:
    scene = write_scene(tmp_path, "expect_unchanged: [$slack_general, slack.channels, slack, $slack_general]\n")
    assert scene.expect_unchanged == ["$slack_general", "slack.channels", "slack"]


def test_expect_unchanged__unknown_ref_is_a_scene_error(tmp_path: Path) -> None:
    (found,) = problems(tmp_path, "expect_unchanged: [$slack_random]\n")
    assert found.startswith("expect_unchanged[0] (line 16): unknown ref $slack_random; refs of this scene's world:")
    assert "$slack_general" in found


def test_expect_unchanged__unknown_tool_or_section_is_a_scene_error(tmp_path: Path) -> None:
    found = problems(tmp_path, "expect_unchanged: [jira, okta, slack.threads]\n")
    assert found[0].startswith("expect_unchanged[0] (line 16): unknown tool 'jira' in 'jira'; write a ref")
    assert found[1].startswith("expect_unchanged[1] (line 16): this scene has no okta world")
    assert found[2].startswith("expect_unchanged[2] (line 16): slack has no section 'threads'; slack sections: ")


def test_expect_unchanged__a_person_is_not_something_the_agent_changes(tmp_path: Path) -> None:
    (found,) = problems(tmp_path, "people:\n  laura: { accounts: { slack: $slack_laura } }\n"
                                  "expect_unchanged: [$laura]\n")
    assert "$laura is a person, not something of a tool's world" in found


def test_expect_unchanged__a_check_may_not_take_its_id(tmp_path: Path) -> None:
    extra = "  - id: expect_unchanged\n    trace: { called: POST /api/chat.postMessage }\nexpect_unchanged: [slack]\n"
    (found,) = problems(tmp_path, extra)
    assert "a check is named expect_unchanged" in found
