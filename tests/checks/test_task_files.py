"""Task files (reference: "Where each kind works"): a JSON list of state and trace checks,
at most 20, validated as a scene's checks are; and ``POST /envs/{id}/checks`` with a bare list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from slack_sdk import WebClient
from task_scene import TASK, write

from ancha.checks.task import TaskInvalid, load_task
from ancha.scene.loading import load_scene
from ancha.world.registry import catalog


def _load(folder: Path, task: Any = None, text: str | None = None) -> Any:
    scene_file, task_file = write(folder, task, text)
    return load_task(task_file, load_scene(scene_file, catalog()))


def _refused(folder: Path, task: Any = None, text: str | None = None) -> TaskInvalid:
    with pytest.raises(TaskInvalid) as caught:
        _load(folder, task, text)
    assert caught.value.exit_code == 2
    return caught.value


def test_task_file__state_and_trace_checks_load_with_refs_resolved(tmp_path: Path) -> None:
    specs = _load(tmp_path)
    assert [s.id for s in specs] == ["answered", "posted"]
    assert specs[0].kind == "state" and specs[1].kind == "trace"
    assert "$slack_support" not in json.dumps(specs[0].model_dump(mode="json"))  # resolved to the world's refs


def test_task_file__unknown_ref_is_located(tmp_path: Path) -> None:
    task = [TASK[1], {"id": "x", "state": {"slack.message": {"channel": "$slack_nope"}}}]
    error = _refused(tmp_path, task)
    [problem] = error.problems
    assert problem.path == "checks[1].state.slack.message.channel"
    assert problem.message == "unknown ref $slack_nope"
    assert problem.line == 2 + len(json.dumps(TASK[1], indent=1).splitlines())  # "[", the first check, then it
    assert "refs of kind channel: $slack_support" in (problem.hint or "")


def test_task_file__judge_check_refused_naming_where_it_works(tmp_path: Path) -> None:
    error = _refused(tmp_path, [TASK[0], {"id": "kind", "judge": "The reply is kind."}])
    [problem] = error.problems
    assert problem.path == "checks[1].judge"
    assert problem.message == ("judge checks do not work in task files "
                               "(playground task files, hosted console tasks)")
    assert problem.hint == ("judge checks work in scene files only (ancha run, ancha check); "
                            "a task holds state and trace checks")
    assert error.render().startswith("error[TASK_INVALID]: ")
    assert f"fix the task file: {tmp_path / 'task.json'}" in error.render()


@pytest.mark.parametrize("check", [{"told": ["laura", "the workaround"]}, {"never": {"text_contains": ["x"]}},
                                   {"before": [{"called": "* /a"}, {"called": "* /b"}]}])
def test_task_file__process_checks_refused(tmp_path: Path, check: dict[str, Any]) -> None:
    [kind] = check
    error = _refused(tmp_path, [{"id": "p", **check}, *TASK])
    [problem] = error.problems
    assert problem.path == f"checks[0].{kind}"
    assert problem.message == (f"{kind} is a process check; process checks do not work in task files "
                               "(playground task files, hosted console tasks)")
    assert (problem.hint or "").startswith("process checks work in scene files only (ancha run, ancha check)")


def test_task_file__twenty_checks_load_and_a_21st_is_refused(tmp_path: Path) -> None:
    checks = [{"id": f"c{i}", "trace": {"called": "* /api/chat.postMessage"}} for i in range(21)]
    assert len(_load(tmp_path, checks[:20])) == 20
    error = _refused(tmp_path, checks)
    [problem] = error.problems
    assert problem.path == "checks[20]"
    assert problem.message == "a playground task holds at most 20 checks, this one has 21"


def test_task_file__every_problem_reported_at_once_numbered_as_written(tmp_path: Path) -> None:
    task = [{"id": "kind", "judge": "Kind."}, {"id": "x", "trace": {"called": "nonsense"}}, TASK[0]]
    error = _refused(tmp_path, task)
    assert [p.path for p in error.problems] == ["checks[0].judge", "checks[1].trace.called"]


def test_task_file__bad_json_located(tmp_path: Path) -> None:
    error = _refused(tmp_path, text='[\n  {"id": "a",\n   "trace": }\n]\n')
    [problem] = error.problems
    assert problem.line == 3
    assert problem.message == "not valid JSON (column 13): Expecting value"
    assert error.render().startswith(f"error[TASK_INVALID]: {tmp_path / 'task.json'}:3: not valid JSON")


def test_task_file__must_be_a_list(tmp_path: Path) -> None:
    error = _refused(tmp_path, {"checks": TASK})
    assert error.problems[0].message == "a task is a JSON list of check objects"


def _scene_env(make_env: Any, tmp_path: Path) -> dict[str, Any]:
    scene_file, _ = write(tmp_path)
    scene = load_scene(scene_file, catalog())
    scene_json: dict[str, Any] = scene.model_dump(mode="json", by_alias=True)
    return make_env(scene_json)  # type: ignore[no-any-return]


def test_post_checks__bare_list_graded_with_the_list_not_the_scenes(make_env: Any, ancha_server: str,
                                                                     tmp_path: Path) -> None:
    context = _scene_env(make_env, tmp_path)
    slack = context["tools"]["slack"]
    agent = WebClient(token=slack["token"], base_url=slack["url"] + "/api/")
    support = next(c["id"] for c in agent.conversations_list()["channels"] if c["name"] == "support")
    question = agent.conversations_history(channel=support)["messages"][0]["ts"]
    agent.chat_postMessage(channel=support, thread_ts=question, text="Exports are back.")

    answer = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", json=TASK, timeout=30)
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert [(r["id"], r["passed"], r["required"]) for r in results] == [("answered", True, True),
                                                                       ("posted", True, True)]

    failing = [{"id": "never_posted", "trace": {"not_called": "* /api/chat.postMessage"}}]
    answer = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", json=failing, timeout=30)
    [result] = answer.json()["results"]
    assert result["id"] == "never_posted" and not result["passed"] and result["required"]


@pytest.mark.parametrize(("body", "named"), [
    ([{"id": "kind", "judge": "Kind."}], "checks[0].judge: judge checks do not work in task files"),
    ([{"id": "x", "state": {"slack.message": {"channel": "$slack_nope"}}}],
     "checks[0].state.slack.message.channel: unknown ref $slack_nope"),
    ([{"id": f"c{i}", "trace": {"called": "*"}} for i in range(21)],
     "checks[20]: a playground task holds at most 20 checks"),
    ("just text", "send a JSON list of check objects"),
])
def test_post_checks__bare_list_that_fails_validation_is_a_400(make_env: Any, ancha_server: str, tmp_path: Path,
                                                               body: Any, named: str) -> None:
    context = _scene_env(make_env, tmp_path)
    answer = httpx.post(f"{ancha_server}/envs/{context['env_id']}/checks", json=body, timeout=30)
    assert answer.status_code == 400
    assert named in answer.json()["error"]
